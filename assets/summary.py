"""What every kind's summary asset does alike: record the run its tables describe, once, and
report the ``run_complete`` check.

The summary also shows the comparison the ``no_regression`` check will report (the same
:func:`goldeneval.history.door.judge`), as Markdown tables, so the run's page explains itself.

A summary's stored id is derived from the night it measured (:func:`night_key`: the Dagster
run that wrote its tables, or the run that one re-executes), so re-materialising it for the
same tables, or re-executing the partition's run, stores nothing new; a step whose run has
ended already stores nothing (:func:`fence`).  It is written through the door's one write
path: a store outage keeps the run in the spool, fails ``run_complete`` with the reason, and
the regression sensor delivers it (:class:`SpooledSummary`).  The run is recorded under the
strictest of the specification's and the tables' privacy modes, and a pinned baseline that
cannot be used stores nothing (:func:`goldeneval.history.door.pinned_baseline`).
"""

from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

import dagster as dg

from assets.checks import partitioned_check
from assets.metadata import comparison_markdown, text_or_unknown
from assets.names import RUN_COMPLETE, STORE_POOL, TABLES_IO_MANAGER
from goldeneval.core.errors import StoreError
from goldeneval.core.privacy import PrivacyMode, strictest
from goldeneval.core.records import StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.history import door
from goldeneval.store import Store, StoreLocation
from goldeneval.store.parquet import stored_run_id_for
from resources.goldeneval import GoldenEvalResource

__all__ = [
    "RecordedSummary",
    "SpooledSummary",
    "build_summary_asset",
    "fence",
    "night_key",
    "observed_run",
    "record_summary",
    "spooled_result",
    "store_failure",
    "store_kind",
    "store_value",
    "summary_result",
]


@dataclass(frozen=True)
class RecordedSummary:
    store: Store
    stored: StoredRun
    privacy: PrivacyMode
    tables_run_id: str
    verdict: RegressionVerdict
    """The stored run against the earlier run the specification's baseline chooses."""
    superseded: str | None = None
    """Why this step's measurement is not what the store holds for its night (a re-execution
    that measured the night again, differently): ``run_complete`` fails with it."""


def store_kind(location: StoreLocation) -> str:
    """The UI's kind tag of a store: ``postgres`` for a PostgreSQL URL, else ``duckdb``."""
    return "postgres" if location.is_postgres else "duckdb"


def store_value(location: StoreLocation) -> dg.MetadataValue:
    """Where the run was stored: the DuckDB file as a path, a PostgreSQL URL (its password
    redacted) as text, not as a file path."""
    text = str(location)
    return dg.MetadataValue.text(text) if location.is_postgres else dg.MetadataValue.path(text)


class SummarisedRun(door.RecordableRun, Protocol):
    """A run a summary records: any kind's, which names its set and its series."""

    @property
    def set_id(self) -> str: ...

    @property
    def series(self) -> str: ...


@dataclass(frozen=True)
class SpooledSummary:
    """A run the store could not take: kept in the spool, stored by the regression sensor's
    next tick (:func:`pipelines.sensors.build_regression_sensor`)."""

    kept: door.KeptInSpool
    privacy: PrivacyMode
    tables_run_id: str

    @property
    def reason(self) -> str:
        return (
            f"store unreachable, kept in the spool at {self.kept.path} ({self.kept.cause}); "
            "the regression sensor stores it at its first tick once the store is back"
        )


def night_key(instance: dg.DagsterInstance, tables_run_id: str) -> str:
    """What a night's evaluation is keyed by: the Dagster run that wrote its tables, or the
    run that one re-executes (its root run).  A re-executed partition, in full or from its
    failure, is the same night as the run it re-executes, so it stores nothing new, even when
    the first run stored the night before it was marked failed (a killed worker whose step
    went on)."""
    run = instance.get_run_by_id(tables_run_id)
    if run is None:  # the run is not in this instance (purged, or the tables were copied)
        return tables_run_id
    return run.root_run_id or run.run_id


