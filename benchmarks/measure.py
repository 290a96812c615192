"""Measuring a whole process from outside, and the words and numbers a report shows: what
every benchmark section shares (``benchmarks.run`` and the sections of their own modules,
``benchmarks.startup``, ``benchmarks.memory``, ``benchmarks.pooling``)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ZERO_RETRIEVER = "benchmarks.zero_retriever:factory"
SAMPLE_SET = "transit-sample"
CLEARED_ENV_PREFIXES = ("GOLDENEVAL_", "DAGSTER_HOME")
"""Variables a measured command must not inherit: goldeneval's own (all start so) and Dagster's home."""


# --------------------------------------------------------------------------------------------
# Measuring a process from outside
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    """One whole process: exit status, wall seconds, CPU seconds and peak RSS (bytes) of the
    process and every descendant it waited for (``wait4``'s ``ru_maxrss``: the largest one)."""

    command: str
    exit_status: int
    wall_s: float
    user_s: float
    system_s: float
    peak_rss_bytes: int
    timed_out: bool = False
    memory_exceeded: bool = False
    """Killed by the harness because its process tree's RSS passed ``MEMORY_LIMIT_SHARE`` of the
    machine (before the kernel's OOM killer could pick another engineer's process)."""

    @property
    def ok(self) -> bool:
        return self.exit_status == 0 and not self.timed_out and not self.memory_exceeded


MEMORY_LIMIT_SHARE = 0.6
"""Share of the machine's memory one measured command's process tree may hold (it is shared)."""


def machine_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def tree_rss(pid: int) -> int:
    """Resident bytes of ``pid`` and its descendants now (Linux /proc; 0 when it is gone)."""
    total, pending, page = 0, [pid], os.sysconf("SC_PAGE_SIZE")
    while pending:
        current = pending.pop()
        try:
            total += int(Path(f"/proc/{current}/statm").read_text().split()[1]) * page
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except (OSError, ValueError, IndexError):
            continue
    return total


def measure(
    command: Sequence[str],
    *,
    env: Mapping[str, str],
    cwd: Path,
    log: Path,
    timeout_s: float,
    memory_limit_bytes: int | None = None,
) -> Measured:
    """Run ``command`` to its end, stdout and stderr into ``log``; measured by ``wait4``.  Killed
    past ``timeout_s`` or when its process tree holds more than ``memory_limit_bytes`` (default:
    ``MEMORY_LIMIT_SHARE`` of the machine's memory)."""
    limit = memory_limit_bytes if memory_limit_bytes is not None else int(MEMORY_LIMIT_SHARE * machine_memory())
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as out:
        start = time.perf_counter()
        process = subprocess.Popen(
            list(command), cwd=cwd, env=dict(env), stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )
        expired = threading.Event()

        def kill() -> None:
            expired.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)

        timer = threading.Timer(timeout_s, kill)
        timer.start()
        finished, over = threading.Event(), threading.Event()

        def watch() -> None:
            while not finished.wait(0.5):
                if tree_rss(process.pid) > limit:
                    over.set()
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(process.pid, signal.SIGKILL)
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            _, status, usage = os.wait4(process.pid, 0)
        finally:
            timer.cancel()
            finished.set()
        wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
    return Measured(
        command=" ".join(shown(part) for part in command),
        exit_status=process.returncode,
        wall_s=wall,
        user_s=usage.ru_utime,
        system_s=usage.ru_stime,
        peak_rss_bytes=usage.ru_maxrss * 1024,
        timed_out=expired.is_set(),
        memory_exceeded=over.is_set(),
    )


def shown(part: str) -> str:
    """A command-line argument as the report shows it: paths relative to the repo or the temp dir."""
    return part.replace(str(REPO) + "/", "").replace(tempfile.gettempdir() + "/", "$TMP/")


def clean_env(**extra: str | Path) -> dict[str, str]:
    """This process's environment without goldeneval's and Dagster's variables, plus ``extra``;
    the repository on ``PYTHONPATH`` so that ``benchmarks.*`` plug-ins import."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(CLEARED_ENV_PREFIXES)}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p)
    env.update({k: str(v) for k, v in extra.items()})
    return env


def goldeneval_command() -> str:
    found = Path(sys.executable).with_name("goldeneval")
    return str(found) if found.exists() else shutil.which("goldeneval") or "goldeneval"


class CommandFailed(RuntimeError):
    pass


def checked(result: Measured, log: Path) -> Measured:
    if not result.ok:
        tail = log.read_text(encoding="utf-8", errors="replace")[-3000:]
        why = (
            "timed out"
            if result.timed_out
            else f"killed by the harness: its RSS passed {MEMORY_LIMIT_SHARE:.0%} of this machine's memory"
            if result.memory_exceeded
            else f"exit status {result.exit_status}"
        )
        raise CommandFailed(f"{result.command}: {why}\n{tail}")
    return result


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def secs(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 0.01:
        return f"{value * 1000:.2f} ms"
    return f"{value:.3f} s" if value < 10 else f"{value:.1f} s"


def mib(value: float | None) -> str:
    return "-" if value is None else f"{value / 2**20:,.0f} MiB"


def ratio(a: float | None, b: float | None) -> str:
    return "-" if not a or not b else f"{a / b:.2f}x"


def yes(condition: object) -> str:
    return "yes" if condition else "no"
