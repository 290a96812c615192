"""What every kind's summary asset does alike: record the run its tables describe, once, and
report the ``run_complete`` check.

The summary also shows the comparison the ``no_regression`` check will report (the same
:func:`goldeneval.history.door.judge`), as Markdown tables, so the run's page explains itself.

A summary's stored id is derived from the Dagster run that wrote its tables, so
re-materialising it for the same tables stores nothing new.  The run is recorded under the
strictest of the specification's and the tables' privacy modes, and a pinned baseline that
cannot be used stores nothing (:func:`goldeneval.history.door.pinned_baseline`).
"""

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import dagster as dg

from assets.checks import partitioned_check
from assets.metadata import comparison_markdown, text_or_unknown
from assets.names import RUN_COMPLETE, STORE_POOL, TABLES_IO_MANAGER
from goldeneval.core.privacy import PrivacyMode, strictest
from goldeneval.core.records import StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.history import door
from goldeneval.store import Store, StoreLocation
from goldeneval.store.parquet import stored_run_id_for
from resources.goldeneval import GoldenEvalResource

__all__ = [
    "RecordedSummary",
    "build_summary_asset",
    "observed_run",
    "record_summary",
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


def record_summary(
    goldeneval: GoldenEvalResource,
    spec: door.JudgedSpec,
    run: SummarisedRun,
    *,
    grader: str,
    tables_privacy: PrivacyMode,
    tables_run_id: str,
) -> RecordedSummary:
    """Record the run rebuilt from a kind's tables, idempotently."""
    privacy = strictest(spec.privacy, tables_privacy)
    store = goldeneval.open_store()
    pinned = door.pinned_baseline(store, spec, run.set_id, grader)
    run_id = stored_run_id_for(tables_run_id, run.set_id, run.series)
    stored = door.record(store, run, privacy, run_id=run_id, tables_run_id=tables_run_id)
    verdict = door.judge(store, stored, spec, pinned=pinned)
    return RecordedSummary(store, stored, privacy, tables_run_id, verdict)


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
