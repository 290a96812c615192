"""The supervised child ends as the interpreter would, less its module teardown: a plug-in's
non-daemon thread is waited for, its atexit handlers run and its output is whole; the exit
code is the command's."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

from goldeneval.cli import ExitCode
from tests.conftest import CliWorkspace

FINISHING_PLUGIN = textwrap.dedent(
    """
    import atexit
    import sys
    import threading
    import time


    class Answers:
        def retrieve(self, question, limit):
            return ["a"]


    def late_words():
        # After the run, whatever the machine's load: the main thread is stopped when the
        # interpreter (or the supervised child, as it) begins to wait for threads like this one.
        while threading.main_thread().is_alive():
            time.sleep(0.01)
        time.sleep(0.2)
        print("thread: done after the run", flush=False)


    def build(context):
        atexit.register(lambda: sys.stderr.write("atexit: ran\\n"))
        threading.Thread(target=late_words, name="finishing").start()
        return Answers()
    """
)


@pytest.mark.slow  # a real goldeneval process
def test_a_plugins_thread_and_atexit_handler_finish_before_the_child_ends(cli_workspace: CliWorkspace) -> None:
    (cli_workspace.root / "finishing_plugin.py").write_text(FINISHING_PLUGIN)
    command = [sys.executable, "-m", "goldeneval.cli", "retrieval", "--set", str(cli_workspace.set_path)]
    command += ["--retriever", "finishing_plugin:build", "--store", str(cli_workspace.store), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(cli_workspace.root)}
    env.pop("GOLDENEVAL_NO_SUPERVISOR", None)
    result = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == ExitCode.OK, result.stderr
    assert "Regression verdict: unknown" in result.stdout  # the plug-in declares no provenance
    assert result.stdout.rstrip().endswith("thread: done after the run")  # waited for, and flushed
    assert result.stderr.splitlines()[-1] == "atexit: ran"
    assert "goldeneval: warning" not in result.stderr


def _ending_child(code: int) -> subprocess.Popen[bytes]:
    """A child that ends with ``code`` a little later, as the supervised child does once it has
    reported (its threads and atexit handlers still to finish)."""
    return subprocess.Popen([sys.executable, "-c", f"import time; time.sleep(0.3); raise SystemExit({code})"])


def _reaped(child: subprocess.Popen[bytes], status: int | None) -> int | None:
    """The exit code of a child the supervisor reaped, told to its ``Popen`` (which would
    otherwise warn, when collected, that it is still running)."""
    code = None if status is None else os.waitstatus_to_exitcode(status)
    child.returncode = code
    return code


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux's")
def test_the_parent_wakes_when_the_child_ends_not_at_its_next_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every command waits on this: the child has reported, its end is what the parent waits for."""
    from goldeneval.cli import supervisor

    def no_polling(seconds: float) -> None:
        raise AssertionError(f"polled ({seconds} s) where a pidfd says when the child ends")

    monkeypatch.setattr(time, "sleep", no_polling)
    child = _ending_child(3)
    assert _reaped(child, supervisor._wait_until(child.pid, time.monotonic() + 60)) == 3


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="pidfds are Linux's")
def test_a_child_ended_but_not_yet_reapable_is_polled_for_not_spun_on(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a tracer (strace -f, gdb) the child's pidfd says it ended before the parent can
    reap it, and stays readable: the parent polls then, rather than selecting again at once."""
    from goldeneval.cli import supervisor

    real_reap, real_select = supervisor._reap, select.select
    refused: list[int] = []
    selects: list[float] = []

    def traced(pid: int) -> int | None:
        if selects and len(refused) < 6:  # after the wait for the pidfd: ended, not yet reapable
            refused.append(pid)
            return None
        return real_reap(pid)

    def counted(*args: Any) -> Any:
        selects.append(args[3])
        return real_select(*args)

    monkeypatch.setattr(supervisor, "_reap", traced)
    monkeypatch.setattr(select, "select", counted)
    child = _ending_child(5)
    assert _reaped(child, supervisor._wait_until(child.pid, time.monotonic() + 60)) == 5
    assert len(refused) == 6 and len(selects) == 1  # one wait for the pidfd, then polls


def test_without_a_pidfd_the_parent_polls_a_millisecond_apart_at_first(monkeypatch: pytest.MonkeyPatch) -> None:
    from goldeneval.cli import supervisor

    pauses: list[float] = []
    real_sleep = time.sleep

    def recorded(seconds: float) -> None:
        pauses.append(seconds)
        real_sleep(seconds)

    monkeypatch.setattr(supervisor, "_pidfd", lambda pid: None)
    monkeypatch.setattr(time, "sleep", recorded)
    child = _ending_child(4)
    assert _reaped(child, supervisor._wait_until(child.pid, time.monotonic() + 60)) == 4
    assert pauses[:3] == [0.001, 0.002, 0.004]
    assert max(pauses) <= supervisor._POLL_S
    # and at a deadline that has passed: no status, no wait
    late = _ending_child(0)
    assert supervisor._wait_until(late.pid, time.monotonic() - 1) is None
    late.wait()
