"""The toy kind's Dagster part (``tests/toy_kind.py`` names it: ``TOY_DAGSTER``), made of the
shared factories only: its graph (``assets.tables``), its regression check (``assets.regression``),
its per-series assets and the sensor that plots the runs the CLI stored (``assets.series``).
The partitions, jobs, schedule and sensors' names come from its declaration.  (No ``from
__future__ import annotations``: Dagster reads the assets' annotations as classes.)"""

from collections.abc import Iterator, Mapping
from typing import Any

import dagster as dg
import pyarrow as pa

from assets.kinds import KindAssets
from assets.metadata import RunLabels, float_rates
from assets.partitions import kind_cell
from assets.regression import CheckedKind, build_regression_check
from assets.series import CliRuns, SeriesKind, build_series_specs, observe
from assets.summary import SpooledSummary, observed_run, record_summary, spooled_result, summary_result
from assets.tables import EvaluatedKind, Table, build_kind_assets, table_output
from goldeneval.core.privacy import PrivacyMode
from resources.goldeneval import GoldenEvalResource
from tests.toy_kind import TOY_DECLARATION as TOY
from tests.toy_kind import TOY_RATE_NAMES, ToyRun, ToySpec

SET, RERANKER = TOY.dimensions
RATES = ("reranked_first", "mean_reciprocal_rank")
TOY_LABELS = RunLabels.of(TOY, TOY_RATE_NAMES)
TOY_SERIES = SeriesKind("toy_series", "toy_nightly", SET, RERANKER, TOY.summary, RATES, ("first", "mrr"))


def _spec(goldeneval: GoldenEvalResource, where: Mapping[str, str]) -> ToySpec:
    spec: ToySpec = goldeneval.kind_spec(TOY, where)
    return spec


def _rates(pass_rate: float | None, mean_score: float | None) -> dict[str, float | None]:
    return dict(zip(RATES, (pass_rate, mean_score), strict=True))


def toy_questions(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> dg.Output[pa.Table]:
    where = kind_cell(context.partition_key, TOY)
    run = _spec(goldeneval, where).run(where[SET], where[RERANKER])
    return dg.Output(pa.table({"question_id": sorted(run.firsts)}))


def toy_rerank(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> Iterator[dg.Output[Any]]:
    where = kind_cell(context.partition_key, TOY)
    firsts = _spec(goldeneval, where).run(where[SET], where[RERANKER]).firsts
    table = pa.table({"question_id": list(firsts), "first": list(firsts.values())})
    yield table_output(table, "toy_firsts", PrivacyMode.FULL, {"question_count": len(firsts)})


def toy_summary(
    context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource, toy_firsts: pa.Table
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    where = kind_cell(context.partition_key, TOY)
    firsts = dict(zip(toy_firsts["question_id"].to_pylist(), toy_firsts["first"].to_pylist(), strict=True))
    run = ToyRun(firsts, where[SET], where[RERANKER])
    recorded = record_summary(
        context,
        goldeneval,
        _spec(goldeneval, where),
        run,
        grader="toy_rerank",
        tables_privacy=PrivacyMode.FULL,
        tables_run_id=context.run.run_id,
    )
    share = sum(firsts.values()) / len(firsts)
    identity = TOY_LABELS.identity(where[SET], where[RERANKER], share, share)
    if isinstance(recorded, SpooledSummary):
        return spooled_result(recorded, identity)
    members = goldeneval.suite().cells(TOY).series
    observe(context, where, members, observed_run(recorded, float_rates(_rates(share, share))), TOY_SERIES)
    return summary_result(recorded, identity, {"question_count": len(firsts)}, (True, "every question reranked"))


TOY_GRAPH = EvaluatedKind(
    group="toy",
    golden=Table("toy_questions", "The toy set's questions."),
    load=toy_questions,
    step="toy_rerank",
    evaluate=toy_rerank,
    outputs=(Table("toy_firsts", "Per question: whether the reranker put a target first."),),
    summary=Table(TOY.summary, "The toy run, stored."),
    summarise=toy_summary,
    check_description="Every question was reranked.",
    folders=TOY.dimensions,
)
TOY_CHECK = CheckedKind(
    name=TOY.names.regression_check,
    summary_key=dg.AssetKey(TOY.summary),
    group="toy",
    spec=lambda goldeneval, key: _spec(goldeneval, kind_cell(key, TOY)),
    labels=TOY_LABELS,
    check_description="The gate passes.",
    description="The toy run against the previous one.",
)


def _build(partitions_def: dg.MultiPartitionsDefinition, store_kind: str) -> list[Any]:
    return [
        *build_kind_assets(TOY_GRAPH, partitions_def, store_kind=store_kind),
        build_regression_check(TOY_CHECK, partitions_def),
        *build_series_specs(partitions_def, TOY_SERIES),
    ]


TOY_DAGSTER = KindAssets(
    build=_build,
    cli_runs=CliRuns(
        series=TOY_SERIES,
        sensor=TOY.names.cli_sensor,
        spec=_spec,
        plotted=lambda _store, stored: _rates(stored.pass_rate, stored.mean_score),
    ),
)
