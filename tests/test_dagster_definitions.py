"""The code location loads as `dagster dev` and `dg dev` load it: validated by both CLIs."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipelines.config import PROJECT_DIR

BIN = Path(sys.executable).parent


def _run(*command: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "VIRTUAL_ENV": str(BIN.parent), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GOLDENEVAL_CONFIG", None)
    env.pop("DAGSTER_HOME", None)
    return subprocess.run(
        [str(BIN / command[0]), *command[1:]],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
def test_dagster_definitions_validate_passes_on_the_workspace() -> None:
    result = _run("dagster", "definitions", "validate", "-w", "workspace.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "All code locations passed validation." in result.stdout + result.stderr


@pytest.mark.slow
def test_dg_check_defs_passes_on_the_project() -> None:
    result = _run("dg", "check", "defs")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "All definitions loaded successfully." in result.stdout + result.stderr
