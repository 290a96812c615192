"""Commands import what they need when they need it: ``--help`` and ``runs`` pay for neither
scipy (a comparison's statistics), numba (the lexical index), torch (the dense models) nor
Dagster.  A behaviour, asserted on the modules a fresh interpreter loaded, not a timing."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import click
import pytest

from goldeneval.cli import main
from goldeneval.cli.app import COMMANDS

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


def probe(args: list[str], cwd: Path, modules: tuple[str, ...] = HEAVY) -> tuple[list[str], str]:
    """Which of ``modules`` a fresh interpreter holds after running the command in-process,
    and what the command printed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLDENEVAL_")}
    env["GOLDENEVAL_NO_SUPERVISOR"] = "1"
    result = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(modules), *args],
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
    return loaded, result.stdout


def heavy_modules_after(args: list[str], cwd: Path) -> list[str]:
    """The heavy modules a fresh interpreter holds after running the command in-process."""
    return probe(args, cwd)[0]


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


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_lexical_run_imports_bm25s_without_numba_or_scipy(tmp_path: Path) -> None:
    """bm25s imports numba and scipy whenever they are installed (the test extra installs numba)
    for backends goldeneval never selects; the lexical run hides them
    (goldeneval.core.text.bm25s_module) and still scores every question."""
    pytest.importorskip("numba", reason="numba is what this test proves is not imported")
    store = tmp_path / "r.duckdb"
    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--no-progress"]
    args += ["--store", str(store), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    loaded, out = probe(args, Path(__file__).resolve().parents[1])
    assert "bm25s" in loaded and "numba" not in loaded and "scipy" not in loaded, loaded
    assert json.loads(out)["run"]["questions"] == 81


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_hiding_numba_and_scipy_from_bm25s_leaves_them_importable_and_no_finder_behind() -> None:
    pytest.importorskip("numba", reason="numba is what bm25s is kept from importing")
    script = (
        "import sys, threading\n"
        "from goldeneval.core.text import bm25s_module\n"
        "bm25s = bm25s_module()\n"
        "assert 'numba' not in sys.modules and not bm25s.NUMBA_AVAILABLE\n"
        "assert 'scipy' not in sys.modules and bm25s.BM25().csc_backend == 'numpy'\n"
        "assert not [f for f in sys.meta_path if type(f).__name__ == '_RefuseImportsHere']\n"
        "model = bm25s.BM25(csc_backend='scipy')  # a plug-in asking bm25s for scipy still gets it\n"
        "model.index(bm25s.tokenize(['a cat sat', 'a dog ran'], show_progress=False), show_progress=False)\n"
        "assert 'scipy.sparse' in sys.modules\n"
        "import numba\n"
        "print('ok', numba.__name__)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False)
    assert result.stdout.strip() == "ok numba", result.stderr


COMMAND_MODULES = sorted({entry.target.partition(":")[0] for entry in COMMANDS.values()})
DOMAIN = ("duckdb", "pyarrow", "numpy", "goldeneval.retrieval", "goldeneval.prompts", "goldeneval.store")


def test_help_imports_no_command_module_and_nothing_of_the_domain(tmp_path: Path) -> None:
    """``goldeneval --help`` lists every command from :data:`COMMANDS` alone: no command
    family, no store, no array library is imported for it."""
    loaded, printed = probe(["--help"], tmp_path, (*COMMAND_MODULES, *DOMAIN))
    assert "Commands:" in printed
    assert all(f"  {name} " in printed for name in COMMANDS)
    assert loaded == []


RUN_HELP_HEAVY = ("duckdb", "numpy", "pyarrow", "pandas", "dagster", "torch", "scipy")
"""What ``goldeneval retrieval --help`` must not import: its options are declared by light
modules (goldeneval.retrieval.settings, goldeneval.core.gate), the run's machinery waits for a run."""


def test_retrieval_help_imports_no_store_array_library_or_framework(tmp_path: Path) -> None:
    """Issue 44: ``goldeneval retrieval --help`` shows every option of a run without importing
    the store (DuckDB), the scoring (numpy, pyarrow), pandas, Dagster or torch."""
    loaded, printed = probe(["retrieval", "--help"], tmp_path, RUN_HELP_HEAVY)
    assert "--max-top1-drop" in printed and "--store" in printed and "--hit-k" in printed
    assert loaded == []


def test_the_retrieval_help_probe_sees_the_store_when_it_is_imported(tmp_path: Path) -> None:
    """The check above can fail: the same probe, with the store imported first, sees DuckDB."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLDENEVAL_")}
    env["GOLDENEVAL_NO_SUPERVISOR"] = "1"
    script = "from goldeneval.store import ResultStore\n" + PROBE
    result = subprocess.run(
        [sys.executable, "-c", script, json.dumps(RUN_HELP_HEAVY), "retrieval", "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert '"duckdb"' in result.stderr and '"numpy"' in result.stderr, result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_command_imports_its_own_family_only(tmp_path: Path) -> None:
    """``goldeneval schema`` (retrieval's family) loads neither the answers nor the judgments commands."""
    assert probe(["schema"], tmp_path, tuple(COMMAND_MODULES))[0] == ["goldeneval.cli.retrieval"]


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_summary_is_the_first_paragraph_of_the_commands_own_help(name: str) -> None:
    """The summary ``--help`` shows without importing a command is that command's own words."""
    command = COMMANDS[name].load()
    first_paragraph = (command.help or "").split("\n\n")[0]
    assert " ".join(COMMANDS[name].summary.split()) == " ".join(first_paragraph.split())


def test_the_group_lists_exactly_the_commands_the_modules_define() -> None:
    """Every top-level click command a family module defines (not a subcommand of one of its
    groups) is reachable by its name, and no more."""
    defined: list[click.Command] = []
    for module_name in COMMAND_MODULES:
        module = importlib.import_module(module_name)
        defined += [
            value
            for value in vars(module).values()
            if isinstance(value, click.Command) and getattr(value.callback, "__module__", None) == module_name
        ]
    nested = {id(sub) for group in defined if isinstance(group, click.Group) for sub in group.commands.values()}
    top_level = {command.name for command in defined if id(command) not in nested}
    assert all(COMMANDS[name].load().name == name for name in COMMANDS)
    assert set(COMMANDS) == top_level
    ctx = click.Context(main)
    assert main.list_commands(ctx) == sorted(COMMANDS)
