"""The README's main command: the nightly job over every partition, on the embedded default.

``python -m pipelines.main`` (``scripts/main.sh``) runs, in this process and against the
Dagster instance in ``$DAGSTER_HOME`` (default ``.dagster_home`` in the project folder, kept
between invocations):

1. each declared run kind's nightly job (``nightly_evaluation`` over (set x retriever),
   ``nightly_prompt_evaluation`` over (prompt set x model), ...) once per partition the suite
   file declares;
2. one tick of each sensor, as the daemon would: each kind's regression sensor's runs are
   executed here, tagged with the sensor's run keys so that a daemon started later skips
   them; ``check_alert_sensor`` posts alerts for failed checks when a channel is configured;
3. a summary: the rates per partition, the verdicts, the checks, where everything is stored,
   and how to open the UI on the same instance.

The store, the tables and the cache are resolved as the ``goldeneval`` command resolves them
(``goldeneval.core.storage``): ``$GOLDENEVAL_STORE``, ``$GOLDENEVAL_TABLES``,
``$GOLDENEVAL_CACHE``, else the suite file's ``storage:``, else ``.goldeneval/`` beside it.

``--partition SET|RETRIEVER`` (``PROMPT_SET|MODEL``, or another declared kind's dimensions;
repeatable) runs only those partitions of the nightly jobs; the sensors still tick and the
summary shows every partition.

Exit status 0 when every run succeeded (a regression is reported, like ``goldeneval
retrieval`` without ``--fail-on-regression``), 1 when a run failed, 2 for a ``--partition``
the suite file does not declare, 3 for a suite file that cannot be read (one line, naming
the file and the field, as the ``goldeneval`` command prints an input error).

Like the ``goldeneval`` command, a one-shot process: the collector runs less often while it
works (``goldeneval.core.collector.fewer_collections``), and what it allocated is not scanned
again while the interpreter shuts down (:func:`ending`).
"""

from __future__ import annotations

import argparse
import gc
import os
import shutil
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import dagster as dg

from assets import NO_REGRESSION, RUN_COMPLETE
from assets.partitions import kind_cell
from goldeneval.core.collector import fewer_collections
from goldeneval.core.errors import GoldenEvalError, printable
from goldeneval.kinds import KindDeclaration, declared_kinds
from goldeneval.store.parquet import REPORTS_FOLDER
from goldeneval.suite import Suite, load_suite
from pipelines.build import definitions_for
from pipelines.config import PROJECT_DIR, suite_path
from pipelines.dagster_internals import RUN_KEY_TAG, SENSOR_NAME_TAG, PartitionKeyFilter, drop_captured_outputs
from pipelines.jobs import NIGHTLY_JOB, REGRESSION_JOB
from pipelines.sensors import ALERT_SENSOR, REGRESSION_SENSOR, sensor_context

DAGSTER_HOME_ENV = "DAGSTER_HOME"
DEFAULT_DAGSTER_HOME = PROJECT_DIR / ".dagster_home"
INSTANCE_TEMPLATE = Path(__file__).with_name("dagster.yaml")


def sensor_cursor_key(sensor_name: str) -> str:
    """Where the main command keeps a regression sensor's cursor in the instance."""
    return f"goldeneval/main/{sensor_name}_cursor"


REGRESSION_CURSOR_KEY = sensor_cursor_key(REGRESSION_SENSOR)
QUIET: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
USAGE_ERROR = 2
"""Exit status for a ``--partition`` the suite file does not declare (the CLI's usage error)."""
SUITE_ERROR = 3
"""Exit status for a suite file that cannot be read (the CLI's invalid input)."""
STORE_ERROR = 5
"""Exit status when the store could not take a night, kept in the spool (the CLI's store error)."""


def prepare_home() -> Path:
    """``$DAGSTER_HOME`` (set to the project's ``.dagster_home`` when unset), with the
    instance settings goldeneval needs (the store pool of one) when it has none."""
    home = Path(os.environ.setdefault(DAGSTER_HOME_ENV, str(DEFAULT_DAGSTER_HOME))).resolve()
    os.environ[DAGSTER_HOME_ENV] = str(home)
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
    return home


