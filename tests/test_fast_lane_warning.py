"""The fast lane's warning (README: "it warns about unmarked ones over 3 s"): ``--list-unmarked-slow``
lists the tests not marked slow that took longer than the limit, and never fails the run."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SAMPLE = """
import time
import pytest

def test_quick():
    pass

def test_unmarked_and_long():
    time.sleep(0.3)

@pytest.mark.slow
def test_marked_and_long():
    time.sleep(0.3)
"""


@pytest.mark.slow  # a pytest process of its own: 2-3 s
def test_unmarked_tests_over_the_limit_are_listed_and_the_run_still_passes(tmp_path: Path) -> None:
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q", "-n", "0"]
    command += ["--rootdir", str(tmp_path), "-W", "ignore::pytest.PytestUnknownMarkWarning"]
    command += ["--list-unmarked-slow=0.2", str(tmp_path / "test_sample.py")]
    result = subprocess.run(
        command,
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "1 test not marked slow took over 0.2 s" in result.stdout, result.stdout
    assert "test_sample.py::test_unmarked_and_long" in result.stdout
    assert "test_marked_and_long" not in result.stdout.split("not marked slow took over")[1]
    assert "test_quick" not in result.stdout.split("not marked slow took over")[1]
