"""A parent process that outlives plug-ins: ``os._exit()`` cannot fake success.

Retriever plug-ins run inside the ``goldeneval`` process.  Python can catch ``sys.exit()``
in a plug-in, but not ``os._exit(0)`` or a crash of native code: the process ends, with
status 0 if the plug-in says so, and a CI gate would read success for a run that was never
stored.  So the console command forks: the child runs the command and, once the command
has finished by any normal path (including every documented error), flushes its output and
reports its exit code through a pipe; the parent waits and

* exits with the reported code when there is one;
* exits 128 + N when the child was ended by signal N before reporting (139 for a native
  crash, SIGSEGV; 137 for SIGKILL), printing one line that names the signal;
* otherwise (the child ended without reporting: ``os._exit`` inside a plug-in) prints one
  line and exits :data:`UNFINISHED_EXIT`, never 0.

An exception nothing converted (a bug) is no plug-in ending the process: the child prints
its traceback, for a bug report, then one line naming it, and reports
:data:`UNFINISHED_EXIT`.

Once it has reported, the child ends as the interpreter would (non-daemon threads waited for,
atexit handlers run) but skips the module teardown (:func:`_exit_without_teardown`); so does
the parent once it has its exit code, so that no command, ``--help`` included, waits on
two teardowns of the modules it imported.

Once the code is reported (or the child has ended), nothing the run left behind is waited
for longer than :data:`LEFTOVER_GRACE_S`: a non-daemon thread that never ends (the child's
interpreter would wait for it forever) or a process a plug-in forked (it holds the report
pipe and the terminal's output) is killed after the grace, with one warning line.  On Linux
the parent is the child subreaper of everything the child starts, so forked and daemonised
descendants are found and ended too; elsewhere they are only no longer waited for.

The child never outlives the parent: on Linux it asks the kernel for SIGKILL when the parent
dies (the parent-death signal, ``PR_SET_PDEATHSIG``), so ``kill -9`` of the ``goldeneval``
process ends the command too (a ``goldeneval judge`` server stops listening; a run being
written is rolled back whole) instead of leaving it running, orphaned.

Signals sent to the parent (``kill``, a CI runner's cancel) are forwarded to the child; a
Ctrl-C reaches both through the terminal's process group, and a run the parent saw
interrupted never exits 0 unless it had finished.  The store's transactions already
guarantee that an unfinished run leaves nothing behind; this guarantees the exit code.

Where ``os.fork`` does not exist (Windows) the command runs unsupervised.
"""

from __future__ import annotations

import atexit
import os
import select
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable
from contextlib import suppress
from types import FrameType
from typing import NoReturn

from goldeneval.core.errors import one_line, printable

__all__ = ["DISABLE_ENV", "LEFTOVER_GRACE_S", "UNFINISHED_EXIT", "run_supervised"]

UNFINISHED_EXIT = 3
"""The exit code of a command whose process ended inside a plug-in (README, "Exit codes")."""
DISABLE_ENV = "GOLDENEVAL_NO_SUPERVISOR"
"""Set to 1 to run in one process (a debugger, a profiler)."""
LEFTOVER_GRACE_S = 3.0
"""How long what a finished run left running (a thread, a forked process) may take to end."""
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_SIGINT_GRACE_S = 0.5
_POLL_S = 0.05
_FIRST_POLL_S = 0.001
"""Where there is no pidfd, :func:`_wait_until` polls this far apart at first, then twice as
far each time, up to ``_POLL_S``."""
_PR_SET_CHILD_SUBREAPER = 36  # linux/prctl.h
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
_MAX_KILL_ROUNDS = 100
"""Rounds of ending leftover processes (each round's orphans are the next round's children)."""


def run_supervised(command: Callable[[], int], describe: str = "goldeneval") -> NoReturn:
    """Run ``command`` (which returns an exit code) in a forked child and exit with the code
    it reports; see the module docstring for what happens when it reports none."""
    if not hasattr(os, "fork") or os.environ.get(DISABLE_ENV) == "1":
        sys.exit(command())
    sys.stdout.flush()
    sys.stderr.flush()
    _become_subreaper()
    read_end, write_end = os.pipe()
    parent = os.getpid()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child (covered by subprocess tests)
        os.close(read_end)
        _die_with_parent(parent)
        _child(command, write_end)
    os.close(write_end)
    _exit_without_teardown(_parent(pid, read_end, describe))