def _merge(base: Mapping[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        merged[key] = (
            _merge(merged[key], value) if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping) else value
        )
    return merged


def kinds_in(defs: dg.Definitions) -> list[KindDeclaration]:
    """The declared run kinds the definitions hold partitions of (their nightly job), in order."""
    jobs = {job.name for job in defs.jobs or []}
    return [kind for kind in declared_kinds() if kind.names.job in jobs]


def _partition_words(kind: KindDeclaration) -> str:
    return "|".join(dimension.upper() for dimension in kind.dimensions)


@dataclass(frozen=True)
class FinishedRun:
    """What the command keeps of a run it executed: its id and whether it succeeded.

    Not Dagster's :class:`~dagster.ExecuteInProcessResult`, which holds every output of the
    run's steps (a 100,000-question partition's golden set, rankings and hits tables: some
    150 MiB) for as long as it is kept."""

    run_id: str
    success: bool
    kept: tuple[str, ...] = ()
    """The spool files its summaries wrote: nights the store could not take."""


def released(result: dg.ExecuteInProcessResult) -> FinishedRun:
    """The run ``result`` describes, the outputs Dagster captured for it let go.

    Dropping the result is not enough: Dagster 1.13 keeps the first run's step context, and
    with it the outputs it captured, to the end of the process; so the capture is emptied
    (:func:`~pipelines.dagster_internals.drop_captured_outputs`), and the tables go as soon as
    nothing else holds them.  Three 100,000-question partitions peaked at 1,358 to 1,386 MiB
    when the results were kept, 923 to 925 MiB since (one alone: 944 to 1,003 MiB).  A full
    collection after each run as well would free the rest of the run's reference cycles at
    once, but it cost a four-partition nightly job of small sets 16% more time for 26 MiB."""
    kept = tuple(
        str(event.materialization.metadata["spool_file"].value)
        for event in result.get_asset_materialization_events()
        if "spool_file" in event.materialization.metadata
    )
    finished = FinishedRun(result.run_id, result.success, kept)
    drop_captured_outputs(result)
    return finished


def run_nightly(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    job_name: str = NIGHTLY_JOB,
    only: frozenset[str] | None = None,
) -> list[FinishedRun]:
    """Run ``job_name`` once per partition (``only`` those keys, when given), one after the
    other, each run's outputs released before the next starts."""
    job = defs.resolve_job_def(job_name)
    partitions = job.partitions_def
    assert partitions is not None
    return [
        released(job.execute_in_process(partition_key=key, instance=instance, run_config=QUIET, raise_on_error=False))
        for key in partitions.get_partition_keys()
        if only is None or key in only
    ]


class UnknownPartition(ValueError):
    """A ``--partition`` the suite file does not declare."""


def chosen_partitions(defs: dg.Definitions, names: list[str]) -> frozenset[str] | None:
    """The Dagster partition keys of ``--partition SET|RETRIEVER`` (or ``PROMPT_SET|MODEL``, or
    another kind's dimensions) values, in whichever job declares them; None when none was given
    (every partition)."""
    if not names:
        return None
    known: dict[str, str] = {}
    for kind in kinds_in(defs):
        partitions = defs.resolve_job_def(kind.names.job).partitions_def
        assert partitions is not None
        for key in partitions.get_partition_keys():
            where = kind_cell(key, kind)
            known["|".join(where[name] for name in kind.dimensions)] = key
    unknown = [name for name in names if name not in known]
    if unknown:
        shapes = " or ".join(_partition_words(kind) for kind in declared_kinds())
        raise UnknownPartition(
            f"--partition {unknown[0]!r}: the suite file declares no such {shapes} "
            f"partition; it declares {', '.join(sorted(known))}"
        )
    return frozenset(known[name] for name in names)


def run_regression_sensor(
    defs: dg.Definitions,
    instance: dg.DagsterInstance,
    sensor_name: str = REGRESSION_SENSOR,
    job_name: str = REGRESSION_JOB,
    cursor_key: str = REGRESSION_CURSOR_KEY,
) -> list[FinishedRun]:
    """Tick a regression sensor until it has nothing new; run what it asks for, once."""
    sensor = defs.resolve_sensor_def(sensor_name)
    job = defs.resolve_job_def(job_name)
    cursor = instance.run_storage.get_cursor_values({cursor_key}).get(cursor_key)
    results: list[FinishedRun] = []
    while True:
        tick = sensor.evaluate_tick(sensor_context(defs, instance, cursor))
        for request in tick.run_requests or []:
            key = request.run_key or ""
            done = instance.get_runs(
                filters=dg.RunsFilter(tags={RUN_KEY_TAG: key, SENSOR_NAME_TAG: sensor_name}), limit=1
            )
            if done:
                continue
            results.append(
                released(
                    job.execute_in_process(
                        partition_key=request.partition_key,
                        run_config=_merge(request.run_config, QUIET),
                        tags={**request.tags, RUN_KEY_TAG: key, SENSOR_NAME_TAG: sensor_name},
                        instance=instance,
                        raise_on_error=False,
                    )
                )
            )
        if tick.cursor is None or tick.cursor == cursor:
            return results
        cursor = tick.cursor
        instance.run_storage.set_cursor_values({cursor_key: cursor})


def run_alert_sensor(defs: dg.Definitions, instance: dg.DagsterInstance) -> str:
    sensor = defs.resolve_sensor_def(ALERT_SENSOR)
    return sensor.evaluate_tick(sensor_context(defs, instance)).skip_message or ""


def _latest(instance: dg.DagsterInstance, asset: str, partition: str) -> dict[str, Any]:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition]), limit=1
    ).records
    if not records or records[0].asset_materialization is None:
        return {}
    return {k: v.value for k, v in records[0].asset_materialization.metadata.items()}


