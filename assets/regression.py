"""The regression check of every kind of run: the verdict of one stored summary, and the gate
as an asset check.

One factory, :func:`build_regression_check`, takes a kind's :class:`CheckedKind` (which
summary it judges, how it names the run and its rates: ``assets.metadata.RunLabels``) and
builds the asset; retrieval runs
get ``regression_check`` (``assets.evaluation``) and prompt runs ``prompt_regression_check``
(``assets.prompts``) from it.  Materialised by
the regression sensor once per stored run (the sensor passes the stored run id in the run
config); materialised by hand, it judges the partition's latest summary.  The verdict is
:func:`goldeneval.history.door.judge`, and ``no_regression`` passes exactly when the gate of
``--fail-on-regression`` would: only a baseline and a passing comparable run.

Beside the verdict the check shows what changed, from the comparison built around that verdict
(:func:`goldeneval.report.runs.comparison_for`, never judged again): its description names the
newly failing questions with their text and what came back instead
(:func:`goldeneval.report.check.check_description`, privacy permitting), and the run's HTML
report (:func:`goldeneval.report.html.write_report`) is written beside the Parquet tables, at
``<tables>/reports/<stored run id>.html``, its path the ``report`` metadata of the check and
of the materialisation.
"""

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from assets.checks import partitioned_check
from assets.metadata import RunLabels, comparison_markdown
from assets.names import NO_REGRESSION, STORE_POOL
from assets.summary import store_failure
from goldeneval.core.errors import GoldenEvalError, StoreError
from goldeneval.core.gate import GateDecision
from goldeneval.core.privacy import PrivacyMode, strictest
from goldeneval.core.records import StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.history import door
from goldeneval.report.check import check_description
from goldeneval.report.html import write_report
from goldeneval.report.runs import SourceRefs, comparison_for
from goldeneval.store import Store
from goldeneval.store.parquet import report_file
from resources.goldeneval import GoldenEvalResource


class RegressionCheckConfig(dg.Config):
    stored_run_id: str = ""
    """The stored run to judge (an id or a unique prefix); empty: the partition's latest summary."""


@dataclass(frozen=True)
class CheckedKind:
    """What a kind of run gives its regression check."""

    name: str
    """The check asset's name."""
    summary_key: dg.AssetKey
    """The summary asset whose stored runs it judges."""
    group: str
    spec: Callable[[GoldenEvalResource, str], door.JudgedSpec]
    """The partition's run specification (its thresholds and baseline)."""
    labels: RunLabels
    """How its metadata names the run and its rates (the kind's summary names them alike)."""
    check_description: str
    description: str


def latest_summary_run_id(context: dg.AssetExecutionContext, summary_key: dg.AssetKey) -> str:
    """The stored run of the partition's latest summary materialisation."""
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=summary_key, asset_partitions=[context.partition_key]), limit=1
    ).records
    if not records or records[0].asset_materialization is None:
        raise StoreError(
            f"partition {context.partition_key}: no {summary_key.to_user_string()} yet; materialise it first"
        )
    return str(records[0].asset_materialization.metadata["stored_run_id"].value)


def stored_privacy(spec_privacy: PrivacyMode, stored: StoredRun) -> PrivacyMode:
    """The strictest of the specification's mode and the one the run was stored under: what
    the comparison shown beside it may hold."""
    recorded = [PrivacyMode(stored.privacy)] if stored.privacy in {m.value for m in PrivacyMode} else []
    return strictest(spec_privacy, *recorded)


def source_refs(spec: object) -> SourceRefs:
    """Where a comparison reads the question text and the documents' titles from: the run
    specification's set, sets folders and corpus (a retrieval ``RunSpec``, a prompt run's
    spec); a kind whose spec names none gets the run's registered set and its corpus."""
    set_ref = getattr(spec, "set_ref", None)
    corpus = getattr(spec, "corpus", None)
    return SourceRefs(
        set_ref=str(set_ref) if set_ref else None,
        sets_dirs=tuple(Path(d) for d in getattr(spec, "sets_dirs", None) or ()),
        corpus_path=Path(corpus) if corpus else None,
        beir_split=str(getattr(spec, "beir_split", None) or "test"),
    )