def _child(command: Callable[[], int], write_end: int) -> NoReturn:  # pragma: no cover - child
    try:
        code = command()
    except SystemExit as exc:
        code = _code_of(exc)
    except KeyboardInterrupt:
        code = 128 + signal.SIGINT
    except Exception as exc:  # a bug nothing converted: say so, and blame no plug-in
        traceback.print_exc()
        problem = printable(one_line(f"{type(exc).__name__}: {exc}"))
        sys.stderr.write(f"goldeneval: error: internal error ({problem}); nothing partial was stored\n")
        code = UNFINISHED_EXIT
    # Report before the interpreter's own shutdown (atexit handlers, flushing): the command
    # has finished, whatever happens next.  The output is flushed first, so that it is whole
    # even if the parent has to end this process (a plug-in's thread that never ends).
    _flush()
    os.write(write_end, f"{code}\n".encode())
    os.close(write_end)
    _exit_without_teardown(code)


def _flush() -> None:
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):
            stream.flush()


def _exit_without_teardown(code: int) -> NoReturn:  # pragma: no cover - ends the process
    """End the child (or the parent) as the interpreter would, less its module teardown: wait
    for non-daemon threads (a plug-in's), run the atexit handlers (logging, temporary folders,
    executors), flush the output, then end the process.  Tearing down numpy, pyarrow, DuckDB and pydantic
    object by object takes 0.05 s of every command, for a process whose parent exits at once;
    what it would still finalize is only what nobody closed."""
    threading._shutdown()  # type: ignore[attr-defined]  # what Py_FinalizeEx does first
    atexit._run_exitfuncs()
    _flush()
    os._exit(code)


