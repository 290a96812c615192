"""Retention (ADR-215 decision 5): delete whole runs older than a duration.

A run is the store row, its slices and its Parquet partitions (folders named
``run_id=<id>`` below the Parquet root that the Dagster assets write); all go together.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from goldeneval.errors import InputError
from goldeneval.store import ResultStore, StoredRun

__all__ = ["PurgeReport", "parse_duration", "purge_runs"]

_DURATION = re.compile(r"^\s*(\d+)\s*(m|h|d|w)\s*$")
_UNITS = {"m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_duration(text: str) -> timedelta:
    """``90m``, ``12h``, ``30d`` or ``8w``."""
    match = _DURATION.match(text)
    if not match:
        raise InputError(f"duration {text!r}: expected a whole number and a unit m, h, d or w (e.g. 30d)")
    return timedelta(**{_UNITS[match.group(2)]: int(match.group(1))})


@dataclass(frozen=True)
class PurgeReport:
    runs: tuple[StoredRun, ...]
    parquet_folders: tuple[Path, ...]
    dry_run: bool


def _partition_folders(parquet_root: Path | None, run_ids: set[str]) -> list[Path]:
    if parquet_root is None or not parquet_root.is_dir():
        return []
    return sorted(
        path
        for path in parquet_root.rglob("run_id=*")
        if path.is_dir() and path.name.removeprefix("run_id=") in run_ids
    )


def purge_runs(
    store: ResultStore,
    older_than: timedelta,
    *,
    set_id: str | None = None,
    parquet_root: Path | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
) -> PurgeReport:
    cutoff = (now or datetime.now(UTC)) - older_than
    runs = store.purge(cutoff, set_id=set_id, dry_run=dry_run)
    folders = _partition_folders(parquet_root, {run.id for run in runs})
    if not dry_run:
        for folder in folders:
            shutil.rmtree(folder)
    return PurgeReport(tuple(runs), tuple(folders), dry_run)