_ENDED = (dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED, dg.DagsterRunStatus.CANCELING)


def own_run_id(context: dg.AssetExecutionContext) -> str | None:
    """The Dagster run executing the step; None for an asset invoked directly (no run)."""
    try:
        return context.run.run_id
    except dg.DagsterError:  # DagsterInvalidPropertyError, not exported: invoked directly
        return None


def fence(context: dg.AssetExecutionContext) -> None:
    """Refuse to store from a step whose run has ended: an orphaned step (its run worker was
    killed and the run marked failed, but the step's process went on) stores nothing, so the
    partition is stored by the run that re-executes it, once."""
    run_id = own_run_id(context)
    run = context.instance.get_run_by_id(run_id) if run_id is not None else None
    if run is not None and run.status in _ENDED:
        raise dg.Failure(
            description=(
                f"run {run_id} was marked {run.status.value.lower()} while this step ran (its run worker "
                "ended): nothing stored; re-execute the partition to store the night once"
            ),
            allow_retries=False,
        )


def record_summary(
    context: dg.AssetExecutionContext,
    goldeneval: GoldenEvalResource,
    spec: door.JudgedSpec,
    run: SummarisedRun,
    *,
    grader: str,
    tables_privacy: PrivacyMode,
    tables_run_id: str,
) -> RecordedSummary | SpooledSummary:
    """Record the run rebuilt from a kind's tables, once per night (:func:`night_key`), through
    the one write path of both doors (:func:`goldeneval.history.door.record_or_keep`): a store
    that cannot take it keeps it in the spool, and the summary says so
    (:class:`SpooledSummary`) instead of failing the run."""
    privacy = strictest(spec.privacy, tables_privacy)
    run_id = stored_run_id_for(night_key(context.instance, tables_run_id), run.set_id, run.series)
    fence(context)
    location = goldeneval.suite().store_location
    origin = {
        "door": "dagster",
        "summary_asset": context.asset_key.to_user_string(),
        "partition": str(context.partition_key),
        "dagster_run_id": own_run_id(context) or "",
    }
    with ExitStack() as held:
        opened: Store | StoreLocation
        try:
            opened = goldeneval.open_store()
            pinned = door.pinned_baseline(opened, spec, run.set_id, grader)
        except StoreError:
            opened, pinned = location, None  # the write below finds it down again, and keeps the run
        try:
            store, saved = door.record_or_keep(
                opened, run, privacy, held, run_id=run_id, tables_run_id=tables_run_id, origin=origin
            )
        except door.KeptInSpool as kept:
            spooled = SpooledSummary(kept, privacy, tables_run_id)
            context.log.error(f"goldeneval: {spooled.reason}")
            return spooled
        with store_failure("stored, but not judged"):
            verdict = door.judge(store, saved.stored, spec, pinned=pinned)
    return RecordedSummary(
        store, saved.stored, privacy, tables_run_id, verdict, superseded(saved.stored, run, privacy, tables_run_id)
    )


def superseded(stored: StoredRun, run: SummarisedRun, privacy: PrivacyMode, tables_run_id: str) -> str | None:
    """Why the night the store holds is not this step's measurement, or None: the night was
    stored from another run's tables (a re-execution measured it again) and measured other
    rates or another benchmark.  The store keeps the first measurement of a night."""
    if stored.tables_run_id in (None, tables_run_id):
        return None
    record = run.to_record(privacy, tables_run_id=tables_run_id)
    same = (record.pass_rate, record.mean_score, record.benchmark_fingerprint) == (
        stored.pass_rate,
        stored.mean_score,
        stored.benchmark_fingerprint,
    )
    if same:
        return None
    return (
        f"this night was stored already from the tables of run {stored.tables_run_id} "
        f"(stored run {stored.id}); this re-execution measured it again, differently, and the store keeps "
        "the first measurement: launch a new run (not a re-execution) to measure again"
    )


