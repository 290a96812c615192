"""Commands import what they need when they need it: ``--help`` and ``runs`` pay for neither
scipy (a comparison's statistics), numba (the lexical index), torch (the dense models) nor
Dagster.  A behaviour, asserted on the modules a fresh interpreter loaded, not a timing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("scipy", "numba", "torch", "sentence_transformers", "bm25s", "dagster")

PROBE = """
import json, sys
from goldeneval.cli import main
try:
    main(sys.argv[2:])
except SystemExit:
    pass
loaded = sorted(name for name in json.loads(sys.argv[1]) if name in sys.modules)
print("HEAVY=" + json.dumps(loaded), file=sys.stderr)
"""


def heavy_modules_after(args: list[str], cwd: Path) -> list[str]:
    """The heavy modules a fresh interpreter holds after running the command in-process."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLDENEVAL_")}
    env["GOLDENEVAL_NO_SUPERVISOR"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(HEAVY), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    lines = [line for line in result.stderr.splitlines() if line.startswith("HEAVY=")]
    assert lines, result.stderr
    loaded: list[str] = json.loads(lines[-1].removeprefix("HEAVY="))
    return loaded


def test_help_imports_no_heavy_module(tmp_path: Path) -> None:
    assert heavy_modules_after(["--help"], tmp_path) == []


@pytest.mark.slow
def test_runs_imports_no_heavy_module(tmp_path: Path) -> None:
    store = tmp_path / "results.duckdb"
    command = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical"]
    stored = subprocess.run(
        [sys.executable, "-m", "goldeneval.cli", *command, "--store", str(store), "--no-progress"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert stored.returncode == 0, stored.stderr
    assert heavy_modules_after(["runs", "--store", str(store)], tmp_path) == []


@pytest.mark.slow  # a command that imports the model stack: 10 s
def test_the_probe_sees_a_heavy_module_a_command_imports(tmp_path: Path) -> None:
    """The check can fail: ``schema`` imports nothing heavy, but a probe that imports scipy
    itself is seen."""
    assert heavy_modules_after(["schema"], tmp_path) == []
    env = {**os.environ, "GOLDENEVAL_NO_SUPERVISOR": "1"}
    result = subprocess.run(
        [sys.executable, "-c", "import scipy.stats\n" + PROBE, json.dumps(HEAVY), "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert 'HEAVY=["scipy"]' in result.stderr
