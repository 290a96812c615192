"""Retention (ADR-215 decision 5): delete whole runs older than a duration.

A run is the store row, its slices, the Parquet table files it was built from (the Dagster
assets record the Dagster run that wrote them, ``tables_run_id``) and its HTML report (the
regression check writes it below the tables); all go together.
A table file still used by a run that stays is kept.  Both questions are SQL queries in the
store: the history is never loaded into Python.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from goldeneval.core.errors import InputError
from goldeneval.core.records import StoredRun
from goldeneval.store.base import Store
from goldeneval.store.parquet import report_files, run_files

__all__ = ["PurgeReport", "parse_duration", "purge_runs"]

_DURATION = re.compile(r"^\s*(\d+)\s*(m|h|d|w)\s*$")
_UNIT_MINUTES = {"m": 1, "h": 60, "d": 24 * 60, "w": 7 * 24 * 60}
MAX_DURATION = timedelta(days=1000 * 365)


def parse_duration(text: str) -> timedelta:
    """``90m``, ``12h``, ``30d`` or ``8w``."""
    match = _DURATION.match(text)
    if not match:
        raise InputError(f"duration {text!r}: expected a whole number and a unit m, h, d or w (e.g. 30d)")
    minutes = int(match.group(1)) * _UNIT_MINUTES[match.group(2)]
    if minutes > MAX_DURATION // timedelta(minutes=1):
        raise InputError(f"duration {text!r}: longer than {MAX_DURATION.days // 365} years; nothing is that old")
    return timedelta(minutes=minutes)


@dataclass(frozen=True)
class PurgeReport:
    runs: tuple[StoredRun, ...]
    table_files: tuple[Path, ...]
    dry_run: bool
    report_files: tuple[Path, ...] = ()
    """The purged runs' HTML reports (they show the runs' questions and documents)."""


def purge_runs(
    store: Store,
    older_than: timedelta,
    *,
    set_id: str | None = None,
    tables_root: Path | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> PurgeReport:
    cutoff = (now or datetime.now(UTC)) - older_than
    runs = store.purge(cutoff, set_id=set_id, dry_run=dry_run)
    tables_runs = sorted({run.tables_run_id for run in runs if run.tables_run_id})
    still_used = store.tables_runs_in_use(tables_runs, excluding=[run.id for run in runs])
    files = run_files(tables_root, set(tables_runs) - still_used) if tables_root else []
    reports = report_files(tables_root, {run.id for run in runs}) if tables_root else []
    if not dry_run:
        for path in (*files, *reports):
            path.unlink(missing_ok=True)
    return PurgeReport(tuple(runs), tuple(files), dry_run, tuple(reports))
