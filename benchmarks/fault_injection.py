"""Fault injection against the result store: are runs ever lost or half-written?

Each scenario drives real processes against a real DuckDB store and then audits it:

* ``kill -9`` — writer processes store runs in a loop and are SIGKILLed at random moments;
  every run a writer reported as stored must be found, and no run may lack its slices
  (nor slices their run);
* ``concurrent writers`` — 8 processes x 10 runs into one store: 80 runs expected;
* ``readers during writes`` — readers list the runs while writers write: no reader error;
* ``unusable lock`` — the lock file cannot be created: every write is refused with a store
  error and the store is left as it was;
* ``full disk`` — a 2 MiB tmpfs (only where this process may mount one): writes fail with a
  store error naming the cause, and what was stored before is intact.

    .venv/bin/python -m benchmarks.fault_injection [--kills 20] [--seed 7] [--only readers,disk]

Prints one table: faults injected, runs expected, runs found, partial rows, errors.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import duckdb

from goldeneval.core.errors import StoreError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.store import ResultStore, RunRecord


def _set(questions: int) -> GoldenQuestionSet:
    return GoldenQuestionSet(
        id="faults",
        questions=tuple(
            GoldenQuestion(id=f"q{i}", text=f"question {i}", form=QuestionForm.MATCH, expected=frozenset({f"d{i}"}))
            for i in range(questions)
        ),
    )


class _Fixed:
    def retrieve(self, question: str, limit: int) -> list[str]:
        return [f"d{question.split()[-1]}", "d0", "d1"]


def _record(questions: int = 50) -> RunRecord:
    return evaluate_retrieval(_set(questions), _Fixed(), "faults", timeout_s=None).to_record(PrivacyMode.FULL)


@dataclass
class Row:
    scenario: str
    faults: int
    expected: int
    found: int
    partial: int
    errors: int
    note: str = ""


def _audit(store: Path) -> tuple[int, int]:
    """Runs found, and partial rows: runs without their slices or slices without their run."""
    if not store.exists():
        return 0, 0
    con = duckdb.connect(str(store), read_only=True)
    try:
        runs = con.execute("SELECT count(*) FROM runs").fetchone()
        orphans = con.execute("SELECT count(*) FROM run_slices WHERE run_id NOT IN (SELECT id FROM runs)").fetchone()
        bare = con.execute("SELECT count(*) FROM runs WHERE id NOT IN (SELECT run_id FROM run_slices)").fetchone()
    finally:
        con.close()
    return int(runs[0] if runs else 0), int((orphans[0] if orphans else 0) + (bare[0] if bare else 0))


def _writer(store: str, count: int, questions: int = 50) -> None:
    record = _record(questions)
    opened = ResultStore(store)
    print("ready", flush=True)
    for _ in range(count):
        stored = opened.save_run(record)
        print(stored.id, flush=True)


def _writer_process(store: Path, count: int, questions: int = 50) -> subprocess.Popen[str]:
    code = f"from benchmarks.fault_injection import _writer; _writer({str(store)!r}, {count}, {questions})"
    return subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=Path(__file__).resolve().parents[1],
    )


def kill_nine(root: Path, kills: int, rng: random.Random) -> Row:
    store = root / "killed.duckdb"
    reported = 0
    for _ in range(kills):
        writer = _writer_process(store, 1000)
        assert writer.stdout is not None
        writer.stdout.readline()  # "ready": started, its record built, the store open
        time.sleep(rng.uniform(0.0, 1.0))  # somewhere inside the write loop
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate()
        reported += len(out.split())
    found, partial = _audit(store)
    lost = max(reported - found, 0)
    return Row(
        "kill -9 while writing",
        kills,
        reported,
        found,
        partial,
        lost,
        "a run committed just before the kill may be found unreported",
    )


def concurrent_writers(root: Path, writers: int = 8, each: int = 10) -> Row:
    store = root / "concurrent.duckdb"
    ResultStore(store)
    processes = [_writer_process(store, each) for _ in range(writers)]
    errors = sum(1 for p in processes if p.wait(timeout=600) != 0)
    found, partial = _audit(store)
    return Row(f"{writers} writers x {each} runs", writers, writers * each, found, partial, errors)


def _reader(store: str, seconds: float, queue: multiprocessing.Queue[tuple[int, list[float]]]) -> None:
    errors = 0
    waits: list[float] = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        started = time.monotonic()
        try:
            ResultStore(store).list_runs(limit=5)
        except StoreError:
            errors += 1
        waits.append(time.monotonic() - started)
    queue.put((errors, waits))


def readers_during_writes(root: Path, writers: int = 4, each: int = 10, questions: int = 5000) -> Row:
    """Readers must not queue behind writers: each read waits at most for the write being
    committed, never for every writer waiting for the lock (the reads' latency is reported)."""
    store = root / "readers.duckdb"
    ResultStore(store)
    processes = [_writer_process(store, each, questions) for _ in range(writers)]
    queue: multiprocessing.Queue[tuple[int, list[float]]] = multiprocessing.Queue()
    readers = [multiprocessing.Process(target=_reader, args=(str(store), 10.0, queue)) for _ in range(3)]
    for reader in readers:
        reader.start()
    results = [queue.get() for _ in readers]
    for reader in readers:
        reader.join()
    failed_writers = sum(1 for w in processes if w.wait(timeout=600) != 0)
    reader_errors = sum(errors for errors, _ in results)
    waits = sorted(wait for _, reader_waits in results for wait in reader_waits)
    found, partial = _audit(store)
    note = (
        f"{len(waits)} reads of {writers * each} runs x {questions} questions being written; "
        f"read latency median {statistics.median(waits) * 1000:.0f} ms, max {waits[-1]:.2f} s"
    )
    return Row(
        f"3 readers during {writers} writers",
        writers + 3,
        writers * each,
        found,
        partial,
        failed_writers + reader_errors,
        note,
    )


def unusable_lock(root: Path) -> Row:
    store = root / "locked.duckdb"
    ResultStore(store).save_run(_record())
    before = store.read_bytes()
    Path(f"{store}.lock").unlink()
    Path(f"{store}.lock").mkdir()  # the lock cannot be created (as with a read-only folder, even for root)
    refused = 0
    for _ in range(5):
        try:
            ResultStore(store).save_run(_record())
        except StoreError:
            refused += 1
    found, partial = _audit(store)
    unchanged = store.read_bytes() == before
    return Row("lock cannot be created", 5, 1, found, partial, 5 - refused, f"store unchanged: {unchanged}")


def full_disk(root: Path) -> Row:
    mount = root / "tiny"
    mount.mkdir()
    result = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        return Row("full disk (2 MiB tmpfs)", 0, 0, 0, 0, 0, "not run: mounting a tmpfs is not permitted here")
    try:
        store = mount / "full.duckdb"
        stored = 0
        causes: set[str] = set()
        record = _record(2000)
        for _ in range(300):
            try:
                ResultStore(store).save_run(record)
                stored += 1
            except StoreError as exc:
                causes.add("No space left on device" if "No space left" in str(exc) else str(exc)[:80])
                if len(causes) > 2:
                    break
        found, partial = _audit(store) if store.exists() else (0, 0)
        return Row("full disk (2 MiB tmpfs)", 1, stored, found, partial, 0, "; ".join(sorted(causes)) or "never full")
    finally:
        subprocess.run(["umount", str(mount)], check=False)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--only", default=None, help="Comma-separated scenarios: kill,writers,readers,lock,disk.")
    options = parser.parse_args(argv)
    rng = random.Random(options.seed)
    root = Path(tempfile.mkdtemp(prefix="goldeneval-faults-"))
    try:
        scenarios = {
            "kill": lambda: kill_nine(root, options.kills, rng),
            "writers": lambda: concurrent_writers(root),
            "readers": lambda: readers_during_writes(root),
            "lock": lambda: unusable_lock(root),
            "disk": lambda: full_disk(root),
        }
        chosen = options.only.split(",") if options.only else list(scenarios)
        rows = [scenarios[name]() for name in chosen]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print("| scenario | faults injected | runs expected | runs found | partial rows | errors | note |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        print(f"| {r.scenario} | {r.faults} | {r.expected} | {r.found} | {r.partial} | {r.errors} | {r.note} |")
    print(f"(pid {os.getpid()}, seed {options.seed})")


if __name__ == "__main__":
    main()
