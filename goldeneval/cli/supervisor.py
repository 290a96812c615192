"""A parent process that outlives plug-ins: ``os._exit()`` cannot fake success.

Retriever plug-ins run inside the ``goldeneval`` process.  Python can catch ``sys.exit()``
in a plug-in, but not ``os._exit(0)`` or a crash of native code: the process ends, with
status 0 if the plug-in says so, and a CI gate would read success for a run that was never
stored.  So the console command forks: the child runs the command and, once the command
has finished by any normal path (including every documented error), reports its exit code
through a pipe; the parent waits and

* exits with the reported code when there is one;
* exits 128 + N when the child was killed by signal N (137 for SIGKILL, 130 for SIGINT);
* otherwise (the child ended without reporting: ``os._exit`` inside a plug-in) prints one
  line and exits :data:`UNFINISHED_EXIT`, never 0.

Signals sent to the parent (``kill``, a CI runner's cancel) are forwarded to the child; a
Ctrl-C reaches both through the terminal's process group, and a run the parent saw
interrupted never exits 0 unless it had finished.  The store's transactions already
guarantee that an unfinished run leaves nothing behind; this guarantees the exit code.

Where ``os.fork`` does not exist (Windows) the command runs unsupervised.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Callable
from contextlib import suppress
from types import FrameType
from typing import NoReturn

__all__ = ["DISABLE_ENV", "UNFINISHED_EXIT", "run_supervised"]

UNFINISHED_EXIT = 3
"""The exit code of a command whose process ended inside a plug-in (README, "Exit codes")."""
DISABLE_ENV = "GOLDENEVAL_NO_SUPERVISOR"
"""Set to 1 to run in one process (a debugger, a profiler)."""
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_SIGINT_GRACE_S = 0.5


def run_supervised(command: Callable[[], int], describe: str = "goldeneval") -> NoReturn:
    """Run ``command`` (which returns an exit code) in a forked child and exit with the code
    it reports; see the module docstring for what happens when it reports none."""
    if not hasattr(os, "fork") or os.environ.get(DISABLE_ENV) == "1":
        sys.exit(command())
    sys.stdout.flush()
    sys.stderr.flush()
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child (covered by subprocess tests)
        os.close(read_end)
        _child(command, write_end)
    os.close(write_end)
    sys.exit(_parent(pid, read_end, describe))


def _child(command: Callable[[], int], write_end: int) -> NoReturn:  # pragma: no cover - child
    try:
        code = command()
    except SystemExit as exc:
        code = _code_of(exc)
    except KeyboardInterrupt:
        code = 128 + signal.SIGINT
    # Report before the interpreter's own shutdown (atexit handlers, flushing): the command
    # has finished, whatever happens next.
    os.write(write_end, str(code).encode())
    os.close(write_end)
    sys.exit(code)


def _code_of(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _parent(pid: int, read_end: int, describe: str) -> int:
    interrupted: list[int] = []

    def forward(signum: int, _frame: FrameType | None) -> None:
        interrupted.append(signum)
        if signum == signal.SIGINT:
            # A terminal's Ctrl-C reaches the child too; forward only if it is still running
            # a moment later (the signal was sent to this process alone), so that the child
            # is not interrupted a second time while it winds down.
            signal.setitimer(signal.ITIMER_REAL, _SIGINT_GRACE_S)
            return
        with suppress(ProcessLookupError):
            os.kill(pid, signum)

    def forward_late_sigint(_signum: int, _frame: FrameType | None) -> None:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGINT)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    signal.signal(signal.SIGALRM, forward_late_sigint)
    report = b""
    while chunk := _read(read_end):
        report += chunk
    os.close(read_end)
    status = _wait(pid)
    signal.setitimer(signal.ITIMER_REAL, 0)  # a pending late SIGINT must not outlive the child
    if report:
        code = int(report)
        if interrupted and code != 0:
            return 128 + interrupted[0]
        return code
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    child_code = os.waitstatus_to_exitcode(status)
    sys.stderr.write(
        f"goldeneval: error: {describe} ended inside a plug-in (os._exit({child_code}) or a native crash) "
        "before the command finished; no complete run was stored by it\n"
    )
    return UNFINISHED_EXIT


def _read(fd: int) -> bytes:
    while True:
        try:
            return os.read(fd, 64)
        except InterruptedError:  # pragma: no cover - PEP 475 retries, but be explicit
            continue


def _wait(pid: int) -> int:
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return status
        except ChildProcessError:  # pragma: no cover - reaped elsewhere
            return 0
        except InterruptedError:  # pragma: no cover
            continue
