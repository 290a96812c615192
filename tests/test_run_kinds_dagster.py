"""The toy third kind (``tests/toy_kind.py``) through the shared Dagster factories: its graph
(``assets.tables.build_kind_assets``), the Parquet IO manager, the summary's record and
check (``assets.summary``) and the regression check (``assets.regression``), none of which
names it.  (No ``from __future__ import annotations`` here: Dagster reads the assets'
annotations as classes.)
"""

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa
import pytest

from assets.io_manager import PartitionedParquetIOManager
from assets.metadata import RunLabels
from assets.names import NO_REGRESSION, RUN_COMPLETE, TABLES_IO_MANAGER
from assets.partitions import partition_cell
from assets.regression import CheckedKind, build_regression_check
from assets.summary import SpooledSummary, record_summary, spooled_result, summary_result
from assets.tables import EvaluatedKind, Table, build_kind_assets, table_output
from goldeneval.core.gate import GateDecision
from goldeneval.core.kinds import register_details_kind
from goldeneval.core.privacy import PrivacyMode
from goldeneval.store import open_store
from resources.goldeneval import GoldenEvalResource
from tests.dagster_support import write_project
from tests.toy_kind import ALL_FIRST, HALF_FIRST, TOY_KIND, ToyRun, ToySpec

TOY_FOLDERS = ("set", "reranker")
ASKED: dict[str, dict[str, bool]] = {"firsts": ALL_FIRST}
"""What the toy step finds when it runs (a test sets it before materialising)."""


@pytest.fixture(autouse=True)
def toy_details() -> None:
    """The toy is not installed here: its details reader is registered in-process, as the lookup
    registers it from an installed declaration (``tests/test_run_kinds_declared.py``)."""
    register_details_kind(TOY_KIND)


def _toy_questions(context: dg.AssetExecutionContext) -> dg.Output[pa.Table]:
    return dg.Output(pa.table({"question_id": sorted(ASKED["firsts"])}))


def _toy_rerank(context: dg.AssetExecutionContext) -> Iterator[dg.Output[Any]]:
    firsts = ASKED["firsts"]
    table = pa.table({"question_id": list(firsts), "first": list(firsts.values())})
    yield table_output(table, "toy_firsts", PrivacyMode.FULL, {"question_count": len(firsts)})


def _toy_summary(
    context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource, toy_firsts: pa.Table
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    run = ToyRun(dict(zip(toy_firsts["question_id"].to_pylist(), toy_firsts["first"].to_pylist(), strict=True)))
    recorded = record_summary(
        context,
        goldeneval,
        ToySpec(),
        run,
        grader="toy_rerank",
        tables_privacy=PrivacyMode.FULL,
        tables_run_id=context.run.run_id,
    )
    where = partition_cell(context.partition_key, TOY_FOLDERS)
    if isinstance(recorded, SpooledSummary):
        return spooled_result(recorded, where)
    return summary_result(recorded, where, {"question_count": toy_firsts.num_rows}, (True, "every question reranked"))


TOY_GRAPH = EvaluatedKind(
    group="toy",
    golden=Table("toy_questions", "The toy set's questions."),
    load=_toy_questions,
    step="toy_rerank",
    evaluate=_toy_rerank,
    outputs=(Table("toy_firsts", "Per question: whether the reranker put a target first."),),
    summary=Table("toy_summary", "The toy run, stored."),
    summarise=_toy_summary,
    check_description="Every question was reranked.",
    folders=TOY_FOLDERS,
)
TOY_CHECK = CheckedKind(
    name="toy_regression_check",
    summary_key=dg.AssetKey("toy_summary"),
    group="toy",
    spec=lambda goldeneval, key: ToySpec(),
    labels=RunLabels(
        "toy-rerank",
        TOY_FOLDERS,
        (("reranked_first", "reranked first"), ("mean_reciprocal_rank", "mean reciprocal rank")),
    ),
    check_description="The gate passes.",
    description="The toy run against the previous one.",
)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_toy_kind_runs_through_the_shared_dagster_factories(tmp_path: Path) -> None:
    project = write_project(tmp_path / "project")
    goldeneval = GoldenEvalResource(config_path=str(project.config))
    partitions = dg.MultiPartitionsDefinition(
        {"set": dg.StaticPartitionsDefinition(["toy-set"]), "reranker": dg.StaticPartitionsDefinition(["toy"])}
    )
    graph = [*build_kind_assets(TOY_GRAPH, partitions), build_regression_check(TOY_CHECK, partitions)]
    resources = {
        "goldeneval": goldeneval,
        TABLES_IO_MANAGER: PartitionedParquetIOManager(config_path=goldeneval.config_path),
    }
    key = dg.MultiPartitionKey({"set": "toy-set", "reranker": "toy"})

    def materialise(firsts: dict[str, bool]) -> dg.ExecuteInProcessResult:
        ASKED["firsts"] = firsts
        return dg.materialize(graph, partition_key=key, resources=resources, instance=instance, raise_on_error=False)

    with dg.DagsterInstance.ephemeral() as instance:
        first, worse = materialise(ALL_FIRST), materialise(HALF_FIRST)

    assert first.success and worse.success
    # the Parquet IO manager wrote the kind's table in the kind's own folders
    written = sorted(project.tables.glob("toy_firsts/*/*/*.parquet"))
    assert [p.relative_to(project.tables / "toy_firsts").parts[:2] for p in written] == [
        ("set=toy-set", "reranker=toy")
    ] * 2
    checks = {(check.asset_key.path[-1], check.check_name): check for check in worse.get_asset_check_evaluations()}
    assert checks[("toy_summary", RUN_COMPLETE)].passed
    regression = checks[("toy_regression_check", NO_REGRESSION)]
    # the shared summary adds the stored run's id to every kind's identity, its check's too
    assert checks[("toy_summary", RUN_COMPLETE)].metadata["stored_run_id"] == regression.metadata["stored_run_id"]
    assert not regression.passed
    assert regression.metadata["gate"].value == GateDecision.REGRESSION.value
    assert str(regression.description).startswith("regression: reranked first fell 1.000 -> 0.500")
    baseline = {(c.asset_key.path[-1], c.check_name): c for c in first.get_asset_check_evaluations()}
    assert baseline[("toy_regression_check", NO_REGRESSION)].passed
    stored = open_store(project.store).list_runs()
    assert [(run.set_id, run.model, run.pass_rate) for run in stored] == [
        ("toy-set", "toy-reranker", 0.5),  # newest first
        ("toy-set", "toy-reranker", 1.0),
    ]


def test_a_kind_whose_folders_are_not_its_partitions_dimensions_is_refused_when_built() -> None:
    partitions = dg.MultiPartitionsDefinition(
        {"set": dg.StaticPartitionsDefinition(["toy-set"]), "model": dg.StaticPartitionsDefinition(["toy"])}
    )
    with pytest.raises(
        ValueError, match=r"toy_rerank: folders \('set', 'reranker'\) are not the partitions' dimensions"
    ):
        build_kind_assets(TOY_GRAPH, partitions)