def _checks(
    instance: dg.DagsterInstance,
    partition: str,
    assets: tuple[str, str] = ("evaluation_summary", "regression_check"),
) -> list[str]:
    lines = []
    for asset, check in ((assets[0], RUN_COMPLETE), (assets[1], NO_REGRESSION)):
        key = dg.AssetCheckKey(dg.AssetKey(asset), check)
        history = instance.event_log_storage.get_asset_check_execution_history(
            key, limit=1, partition_filter=PartitionKeyFilter(key=partition)
        )
        status = history[0].status.value.lower() if history else "not evaluated"
        lines.append(f"{check} {status}")
    return lines


def _rate(value: Any) -> str:
    return "  n/a" if value is None else f"{float(value):.3f}"


def summary(defs: dg.Definitions, instance: dg.DagsterInstance, home: Path, suite: Suite | None = None) -> str:
    """The summary printed at the end; ``suite``: the suite file the definitions were built
    from (read again when not given)."""
    suite = suite or load_suite(suite_path())
    lines: list[str] = []
    for kind in kinds_in(defs):
        lines += _kind_summary(defs, instance, kind)
    lines += [
        "",
        f"Result store:    {suite.store_location}",
        f"Parquet tables:  {suite.tables_root}  (read all history with DuckDB: docs/guide/dagster.md)",
        f"HTML reports:    {suite.tables_root / REPORTS_FOLDER}  (one per judged run; also: goldeneval report RUN)",
        f"Index cache:     {suite.cache_dir}",
        f"Dagster home:    {home}",
        f"Privacy mode:    {suite.privacy.value}",
        "",
        "Open the UI on these runs:",
        f"  DAGSTER_HOME={home} .venv/bin/dagster dev      (or: .venv/bin/dg dev)",
        "  then http://127.0.0.1:3000 — the daemon it starts also runs the nightly schedule and the sensors.",
    ]
    return "\n".join(lines)