def _code_of(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def _die_with_parent(parent: int) -> None:  # pragma: no cover - runs in the child
    """Linux: SIGKILL this process when ``parent`` dies; if it died already (before the
    request), end now.  Elsewhere nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    with suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died between the fork and the request
        os._exit(128 + signal.SIGKILL)


def _become_subreaper() -> None:
    """Linux: orphans among the child's descendants become this process's children, so
    that :func:`_end_leftovers` can find them.  Elsewhere (or if refused) nothing changes."""
    if not sys.platform.startswith("linux"):
        return
    with suppress(OSError, AttributeError):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _parent(pid: int, read_end: int, describe: str) -> int:
    interrupted: list[int] = []
    reaped: list[bool] = []  # once the child is reaped its pid may be reused: forward nothing

    def forward(signum: int, _frame: FrameType | None) -> None:
        interrupted.append(signum)
        if signum == signal.SIGINT:
            # A terminal's Ctrl-C reaches the child too; forward only if it is still running
            # a moment later (the signal was sent to this process alone), so that the child
            # is not interrupted a second time while it winds down.
            signal.setitimer(signal.ITIMER_REAL, _SIGINT_GRACE_S)
            return
        if not reaped:
            with suppress(ProcessLookupError):
                os.kill(pid, signum)

    def forward_late_sigint(_signum: int, _frame: FrameType | None) -> None:
        if not reaped:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGINT)

    for signum in _FORWARDED:
        signal.signal(signum, forward)
    signal.signal(signal.SIGALRM, forward_late_sigint)
    report, status = _await_report(pid, read_end)
    deadline = time.monotonic() + LEFTOVER_GRACE_S
    left: list[str] = []
    if status is None:  # it reported but has not ended: a thread it waits for, its atexit work
        status = _wait_until(pid, deadline)
        if status is None:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
            status = _wait(pid)
            left.append("its process did not end (a plug-in's thread or clean-up still running)")
    reaped.append(True)
    signal.setitimer(signal.ITIMER_REAL, 0)  # a pending late SIGINT must not outlive the child
    os.close(read_end)
    ended = _end_leftovers(deadline)
    if ended:
        left.append(f"a plug-in left {ended} process{'' if ended == 1 else 'es'} running")
    if left:
        sys.stderr.write(
            f"goldeneval: warning: the command finished, but {' and '.join(left)}; ended after {LEFTOVER_GRACE_S:g} s\n"
        )
    if report is not None:
        code = int(report)
        if interrupted and code != 0:
            return 128 + interrupted[0]
        return code
    if os.WIFSIGNALED(status):
        ended_by = os.WTERMSIG(status)
        cause = (
            "sent to goldeneval" if ended_by in interrupted else "a native crash in a plug-in, or a signal sent to it"
        )
        sys.stderr.write(
            f"goldeneval: error: {describe} was ended by signal {ended_by} ({_signal_name(ended_by)}) inside the "
            f"run's work, before the command finished ({cause}); nothing partial was stored\n"
        )
        return 128 + ended_by
    child_code = os.waitstatus_to_exitcode(status)
    sys.stderr.write(
        f"goldeneval: error: {describe} ended inside a plug-in (os._exit({child_code}) or a native crash) "
        "before the command finished; no complete run was stored by it\n"
    )
    return UNFINISHED_EXIT


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _await_report(pid: int, read_end: int) -> tuple[bytes | None, int | None]:
    """The child's report (None if it ended without one) and its wait status (None while it
    runs).  Reading stops at the end of the report, not at the end of the pipe: a process the
    run forked holds the pipe open as long as it lives."""
    received = b""
    status: int | None = None
    while b"\n" not in received:
        if status is not None:  # ended: whatever it wrote before is in the pipe already
            received += _available(read_end)
            break
        ready, _, _ = select.select([read_end], [], [], _POLL_S)
        if ready:
            chunk = os.read(read_end, 64)
            if not chunk:  # every writer closed the pipe: the child ended without reporting
                status = _wait(pid)
                break
            received += chunk
        else:
            status = _reap(pid)
    report, newline, _ = received.partition(b"\n")
    return (report if newline else None), status


def _available(fd: int) -> bytes:
    data = b""
    while select.select([fd], [], [], 0)[0]:
        chunk = os.read(fd, 64)
        if not chunk:
            break
        data += chunk
    return data


def _reap(pid: int) -> int | None:
    """The child's wait status once it has ended, else None; orphans reparented to this
    process (see :func:`_become_subreaper`) that have ended are reaped on the way."""
    status: int | None = None
    while True:
        try:
            found, found_status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # pragma: no cover - reaped elsewhere
            return 0 if status is None else status
        if found == 0:
            return status
        if found == pid:
            status = found_status


def _wait_until(pid: int, deadline: float) -> int | None:
    """The child's wait status once it has ended, or None at ``deadline``.  It has reported by
    then, and usually ends a few milliseconds later: this wakes when it does (a pidfd, where the
    system has one; else polls a millisecond apart at first), not a whole ``_POLL_S`` later,
    which every command would wait on top of its work."""
    pidfd = _pidfd(pid)
    fired = False
    pause = _FIRST_POLL_S
    try:
        while True:
            status = _reap(pid)
            left = deadline - time.monotonic()
            if status is not None or left <= 0:
                return status
            if pidfd is not None and not fired:
                fired = bool(select.select([pidfd], [], [], left)[0])  # readable once the process has ended
            else:
                # No pidfd; or it fired and the exit was not ours to reap yet (a tracer such as
                # strace or gdb collects it first), and it stays readable: poll, never spin.
                time.sleep(min(pause, left))
                pause = min(pause * 2, _POLL_S)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _pidfd(pid: int) -> int | None:
    """A file descriptor that becomes readable when process ``pid`` ends (Linux 5.3 and
    later), or None where there is none."""
    try:
        return os.pidfd_open(pid)  # Linux only: AttributeError elsewhere
    except (AttributeError, OSError):
        return None


def _wait(pid: int) -> int:
    while True:
        try:
            _, status = os.waitpid(pid, 0)
            return status
        except ChildProcessError:  # pragma: no cover - reaped elsewhere
            return 0
        except InterruptedError:  # pragma: no cover
            continue


def _end_leftovers(deadline: float) -> int:
    """Give this process's remaining children (the run's orphans) until ``deadline``, then
    kill them, round by round (a killed process's own children are orphaned in turn).
    Returns how many were killed."""
    killed = rounds = 0
    while rounds < _MAX_KILL_ROUNDS:
        _reap(-1)  # the ones that have ended
        children = _children()
        if not children:
            break
        if time.monotonic() < deadline:
            time.sleep(_POLL_S)
            continue
        rounds += 1
        for child in children:
            with suppress(ProcessLookupError):
                os.kill(child, signal.SIGKILL)
                killed += 1
        for child in children:
            with suppress(ChildProcessError):
                os.waitpid(child, 0)
    return killed


def _children() -> list[int]:
    """The pids whose parent is this process (Linux's /proc; empty where there is none).

    The kernel's list of this (single-threaded) process's children where it keeps one
    (``CONFIG_PROC_CHILDREN``); else a scan of every process's ``stat``, which costs a few
    milliseconds a command on a busy machine."""
    me = os.getpid()
    with suppress(OSError, ValueError), open(f"/proc/{me}/task/{me}/children", "rb") as listed:
        return [int(pid) for pid in listed.read().split()]
    try:
        entries = os.listdir("/proc")
    except OSError:
        return []
    children = []
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 1 and fields[0] not in (b"Z", b"X") and int(fields[1]) == me:
            children.append(int(entry))
    return children
