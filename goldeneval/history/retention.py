"""Retention (ADR-215 decision 5): delete whole runs older than a duration.

A run is the store row, its slices, the Parquet table files it was built from (the Dagster
assets record the Dagster run that wrote them, ``tables_run_id``) and its HTML report (the
regression check writes it below the tables); all go together.
A table file still used by a run that stays is kept.  Both questions are SQL queries in the
store: the history is never loaded into Python.

Retention never deletes a series' accepted level (:mod:`goldeneval.history.accepted`): the
run the series' next run would be compared with under ``baseline: accepted``, computed by the
same walk with the thresholds the caller passes (the default thresholds otherwise), nor the
run of the series' latest acceptance.  Without that, purging the good night before a lasting
regression would make the oldest run left, a bad one, the series' baseline, and the next bad
night would pass.  Where deleting the older runs would still change which run the walk
reaches (a level reached by passing the gate step by step from an older run), the runs the
walk goes through before the level are kept too.  Kept runs are reported (``kept``).
``including_levels`` (``--including-levels``) deletes them as well, for a retention policy
that allows no exception: the series' next run is then its baseline.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from goldeneval.core.errors import InputError
from goldeneval.core.gate import DEFAULT_THRESHOLDS, RegressionThresholds
from goldeneval.core.records import StoredRun
from goldeneval.history.accepted import level_after
from goldeneval.history.comparison import gate_judge
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
    kept: tuple[StoredRun, ...] = ()
    """Runs old enough to go that stay: the accepted levels of their series (and what their
    walk needs)."""


def purge_runs(
    store: Store,
    older_than: timedelta,
    *,
    set_id: str | None = None,
    tables_root: Path | None = None,
    dry_run: bool = False,
    now: datetime | None = None,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    including_levels: bool = False,
) -> PurgeReport:
    """Delete whole runs created longer ago than ``older_than``, except the accepted levels of
    their series (judged with ``thresholds``; ``including_levels``: those too, so that a
    series' next run is its baseline): the one rule behind ``goldeneval purge`` and
    ``python -m pipelines.purge``."""
    cutoff = (now or datetime.now(UTC)) - older_than
    old = store.purge(cutoff, set_id=set_id, dry_run=True)
    kept = set() if including_levels else _levels_kept(store, old, thresholds)
    runs = store.purge(cutoff, set_id=set_id, dry_run=dry_run, keeping=sorted(kept))
    tables_runs = sorted({run.tables_run_id for run in runs if run.tables_run_id})
    still_used = store.tables_runs_in_use(tables_runs, excluding=[run.id for run in runs])
    files = run_files(tables_root, set(tables_runs) - still_used) if tables_root else []
    reports = report_files(tables_root, {run.id for run in runs}) if tables_root else []
    if not dry_run:
        for path in (*files, *reports):
            path.unlink(missing_ok=True)
    return PurgeReport(tuple(runs), tuple(files), dry_run, tuple(reports), tuple(run for run in old if run.id in kept))


def _series(run: StoredRun) -> tuple[str, str, str]:
    return run.set_id, run.model, run.grader


def _levels_kept(store: Store, old: list[StoredRun], thresholds: RegressionThresholds) -> set[str]:
    """The ids of the ``old`` runs that stay: per series, the run its next run would be
    compared with under ``baseline: accepted``, its latest acceptance's run, and, where the
    walk would reach another level without them, the older runs it walks through."""
    judge = gate_judge(store, thresholds)
    kept: set[str] = set()
    by_series: dict[tuple[str, str, str], list[StoredRun]] = {}
    for run in old:
        by_series.setdefault(_series(run), []).append(run)
    for doomed in by_series.values():
        latest = store.latest_complete_run(doomed[0])
        if latest is None:  # no complete run: the series has no level
            continue
        level = level_after(store, latest, judge)
        accepted = store.latest_accepted_run(latest, including=True)
        keep = {run.id for run in ((level.run if level else None), (accepted[0] if accepted else None)) if run}
        leaving = [run.id for run in doomed if run.id not in keep]
        after = level_after(store, latest, judge, leaving=leaving) if level is not None else None
        if level is not None and (after is None or after.run.id != level.run.id):
            start = accepted[0] if accepted is not None else None
            keep.update(run.id for run in doomed if _between(run, start, level.run))
        kept.update(keep & {run.id for run in doomed})
    return kept


def _order(run: StoredRun) -> tuple[datetime, str]:
    return run.created_at, run.id


def _between(run: StoredRun, start: StoredRun | None, level: StoredRun) -> bool:
    """``run`` was walked after ``start`` (the latest acceptance's run; None: the series'
    first) and before the ``level``."""
    return (start is None or _order(run) > _order(start)) and _order(run) < _order(level)
