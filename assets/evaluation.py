"""The evaluation assets: golden sets -> rankings -> per-question hits -> stored summary.

Thin on purpose: each body builds the partition's run specification, calls one verb of
:mod:`goldeneval.retrieval.pipeline` (the same verbs the CLI calls), and attaches metadata.  Tables
travel between assets through the Parquet IO manager (``assets.io_manager``), keyed by
partition and run.  The bodies are module-level functions, decorated by
:func:`build_evaluation_assets` for the suite's partitions.
"""

import warnings
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import dagster as dg
import pyarrow as pa

from assets.handoff import RunHandOff
from assets.kinds import KindAssets
from assets.metadata import RunLabels, float_rates, shown_counts, shown_rates, table_metadata
from assets.names import GROUP
from assets.partitions import RETRIEVAL_FOLDERS, cell
from assets.regression import CheckedKind, build_regression_check
from assets.series import RETRIEVAL_SERIES, CliRuns, build_series_specs, observe
from assets.summary import SpooledSummary, observed_run, record_summary, spooled_result, summary_result
from assets.tables import EvaluatedKind, Table, build_kind_assets, full_table, table_output
from goldeneval.core.errors import StoreError
from goldeneval.core.forms import NO_HARD_CLASS
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RETRIEVAL_GRADER, StoredRun
from goldeneval.history import door
from goldeneval.kinds.retrieval import RETRIEVAL
from goldeneval.retrieval import pipeline
from goldeneval.retrieval.details import QUESTIONS_COMPLETION, RetrievalDetails, retrieval_details
from goldeneval.retrieval.golden import GoldenQuestion
from goldeneval.retrieval.labels import label_digest
from goldeneval.retrieval.measurement import judged_measurement, judged_values, measurement
from goldeneval.retrieval.results import RateSummary
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.tables import (
    golden_set_table,
    hits_table,
    hits_tables_run_id,
    rankings_table,
    run_from_hits,
    run_privacy,
)
from goldeneval.store import Store
from resources.goldeneval import GoldenEvalResource

HITS_PREVIEW_COLUMNS = (
    "question_id",
    "form",
    "hard_class",
    "status",
    "top1_hit",
    "top3_hit",
    "latency_ms",
    "top_documents",
)
RETRIEVAL_LABELS = RunLabels.of(RETRIEVAL)
"""How retrieval's summary and checks name a run: its set and retriever, ``top-1`` and ``top-3``."""
EVALUATED_RUNS: RunHandOff[RetrievalRun] = RunHandOff()
"""The evaluated runs waiting for their summary in this process (:mod:`assets.handoff`)."""


def rates(summary: RateSummary, prefix: str = "") -> dict[str, float | None]:
    """A retrieval summary's top-1 and top-3 hit rates, by name: shown as text on the
    partitioned assets (:func:`assets.metadata.shown_rates`), plotted as floats on the
    per-series keys (:func:`assets.metadata.float_rates`)."""
    return {f"{prefix}top1_hit_rate": summary.top1_rate, f"{prefix}top3_hit_rate": summary.top3_rate}


def stored_plotted(store: Store, stored: StoredRun) -> dict[str, float | None]:
    """What a stored run plots on its series key, from the store alone (a run the CLI stored,
    :data:`RETRIEVAL_CLI_RUNS`): the names and values the summary observes for its own runs."""
    details = retrieval_details(stored)
    by_slice: dict[str, float | None] = {}
    for rates_ in store.slices(stored.id):
        if rates_.kind in ("form", "hard_class"):
            by_slice[f"{rates_.kind}={rates_.value}/top1_hit_rate"] = rates_.pass_rate
            by_slice[f"{rates_.kind}={rates_.value}/top3_hit_rate"] = rates_.mean_score
    overall = {"top1_hit_rate": stored.pass_rate, "top3_hit_rate": stored.mean_score}
    return {**overall, **by_slice, **rank_metric_values(measurement(details)), **judged_values(details)}


def rank_metric_values(measured: Mapping[str, Any]) -> dict[str, float | None]:
    """Each reported rank metric by name (``metric/ndcg@10``)."""
    return {f"metric/{metric['name']}": metric["value"] for metric in measured["metrics"]}