def describe_verdict(
    context: dg.AssetExecutionContext,
    store: Store,
    stored: StoredRun,
    verdict: RegressionVerdict,
    privacy: PrivacyMode,
    refs: SourceRefs,
    tables_root: Path,
) -> tuple[str, Path | None]:
    """The check's description and the HTML report's path, from the comparison around the
    verdict just made.  The verdict is what the check reports: a comparison that cannot be
    built or a report that cannot be written is said in the description, never a failed step."""
    try:
        comparison = comparison_for(store, stored, verdict=verdict, privacy=privacy, refs=refs, trend=False)
    except GoldenEvalError as exc:
        why = str(exc) if privacy is PrivacyMode.FULL else type(exc).__name__  # metadata_only: no message
        context.log.warning(f"no comparison for run {stored.id}: {why}")
        return f"{verdict.summary}\n\nComparison not shown: {why}", None
    path: Path | None = None
    try:
        path = write_report(comparison, report_file(tables_root, stored.id))
    except (GoldenEvalError, OSError) as exc:
        context.log.warning(f"no HTML report for run {stored.id}: {exc}")
    description = check_description(comparison, report_path=None if path is None else str(path))
    return description, path


def judge_partition(
    kind: CheckedKind, context: dg.AssetExecutionContext, config: RegressionCheckConfig, goldeneval: GoldenEvalResource
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """The body of every regression check: judge the stored run, report the gate."""
    spec = kind.spec(goldeneval, context.partition_key)
    with store_failure("not judged"):
        store = goldeneval.open_store()
        stored = store.find_run(config.stored_run_id or latest_summary_run_id(context, kind.summary_key))
        verdict = door.judge(store, stored, spec)
    gate = verdict.gate(stored.complete)
    identity: dict[str, Any] = {
        **kind.labels.identity(stored.set_id, stored.model, stored.pass_rate, stored.mean_score),
        "stored_run_id": stored.id,
        "verdict": verdict.status.value,
        "state": verdict.state.value,
        "reason": verdict.reason,
        "gate": gate.value,
        "previous_run_id": verdict.previous_run_id or "none",
    }
    if verdict.reference is not None:  # baseline: accepted: which run was the level, and who accepted it
        identity["reference"] = verdict.reference
    privacy = stored_privacy(spec.privacy, stored)
    comparison = dg.MetadataValue.md(comparison_markdown(verdict, privacy))
    description, report = describe_verdict(
        context, store, stored, verdict, privacy, source_refs(spec), goldeneval.suite().tables_root
    )
    shown: dict[str, Any] = {"comparison": comparison}
    if verdict.benchmark_change is not None:  # a mismatch the manifests explain: what changed, no numeric verdict
        shown["benchmark_change"] = dg.MetadataValue.json(verdict.benchmark_change.to_dict())
    if verdict.informational is not None:
        shown["informational"] = dg.MetadataValue.json(verdict.informational.to_dict())
    if report is not None:
        shown["report"] = dg.MetadataValue.path(str(report))
    return dg.MaterializeResult(
        metadata={
            **identity,
            "regressed": verdict.regressed,
            **shown,
            "verdict_details": dg.MetadataValue.json(verdict.to_dict()),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=NO_REGRESSION,
                passed=gate is GateDecision.PASS,
                severity=dg.AssetCheckSeverity.ERROR,
                description=description,
                metadata={**identity, **shown},
            )
        ],
    )


def build_regression_check(kind: CheckedKind, partitions_def: dg.MultiPartitionsDefinition) -> Any:
    """The kind's regression check asset over its partitions."""

    def check(
        context: dg.AssetExecutionContext, config: RegressionCheckConfig, goldeneval: GoldenEvalResource
    ) -> dg.MaterializeResult:  # type: ignore[type-arg]
        return judge_partition(kind, context, config, goldeneval)

    return dg.asset(
        name=kind.name,
        partitions_def=partitions_def,
        group_name=kind.group,
        deps=[kind.summary_key],
        pool=STORE_POOL,
        check_specs=[partitioned_check(NO_REGRESSION, kind.name, partitions_def, kind.check_description)],
        description=kind.description,
    )(check)


__all__ = [
    "NO_REGRESSION",
    "CheckedKind",
    "RegressionCheckConfig",
    "build_regression_check",
    "latest_summary_run_id",
    "source_refs",
]
