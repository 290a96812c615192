"""Reading and keeping the result store: ``runs``, ``accept``, ``purge``, ``store copy``, ``store retry``."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import click

from goldeneval.cli.app import run_guarded
from goldeneval.cli.params import StoreParam, folder_option, format_option, storage_default_help, store_option
from goldeneval.core.errors import InputError
from goldeneval.core.storage import TABLES
from goldeneval.history.accepted import Accepted
from goldeneval.history.accepted import accept as accept_run
from goldeneval.history.delivery import deliver_spooled
from goldeneval.history.retention import PurgeReport, parse_duration, purge_runs
from goldeneval.kinds import KindDeclaration, declared_kinds
from goldeneval.retrieval.report import render_runs, runs_json
from goldeneval.store import Acceptance, StoredRun, StoreLocation, copy_runs, open_store, store_exists
from goldeneval.store.spool import DEFAULT_SPOOL, SPOOL_ENV, spool_folder
from goldeneval.suite_storage import CONFIG_ENV, CONFIG_FILE_NAME, load_storage


@click.command()
@store_option
@click.option("--set", "set_id", default=None, help="Only runs of this set.")
@click.option("--model", "--retriever", "model", default=None, help="Only runs of this series name or retriever id.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many (newest first).")
@format_option
def runs(
    store_location: StoreLocation | None, set_id: str | None, model: str | None, limit: int | None, output_format: str
) -> None:
    """List stored runs, newest first."""
    resolved = load_storage().store(store_location)

    def listed() -> tuple[list[StoredRun], dict[str, Acceptance]]:
        if not store_exists(resolved):  # nothing stored yet: say so, create nothing
            return [], {}
        store = open_store(resolved)
        found = store.list_runs(set_id=set_id, retriever=model, limit=limit)
        return found, store.acceptances([run.id for run in found])

    stored, accepted = run_guarded(listed)
    if output_format == "json":
        click.echo(json.dumps(runs_json(stored, accepted), indent=2))
    else:
        click.echo(render_runs(stored, accepted, rate_headers(declared_kinds())))


def rate_headers(kinds: Sequence[KindDeclaration]) -> tuple[str, str]:
    """The runs table's two rate columns' headers: what each stored rate is called by each
    declared kind, in order (``top-1/pass``, ``top-3/mean``): a listing mixes kinds."""
    first, second = ("/".join(dict.fromkeys(kind.rates[i][0] for kind in kinds)) for i in (0, 1))
    return first, second


@click.command()
@click.argument("run_id", metavar="RUN")
@click.option("--reason", required=True, help="Why the run is accepted (required, not empty); stored with it.")
@click.option("--by", "by", default=None, help="Who accepts it.  Default: the user running the command.")
@store_option
def accept(run_id: str, reason: str, by: str | None, store_location: StoreLocation | None) -> None:
    """Accept a stored run as its series' level (baseline: accepted, the nightly's default).

    With ``baseline: accepted`` (the suite file's default for the nightly) a run is compared
    with its series' accepted level: the last run that passed the gate, or the last one a
    person accepted.  A regression stays red night after night until a person accepts a run
    here.  RUN is a run id or a unique prefix of one.  Refused with exit 3: an unknown run, an
    incomplete run, an empty --reason or --by.  Prints one line."""
    resolved = load_storage().store(store_location)

    def accepted() -> Accepted:
        if not store_exists(resolved):  # nothing to accept: create nothing
            raise InputError(f"run {run_id!r} not found: the store {resolved} does not exist")
        return accept_run(open_store(resolved), run_id, reason, by)

    click.echo(run_guarded(accepted).line)


class DurationParam(click.ParamType[timedelta, Any]):
    """A duration, ``90m``, ``12h``, ``30d`` or ``8w``: a malformed one is bad usage (exit 2),
    as every malformed flag value is."""

    name = "DURATION"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> timedelta:
        if isinstance(value, timedelta):
            return value
        try:
            return parse_duration(value)
        except InputError as exc:
            self.fail(str(exc), param, ctx)


@click.command()
@click.option(
    "--older-than",
    required=True,
    type=DurationParam(),
    help="Delete runs created longer ago than this: 90m, 12h, 30d, 8w.",
)
@click.option("--set", "set_id", default=None, help="Only runs of this set.")
@click.option("--dry-run", is_flag=True, help="Report what would be deleted; delete nothing.")
@click.option(
    "--including-levels",
    is_flag=True,
    help="Also delete old runs that are their series' accepted levels (kept otherwise); "
    "such a series' next run is its baseline.",
)
@folder_option(
    "--tables-root",
    "Also delete the Parquet table files the runs were built from, below this folder. " + storage_default_help(TABLES),
)
@store_option
@click.option(
    "--config",
    "config_path",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Suite file whose storage: section names the store and the tables root when neither a flag "
    f"nor the environment does. Default: ${CONFIG_ENV}, else ./{CONFIG_FILE_NAME} when there is one.",
)
def purge(
    older_than: timedelta,
    set_id: str | None,
    dry_run: bool,
    including_levels: bool,
    tables_root: Path | None,
    store_location: StoreLocation | None,
    config_path: Path | None,
) -> None:
    """Delete whole runs (store rows and their Parquet table files) older than a duration.

    A run that is its series' accepted level (the run the series' next run is compared with
    under ``baseline: accepted``) or its latest acceptance's run is kept, and listed, unless
    --including-levels is given."""
    storage = load_storage(config_path)
    resolved = storage.store(store_location)
    root = storage.tables(tables_root)

    def run() -> PurgeReport:
        if not store_exists(resolved):  # nothing stored yet: nothing to delete, nothing created
            return PurgeReport((), (), dry_run)
        return purge_runs(
            open_store(resolved),
            older_than,
            set_id=set_id,
            tables_root=root,
            dry_run=dry_run,
            including_levels=including_levels,
        )

    report = run_guarded(run)
    verb = "Would delete" if report.dry_run else "Deleted"
    reports = f" and {len(report.report_files)} HTML report(s)" if report.report_files else ""
    click.echo(f"{verb} {len(report.runs)} run(s) and {len(report.table_files)} Parquet table file(s){reports}.")
    for stored in report.runs:
        click.echo(f"  {stored.id}  {stored.created_at:%Y-%m-%d %H:%M:%S}  {stored.set_id}  {stored.model}")
    if report.kept:
        click.echo(f"Kept {len(report.kept)} run(s): accepted levels of their series.")
        for stored in report.kept:
            click.echo(f"  {stored.id}  {stored.created_at:%Y-%m-%d %H:%M:%S}  {stored.set_id}  {stored.model}")


# --------------------------------------------------------------------------- store maintenance


@click.group("store")
def store_group() -> None:
    """Maintain result stores: move history between DuckDB files and PostgreSQL databases, and
    store the runs kept in the spool when a store could not be written."""


@store_group.command("copy")
@click.option("--from", "source", required=True, type=StoreParam(), help="Store to copy from: DuckDB path or URL.")
@click.option("--to", "target", required=True, type=StoreParam(), help="Store to copy into (created if new).")
def store_copy(source: StoreLocation, target: StoreLocation) -> None:
    """Copy every run (ids, fingerprints, privacy, details, slices, as stored) into another store.

    Copying again copies nothing new; a run id the target holds with different content
    refuses the whole copy (exit 5)."""

    def copy() -> tuple[int, int]:
        if not store_exists(source):
            raise InputError(f"store copy: the source store {source} does not exist")
        report = copy_runs(open_store(source), open_store(target))
        return report.copied, report.already_there

    copied, already = run_guarded(copy)
    click.echo(f"Copied {copied} run(s) from {source} to {target}; {already} already there.")


@store_group.command("retry")
@store_option
@folder_option("--spool", f"Folder of the kept runs. Default: ${SPOOL_ENV}, else {DEFAULT_SPOOL.as_posix()}.")
def store_retry(store_location: StoreLocation | None, spool: Path | None) -> None:
    """Store the runs kept in the spool when the store could not be written (exit 5).

    Each kept run is stored under the run id it was given, so retrying is idempotent: a run
    the store holds already (its commit did succeed) is not stored again.  A spool file is
    deleted only after its run is stored; one meant for another store is left for it, and one that cannot be read is
    kept and named (exit 3) after the others are stored.  The
    runs are not judged (no verdict, no gate): the next run of each series is compared with
    them as usual.  Exits 5, keeping the files, while the store still cannot be written."""
    resolved = load_storage().store(store_location)
    folder = spool_folder(spool)

    def retry() -> None:
        unreadable: list[InputError] = []
        for delivered in deliver_spooled(resolved, folder, on_unreadable=lambda _path, exc: unreadable.append(exc)):
            kept, stored = delivered.kept, delivered.stored
            if stored is None:
                click.echo(f"Left {kept.run_id}: kept for {kept.target}, not {resolved}.")
            elif delivered.already:
                click.echo(f"Already stored {stored.id} ({stored.set_id}, {stored.model}) in {resolved}.")
            else:
                click.echo(f"Stored {stored.id} ({stored.set_id}, {stored.model}, {stored.status}) in {resolved}.")
        if unreadable:  # the readable ones are stored first: one bad file keeps no night out
            more = f" (and {len(unreadable) - 1} more unreadable file(s), kept)" if len(unreadable) > 1 else ""
            raise InputError(f"{unreadable[0]}{more}")

    run_guarded(retry)
