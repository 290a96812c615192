"""The evaluated run, handed in memory from the step that evaluated it to the summary step of
the same Dagster run.

The summary records the run its table describes.  Rebuilt from the table, that is one Python
object per row and a details record built row by row again (seconds on a large set); yet when
both steps execute in one process (``execute_in_process``, the README's main command, the
in-process executor) the evaluation's own run, backed by its scoring arrays, is still there.
So the evaluating step keeps it here under its Dagster run id and partition, and the summary
takes it when the table it reads was written by that very run and partition: that table was
built from that run and nothing else, so the record is the one the CLI would store from the
same evaluation.  In any other case (each step in a process of its own, a summary
re-materialised later for older tables) nothing is kept for that key and the summary
rebuilds the run from the table, which records the same run (tests/test_tables.py).

A run is taken once, and only the latest few are kept, so a summary that never runs holds no
memory for long.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Generic, TypeVar

__all__ = ["KEPT_RUNS", "RunHandOff"]

KEPT_RUNS = 4
"""How many runs wait for their summary at most (one at a time when partitions run in turn)."""

R = TypeVar("R")


class RunHandOff(Generic[R]):
    """Runs kept by (Dagster run id, partition key) until their summary takes them.  (The
    Parquet IO manager keeps the tables it wrote the same way, by run id and file.)"""

    def __init__(self, kept: int = KEPT_RUNS) -> None:
        self._kept = kept
        self._runs: OrderedDict[tuple[str, str], R] = OrderedDict()
        self._lock = threading.Lock()  # steps of a run may execute in threads of one process

    def keep(self, tables_run_id: str, partition_key: str, run: R) -> None:
        """Keep the run whose tables ``tables_run_id`` writes for the partition."""
        with self._lock:
            self._runs[(tables_run_id, partition_key)] = run
            self._runs.move_to_end((tables_run_id, partition_key))
            while len(self._runs) > self._kept:
                self._runs.popitem(last=False)

    def take(self, tables_run_id: str, partition_key: str) -> R | None:
        """The run the tables of ``tables_run_id`` were built from for the partition, when this
        process evaluated it; None otherwise (rebuild it from the table)."""
        with self._lock:
            return self._runs.pop((tables_run_id, partition_key), None)
