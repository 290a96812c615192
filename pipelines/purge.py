"""``python -m pipelines.purge``: retention on both sides of a deployment, the store and Dagster's.

``goldeneval purge`` deletes whole runs from the result store, with their Parquet tables and
HTML reports (ADR-215 decision 5, :func:`goldeneval.history.retention.purge_runs`); it never
imports Dagster (the domain does not), so the Dagster instance kept the runs' events: the
summaries' metadata, the checks' descriptions (which name questions and documents) and the
series' observations.  This command does both, in this order:

1. :func:`~goldeneval.history.retention.purge_runs` on the suite file's store and tables, as
   ``goldeneval purge`` does;
2. for each purged run, the Dagster runs that made it and judged it are deleted from the
   instance in ``$DAGSTER_HOME`` with their whole event log: the run that wrote its tables
   (``tables_run_id``, which materialised its summary and observed its series), the run it
   re-executes and every re-execution of that root run, in full or from failure (tag
   ``dagster/root_run_id``: a re-executed partition is the same night, and its runs' events
   and Parquet files name the stored run too), the regression-check runs the sensor launched
   for it (run key ``regression_check:<run id>``, :func:`pipelines.sensors.stored_run_key`),
   and the asset check executions they recorded, which ``delete_run`` leaves behind
   (:func:`pipelines.dagster_internals.delete_check_executions`); the Parquet files the
   re-executions wrote go too (:func:`reexecution_files`).

``--dry-run`` lists what would go and deletes nothing.  Exit 0; 3 for a bad ``--older-than``
or suite file (one line, as the ``goldeneval`` command prints an input error).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from goldeneval.core.errors import GoldenEvalError, printable
from goldeneval.history.retention import parse_duration, purge_runs
from goldeneval.store import Store, open_store, store_exists
from goldeneval.store.parquet import run_files
from goldeneval.suite import load_suite
from pipelines.config import suite_path
from pipelines.dagster_internals import PARTITION_NAME_TAG, ROOT_RUN_ID_TAG, RUN_KEY_TAG, delete_check_executions
from pipelines.main import prepare_home
from pipelines.sensors import stored_run_key

__all__ = ["dagster_runs_of", "main", "reexecution_files"]


@dataclass(frozen=True)
class StoredRunRef:
    """What the Dagster side needs of a purged run: its id and the Dagster run of its tables."""

    id: str
    tables_run_id: str | None


def _night(instance: dg.DagsterInstance, run_id: str) -> list[str]:
    """``run_id``'s night in the instance: its root run (the run it re-executes, or itself)
    and every re-execution of that root, in full or from failure, as the summary keys a night
    (``assets.summary.night_key``).  A re-execution launched from the UI or GraphQL carries
    the tag ``dagster/root_run_id``; one executed in process (``dg.execute_job``) records its
    root on the run only, so the root's partition's later runs are read too."""
    run = instance.get_run_by_id(run_id)
    root = run_id if run is None else (run.root_run_id or run.run_id)
    root_run = instance.get_run_by_id(root)
    found = dict.fromkeys(r.run_id for r in (root_run, run) if r is not None)
    found.update(
        dict.fromkeys(r.run_id for r in instance.get_runs(filters=dg.RunsFilter(tags={ROOT_RUN_ID_TAG: root})))
    )
    record = instance.get_run_record_by_id(root)
    if root_run is not None and record is not None and PARTITION_NAME_TAG in root_run.tags:
        later = dg.RunsFilter(
            job_name=root_run.job_name,
            tags={PARTITION_NAME_TAG: root_run.tags[PARTITION_NAME_TAG]},
            created_after=record.create_timestamp,
        )
        found.update(dict.fromkeys(r.run_id for r in instance.get_runs(filters=later) if r.root_run_id == root))
    return list(found)


def dagster_runs_of(instance: dg.DagsterInstance, runs: Iterable[StoredRunRef]) -> list[str]:
    """The ids of the Dagster runs that made or judged ``runs``, as the instance holds them:
    the run that wrote each one's tables, its root run and every re-execution of that root
    (a re-executed partition is the same night), and the regression-check runs the sensor
    launched for it, with their re-executions."""
    found: dict[str, None] = {}
    for run in runs:
        if run.tables_run_id is not None:
            found.update(dict.fromkeys(_night(instance, run.tables_run_id)))
        judged = instance.get_runs(filters=dg.RunsFilter(tags={RUN_KEY_TAG: stored_run_key(run.id)}))
        for check in judged:
            found.update(dict.fromkeys(_night(instance, check.run_id)))
    return list(found)


def reexecution_files(
    store: Store, tables_root: Path, dagster_runs: Iterable[str], purged: Iterable[str]
) -> list[Path]:
    """The Parquet table files below ``tables_root`` that the Dagster runs of the purged runs
    wrote (a re-execution writes its own, named by its run id), less those a stored run that
    stays was built from."""
    ids = set(dagster_runs)
    still_used = store.tables_runs_in_use(sorted(ids), excluding=list(purged)) if ids else set()
    return run_files(tables_root, ids - still_used)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipelines.purge",
        description="Delete whole runs older than a duration from the suite file's store and tables, and "
        "the Dagster runs that made and judged them, with their events, from the instance in $DAGSTER_HOME.",
    )
    parser.add_argument("--older-than", required=True, help="90m, 12h, 30d or 8w.")
    parser.add_argument("--set", dest="set_id", default=None, help="Only runs of this set.")
    parser.add_argument("--dry-run", action="store_true", help="Say what would be deleted; delete nothing.")
    parser.add_argument(
        "--including-levels",
        action="store_true",
        help="Also delete old runs that are their series' accepted levels (kept otherwise).",
    )
    args = parser.parse_args(argv)
    try:
        older_than = parse_duration(args.older_than)
        suite = load_suite(suite_path())
        location = suite.store_location
        if not store_exists(location):
            print("Nothing stored yet: nothing to delete.")
            return 0
        store = open_store(location)
        report = purge_runs(
            store,
            older_than,
            set_id=args.set_id,
            tables_root=suite.tables_root,
            dry_run=args.dry_run,
            thresholds=suite.thresholds,  # the nightly's: the levels kept are the ones its checks use
            including_levels=args.including_levels,
        )
    except GoldenEvalError as exc:
        print(f"goldeneval: error: {printable(' '.join(str(exc).split()))}", file=sys.stderr)
        return 3
    refs = [StoredRunRef(run.id, run.tables_run_id) for run in report.runs]
    prepare_home()  # the instance the main command keeps its runs in, unless $DAGSTER_HOME names another
    with dg.DagsterInstance.get() as instance:
        dagster_runs = dagster_runs_of(instance, refs)
        files = reexecution_files(store, suite.tables_root, dagster_runs, [ref.id for ref in refs])
        if not args.dry_run:
            for path in files:
                path.unlink(missing_ok=True)
            for run_id in dagster_runs:
                delete_check_executions(instance, run_id)  # delete_run leaves them, descriptions and all
                instance.delete_run(run_id)
    table_files = {*report.table_files, *files}
    verb = "Would delete" if args.dry_run else "Deleted"
    print(
        f"{verb} {len(report.runs)} run(s), {len(table_files)} Parquet table file(s), "
        f"{len(report.report_files)} HTML report(s) and {len(dagster_runs)} Dagster run(s) with their events."
    )
    for stored in report.runs:
        print(f"  {stored.id}  {stored.created_at:%Y-%m-%d %H:%M:%S}  {stored.set_id}  {stored.model}")
    if report.kept:
        print(f"Kept {len(report.kept)} run(s): accepted levels of their series.")
        for stored in report.kept:
            print(f"  {stored.id}  {stored.created_at:%Y-%m-%d %H:%M:%S}  {stored.set_id}  {stored.model}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