@contextmanager
def store_failure(what: str) -> Iterator[None]:
    """A store error as the step's failure, goldeneval's one line in the run's event log (not
    a traceback): ``what`` says how far the step got."""
    try:
        yield
    except StoreError as exc:
        raise dg.Failure(description=f"goldeneval: {what}: {exc}", allow_retries=False) from None


def observed_run(recorded: RecordedSummary, plotted: Mapping[str, Any]) -> dict[str, Any]:
    """What the series assets observe of a stored run (``assets.series.observe``): the kind's
    plotted values, then the run's id, its verdict and its status."""
    return {
        **plotted,
        "stored_run_id": recorded.stored.id,
        "verdict": recorded.verdict.status.value,
        "status": recorded.stored.status,
    }


def summary_result(
    recorded: RecordedSummary,
    identity: Mapping[str, Any],
    metadata: Mapping[str, Any],
    completion: tuple[bool, str],
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """The summary's metadata (the kind's identity and metadata, then the provenance every run
    has) and its ``run_complete`` check, whose reason (the kind's ``Completion.of``) says how
    many of the run's items failed.  Both carry the identity with the stored run's id, which the
    regression sensor and check read: added here, for every kind."""
    stored = recorded.stored
    identity = {**identity, "stored_run_id": stored.id}
    complete, reason = completion
    verdict = "complete" if complete else "incomplete"
    if recorded.superseded is not None:
        complete, reason, verdict = False, recorded.superseded, "not stored"
    return dg.MaterializeResult(
        metadata={
            **identity,
            **metadata,
            "label_digest": text_or_unknown(stored.label_digest),
            "benchmark_fingerprint": text_or_unknown(stored.benchmark_fingerprint),
            "variant_fingerprint": text_or_unknown(stored.variant_fingerprint),
            "privacy": recorded.privacy.value,
            "store": store_value(recorded.store.location),
            "store_kind": store_kind(recorded.store.location),
            "tables_run_id": recorded.tables_run_id,
            "comparison": dg.MetadataValue.md(comparison_markdown(recorded.verdict, recorded.privacy)),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=RUN_COMPLETE,
                passed=complete,
                severity=dg.AssetCheckSeverity.ERROR,
                description=f"{verdict}: {reason}",
                metadata={**identity, "verdict": verdict, "reason": reason},
            )
        ],
    )


def spooled_result(spooled: SpooledSummary, identity: Mapping[str, Any]) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """The summary of a run kept in the spool: no stored run (the regression sensor judges it
    once it is delivered), and a failed ``run_complete`` check that names the spool file, so
    the alert sensor sends its one alert."""
    identity = {**identity, "spooled_run_id": spooled.kept.run_id}
    reason = spooled.reason
    return dg.MaterializeResult(
        metadata={
            **identity,
            "status": "not stored",
            "spool_file": dg.MetadataValue.path(str(spooled.kept.path)),
            "privacy": spooled.privacy.value,
            "tables_run_id": spooled.tables_run_id,
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=RUN_COMPLETE,
                passed=False,
                severity=dg.AssetCheckSeverity.ERROR,
                description=f"not stored: {reason}",
                metadata={**identity, "verdict": "not stored", "reason": reason},
            )
        ],
    )


def build_summary_asset(
    body: Callable[..., Any],
    *,
    name: str,
    group: str,
    table: str,
    partitions_def: dg.MultiPartitionsDefinition,
    check_description: str,
    description: str,
    store_kind: str = "duckdb",
) -> Any:
    """A kind's summary asset: reads its main table through the Parquet IO manager, takes the
    store's pool, and carries the ``run_complete`` check.  Its kind tag names the store the
    suite writes to (``duckdb`` or ``postgres``: :func:`store_kind`)."""
    return dg.asset(
        name=name,
        partitions_def=partitions_def,
        group_name=group,
        kinds={store_kind},
        ins={table: dg.AssetIn(input_manager_key=TABLES_IO_MANAGER)},
        pool=STORE_POOL,
        check_specs=[partitioned_check(RUN_COMPLETE, name, partitions_def, check_description)],
        description=description,
    )(body)