def _kind_summary(defs: dg.Definitions, instance: dg.DagsterInstance, kind: KindDeclaration) -> list[str]:
    """A kind's partitions: its two rates, the verdict, the checks."""
    job = defs.resolve_job_def(kind.names.job)
    assert job.partitions_def is not None
    (first, first_key), (second, second_key) = kind.rates
    set_dimension, member_dimension = kind.dimensions
    header = (
        f"{set_dimension.replace('_', ' '):<24} {member_dimension.replace('_', ' '):<20} {first:>6} {second:>6}"
        "  verdict      checks"
    )
    lines = ["", kind.title, "", header, "-" * len(header)]
    for key in job.partitions_def.get_partition_keys():
        where = kind_cell(key, kind)
        summary_md = _latest(instance, kind.summary, key)
        verdict = _latest(instance, kind.names.regression_check, key).get("verdict", "-")
        checks = _checks(instance, key, (kind.summary, kind.names.regression_check))
        lines.append(
            f"{where[set_dimension]:<24} {where[member_dimension]:<20} {_rate(summary_md.get(first_key)):>6} "
            f"{_rate(summary_md.get(second_key)):>6}  {verdict:<12} {', '.join(checks)}"
        )
    return lines


def parser_for(kinds: Sequence[KindDeclaration]) -> argparse.ArgumentParser:
    """The command's arguments, its help naming the partitions of the declared ``kinds``."""
    cells = ", ".join(f"({kind.cell})" for kind in kinds)
    shapes = ", ".join(_partition_words(kind) for kind in kinds)
    parser = argparse.ArgumentParser(
        prog="scripts/main.sh",
        description=f"Run each run kind's nightly goldeneval job over every partition of goldeneval.yaml ({cells}) "
        "on the embedded default (DuckDB + Parquet, DAGSTER_HOME=.dagster_home), then print the summary. The "
        "store, tables and cache: $GOLDENEVAL_STORE, $GOLDENEVAL_TABLES, $GOLDENEVAL_CACHE, else the suite "
        "file's storage:, else .goldeneval/ beside it.",
    )
    parser.add_argument(
        "--partition",
        action="append",
        default=[],
        metavar="PARTITION",
        help=f"Run only this partition, named by its kind's dimensions ({shapes}); repeatable.",
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = parser_for(declared_kinds())
    args = parser.parse_args(argv)
    home = prepare_home()
    with fewer_collections():  # a one-shot process, as the goldeneval command (goldeneval.core.collector)
        return _run_everything(home, args.partition)


def _run_everything(home: Path, partitions: list[str] | None = None) -> int:
    try:
        suite = load_suite(suite_path())
    except GoldenEvalError as exc:  # the suite file: one line, as the goldeneval command prints it
        print(f"goldeneval: error: {printable(' '.join(str(exc).split()))}", file=sys.stderr)
        return SUITE_ERROR
    defs = definitions_for(suite)
    try:
        only = chosen_partitions(defs, partitions or [])
    except UnknownPartition as exc:
        print(f"goldeneval: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    with dg.DagsterInstance.get() as instance:
        runs: list[FinishedRun] = []
        for kind in kinds_in(defs):
            sensor, job = kind.names.regression_sensor, kind.names.regression_job
            runs += run_nightly(defs, instance, kind.names.job, only=only)
            runs += run_regression_sensor(defs, instance, sensor, job, sensor_cursor_key(sensor))
        alerts = run_alert_sensor(defs, instance)
        print(summary(defs, instance, home, suite))
        print(f"Alerts:          {alerts}")
        failed = [r.run_id for r in runs if not r.success]
    if failed:
        print(f"goldeneval: error: {len(failed)} run(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    kept = [path for run in runs for path in run.kept if Path(path).exists()]  # not delivered meanwhile
    if kept:
        print(
            f"goldeneval: error: the store could not take {len(kept)} night(s); kept in the spool: "
            f"{', '.join(kept)}; the regression sensor stores them once the store is back (or: goldeneval "
            "store retry)",
            file=sys.stderr,
        )
        return STORE_ERROR
    return 0


def ending() -> None:
    """Before the process ends: freeze what it allocated (Dagster's definitions and instance,
    the run's tables: some 300,000 objects), so that the collections the interpreter runs
    while it shuts down do not scan all of it again (half a second).  Nothing is lost: a
    process that ends frees its memory whole, and whatever is not in a reference cycle is
    still released (files closed, buffers flushed) as the modules are cleared."""
    gc.freeze()


def command(argv: list[str] | None = None) -> NoReturn:
    """``python -m pipelines.main``: :func:`main`, then the process ends with its status."""
    status = main(argv)
    ending()
    sys.exit(status)


if __name__ == "__main__":  # pragma: no cover
    command()