def rank_metrics(measured: Mapping[str, Any]) -> dict[str, Any]:
    """Each reported rank metric as text (``metric/ndcg@10``: plotted per series, on
    ``series/<set>/<retriever>``, not here across partitions) and the whole measurement
    (definitions from the registry, depth, relevance level, the questions left out) as JSON:
    :func:`goldeneval.retrieval.report.measurement`."""
    return {**shown_rates(rank_metric_values(measured)), "measurement": dg.MetadataValue.json(dict(measured))}


def _counts(values: list[str]) -> dict[str, int]:
    return dict(sorted(Counter(values).items()))


def golden_question_sets(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> dg.Output[pa.Table]:
    spec = goldeneval.run_spec(cell(context.partition_key))
    golden_set = pipeline.load_golden_set(spec)
    digest = label_digest(golden_set)
    table = golden_set_table(golden_set, spec.privacy, context.run.run_id, datetime.now(UTC))
    questions = golden_set.questions
    with warnings.catch_warnings():  # Output's data_version is a beta parameter of Dagster 1.13
        warnings.filterwarnings("ignore", category=dg.BetaWarning)
        return _set_output(table, questions, digest, spec.privacy)


def _set_output(
    table: pa.Table, questions: Sequence[GoldenQuestion], digest: str, privacy: PrivacyMode
) -> dg.Output[pa.Table]:
    return dg.Output(
        table,
        metadata={
            **shown_counts({"question_count": len(questions)}),
            "count_by_form": dg.MetadataValue.json(_counts([q.form.value for q in questions])),
            "count_by_hard_class": dg.MetadataValue.json(_counts([q.hard_class or NO_HARD_CLASS for q in questions])),
            "label_digest": digest,
            "privacy": privacy.value,
            **table_metadata(table),
        },
        data_version=dg.DataVersion(digest),
    )


def retrieval(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> Iterator[dg.Output[pa.Table]]:
    spec = goldeneval.run_spec(cell(context.partition_key))
    run = pipeline.evaluate(spec)
    for warning in run.warnings:
        context.log.warning(warning)
    rankings = rankings_table(run, spec.privacy, context.run.run_id)
    counted = shown_counts({"question_count": len(run.results)})
    yield table_output(rankings, "retriever_rankings", spec.privacy, counted)
    hits = hits_table(run, spec.privacy, context.run.run_id)
    try:  # the summary may rebuild the run from its table, which holds no manifest
        door.keep_manifest(goldeneval.open_store(), run.manifest, spec.privacy)
    except StoreError as exc:  # the summary reports the store; without a manifest a mismatch says less
        context.log.warning(f"the benchmark manifest was not kept: {exc}")
    EVALUATED_RUNS.keep(context.run.run_id, context.partition_key, run)
    overall = run.aggregates.overall
    rated = {
        **shown_rates(rates(overall)),
        **shown_counts({"errors": overall.errors}),
        "warnings": dg.MetadataValue.json(list(run.warnings)),
    }
    where = cell(context.partition_key)
    full = full_table(goldeneval.suite().tables_root, "question_hits", where, context.run.run_id)
    yield table_output(hits, "question_hits", spec.privacy, rated, preview=HITS_PREVIEW_COLUMNS, full=full)


def evaluation_summary(
    context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource, question_hits: pa.Table
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """Record the run the hits describe (once: :func:`assets.summary.record_summary`): the
    evaluation's own run when this process evaluated it (:mod:`assets.handoff`), else the
    run rebuilt from the table."""
    where = cell(context.partition_key)
    tables_run_id = hits_tables_run_id(question_hits)
    evaluated = EVALUATED_RUNS.take(tables_run_id, context.partition_key)
    run = evaluated if evaluated is not None else run_from_hits(question_hits)
    recorded = record_summary(
        context,
        goldeneval,
        goldeneval.run_spec(where),
        run,
        grader=RETRIEVAL_GRADER,
        tables_privacy=run_privacy(question_hits),
        tables_run_id=tables_run_id,
    )
    aggregates = run.aggregates
    overall = aggregates.overall
    identity = RETRIEVAL_LABELS.identity(where["set"], where["retriever"], overall.top1_rate, overall.top3_rate)
    if isinstance(recorded, SpooledSummary):
        return spooled_result(recorded, identity)
    stored = recorded.stored
    by_slice: dict[str, float | None] = {}
    for kind, groups in (("form", aggregates.by_form), ("hard_class", aggregates.by_hard_class)):
        for value, summary in groups.items():
            by_slice.update(rates(summary, prefix=f"{kind}={value}/"))
    details = retrieval_details(stored)
    measured = measurement(details)
    metadata = {
        **shown_rates(by_slice),
        **shown_counts(
            {"question_count": overall.questions, "scored_count": overall.scored, "error_count": overall.errors}
        ),
        "status": stored.status,
        "rates_by_slice": dg.MetadataValue.json(
            {
                "by_form": {k: v.to_dict() for k, v in aggregates.by_form.items()},
                "by_hard_class": {k: v.to_dict() for k, v in aggregates.by_hard_class.items()},
            }
        ),
        **rank_metrics(measured),
        **_judged_metadata(details),
        **full_table(goldeneval.suite().tables_root, "question_hits", where, tables_run_id),
    }
    # The floats the UI plots: on the series' own key, one point per night (assets.series).
    plotted = {**rates(overall), **by_slice, **rank_metric_values(measured), **judged_values(details)}
    observe(context, where, goldeneval.suite().retrieval_cells.series, observed_run(recorded, float_rates(plotted)))
    return summary_result(recorded, identity, metadata, QUESTIONS_COMPLETION.of(overall.errors, overall.questions))


def _judged_metadata(details: RetrievalDetails) -> dict[str, Any]:
    """judged@k (sets with judged negatives only): ``judged/judged@3`` and by form as text
    (plotted per series), and the whole measurement as JSON; nothing for every other run."""
    judged = judged_measurement(details)
    if judged is None:
        return {}
    return {**shown_rates(judged_values(details)), "judged": dg.MetadataValue.json(judged)}


RETRIEVAL_KIND = EvaluatedKind(
    group=GROUP,
    golden=Table(
        "golden_question_sets", "The validated golden question set, one row per question (Parquet, hive layout)."
    ),
    load=golden_question_sets,
    step="retrieval",
    evaluate=retrieval,
    outputs=(
        Table("retriever_rankings", "The raw overfetched ranking of every question, one row per returned id."),
        Table(
            "question_hits",
            "Per question: distinct top-3 documents, top-1/top-3 hit, form, hard class, latency, status.",
        ),
    ),
    summary=Table(
        "evaluation_summary", "Aggregates overall, by form and by hard class, stored as one run in the result store."
    ),
    summarise=evaluation_summary,
    check_description="No question errored or timed out: the run is complete.",
    folders=RETRIEVAL_FOLDERS,
    hand_over=True,  # the summary records the evaluation's own run and reads only the table's identity
)


RETRIEVAL_CLI_RUNS = CliRuns(
    series=RETRIEVAL_SERIES,
    sensor="cli_run_series_sensor",
    spec=lambda goldeneval, where: goldeneval.run_spec(where),
    plotted=stored_plotted,
)


RETRIEVAL_CHECK = CheckedKind(
    name="regression_check",
    summary_key=dg.AssetKey("evaluation_summary"),
    group=GROUP,
    spec=lambda goldeneval, key: goldeneval.run_spec(cell(key)),
    labels=RETRIEVAL_LABELS,
    check_description="The gate passes: a baseline, or a run comparable with the previous one within every "
    "threshold (a mismatch or an unknown comparison fails it).",
    description="The regression verdict of one stored evaluation against the previous "
    "run of its series; materialised by a sensor after each evaluation_summary.",
)


def build_regression_assets(partitions_def: dg.MultiPartitionsDefinition) -> list[Any]:
    """Retrieval's regression check, built by the factory every kind's is built by."""
    return [build_regression_check(RETRIEVAL_CHECK, partitions_def)]


def build_evaluation_assets(partitions_def: dg.MultiPartitionsDefinition, *, store_kind: str = "duckdb") -> list[Any]:
    """The four evaluation assets over the given (set x retriever) partitions (the summary
    reports each run to the observed assets of ``assets.series``)."""
    return build_kind_assets(RETRIEVAL_KIND, partitions_def, store_kind=store_kind)


def _build_retrieval(partitions_def: dg.MultiPartitionsDefinition, store_kind: str) -> list[Any]:
    """The retrieval graph, its regression check, and the observed per-series assets."""
    return [
        *build_evaluation_assets(partitions_def, store_kind=store_kind),
        *build_regression_assets(partitions_def),
        *build_series_specs(partitions_def),
    ]


RETRIEVAL_DAGSTER = KindAssets(build=_build_retrieval, cli_runs=RETRIEVAL_CLI_RUNS, nightly_executor=True)
"""Retrieval's Dagster part, as its declaration names it (``goldeneval.kinds.retrieval``)."""
