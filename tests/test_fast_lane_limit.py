"""The fast lane's limit (docs/testing.md): with ``--unmarked-slow-limit=CPU_SECONDS`` a test not
marked slow or e2e that took more processor time than the limit (its process and the child
processes it waited for; setup, call and teardown) fails the run, named, even when every test
passed; a marked one does not, and neither does one that only waits (a sleep costs no
processor time, so a loaded machine cannot fail the lane)."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

SAMPLE = """
import subprocess
import sys
import time
import pytest

BURN = "import time\\nstarted = time.process_time()\\nwhile time.process_time() - started < 0.4: pass"

def burn():
    exec(BURN)

def test_quick():
    pass

def test_waits_without_working():
    time.sleep(0.5)

def test_unmarked_and_busy():
    burn()

def test_unmarked_and_its_child_busy():
    subprocess.run([sys.executable, "-c", BURN], check=True)

@pytest.mark.slow
def test_marked_and_busy():
    burn()
"""


def _lane(tmp_path: Path, *options: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_sample.py").write_text(SAMPLE, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "pytest", "-p", "tests.conftest", "-p", "no:cacheprovider", "-q", "-n", "0"]
    command += ["--rootdir", str(tmp_path), "-W", "ignore::pytest.PytestUnknownMarkWarning", *options]
    command.append(str(tmp_path / "test_sample.py"))
    return subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300, check=False)


@pytest.mark.slow  # a pytest process of its own that burns processor time on purpose
def test_an_unmarked_test_over_the_limit_fails_the_lane_and_is_named(tmp_path: Path) -> None:
    result = _lane(tmp_path, "--unmarked-slow-limit=0.3")
    assert result.returncode == pytest.ExitCode.TESTS_FAILED, result.stdout + result.stderr
    assert "5 passed" in result.stdout  # every test passed: the limit alone fails the run
    listed = result.stdout.split("not marked slow took over 0.3 s of processor time")[1]
    assert "FAILED: 2 tests not marked slow" in result.stdout, result.stdout
    assert "test_sample.py::test_unmarked_and_busy" in listed
    assert "test_sample.py::test_unmarked_and_its_child_busy" in listed  # a child's time counts
    for spared in ("test_marked_and_busy", "test_waits_without_working", "test_quick"):
        assert spared not in listed


@pytest.mark.slow  # a pytest process of its own
def test_without_the_limit_or_under_it_the_run_passes(tmp_path: Path) -> None:
    assert _lane(tmp_path).returncode == pytest.ExitCode.OK
    result = _lane(tmp_path, "--unmarked-slow-limit=30")
    assert result.returncode == pytest.ExitCode.OK, result.stdout + result.stderr
    assert "not marked slow" not in result.stdout


CLOCKS = {"monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "time", "time_ns"}
"""The wall clocks of the ``time`` module (``thread_time`` and ``process_time`` are processor time)."""


def _is_clock_call(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    function = node.func
    if isinstance(function, ast.Attribute):
        return function.attr in CLOCKS and isinstance(function.value, ast.Name) and function.value.id == "time"
    return isinstance(function, ast.Name) and function.id in {"monotonic", "perf_counter"}


def _durations_asserted(tree: ast.AST) -> list[int]:
    """Lines of the asserts that compare a duration: a subtraction of two wall-clock reads (a
    call, or a name bound to one), or a name bound to such a subtraction.  A deadline (a read
    plus or minus a constant) is not a duration."""
    clock_names: set[str] = set()
    duration_names: set[str] = set()

    def reads_clock(node: ast.AST) -> bool:
        return any(_is_clock_call(n) or (isinstance(n, ast.Name) and n.id in clock_names) for n in ast.walk(node))

    def is_duration(node: ast.AST) -> bool:
        for n in ast.walk(node):
            if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Sub) and reads_clock(n.left) and reads_clock(n.right):
                return True
            if isinstance(n, ast.Name) and n.id in duration_names:
                return True
        return False

    for node in ast.walk(tree):  # the names first, wherever they are bound
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if any(_is_clock_call(n) for n in ast.walk(node.value)) and not isinstance(node.value, ast.BinOp):
                clock_names |= names
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and is_duration(node.value):
            duration_names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Assert) and is_duration(node.test)]


def test_no_test_asserts_a_wall_clock_duration() -> None:
    """docs/testing.md: no test compares a measured wall-clock duration (it passes alone and goes
    red under load); waiting for something up to a deadline (a guard) is not a duration."""
    sources = {path: path.read_text(encoding="utf-8") for path in sorted((REPO / "tests").glob("*.py"))}
    found = [
        f"{path.relative_to(REPO)}:{line}"
        for path, source in sources.items()
        if any(read in source for read in ("monotonic", "perf_counter", "time.time"))  # may read a clock
        for line in _durations_asserted(ast.parse(source))
    ]
    assert found == []


def test_the_guard_finds_the_durations_it_forbids() -> None:
    forbidden = """
import time
started = time.monotonic()
work()
elapsed = time.monotonic() - started
assert elapsed < 2.0
assert time.perf_counter() - started < 3
"""
    allowed = """
import time
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
    assert process.poll() is None and time.monotonic() < deadline
assert wait_until(pid, time.monotonic() - 1) is None
started = time.thread_time()
assert time.thread_time() - started < 60
"""
    assert _durations_asserted(ast.parse(forbidden)) == [6, 7]
    assert _durations_asserted(ast.parse(allowed)) == []


def test_the_lanes_are_described_once_and_the_fast_lane_uses_the_documented_limit() -> None:
    """scripts/test.sh, scripts/slow-tests.sh and the markers point to docs/testing.md, and the
    limit the fast lane runs with is the one the page states."""
    page = (REPO / "docs" / "testing.md").read_text(encoding="utf-8")
    test_sh = (REPO / "scripts" / "test.sh").read_text(encoding="utf-8")
    limit = re.search(r"--unmarked-slow-limit=(\d+(?:\.\d+)?)", test_sh)
    assert limit is not None
    assert f"**{limit[1]} s of\nprocessor time** each (`--unmarked-slow-limit={limit[1]}`)" in page
    assert f"\nlimit={limit[1]}\n" in (REPO / "scripts" / "slow-tests.sh").read_text(encoding="utf-8")
    for pointer in (test_sh, (REPO / "scripts" / "slow-tests.sh").read_text(encoding="utf-8")):
        assert "docs/testing.md" in pointer
    assert "The lanes and what each marker means: docs/testing.md." in (REPO / "pyproject.toml").read_text()
