"""The whole asset graph in process: two sets x two retrievers, evaluated twice, with a seeded
regression in one partition.  The regression sensor's requests are executed as the daemon
would, and the alert sensor posts to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import dagster as dg
import duckdb
import pyarrow.parquet as pq
import pytest

from assets.metadata import metadata_number
from assets.series import series_key
from assets.tables import PREVIEW_ROWS
from goldeneval.retrieval.details import retrieval_details
from goldeneval.retrieval.metrics import METRIC_KINDS
from goldeneval.store import ResultStore, StoredRun
from tests.dagster_support import (
    ASSETS,
    GOOD,
    WORSE_ALPHA,
    Project,
    Webhook,
    definitions,
    latest_metadata,
    materialisations,
    partition_keys,
    run_nightly,
    run_requests,
    tick_alert_sensor,
    tick_regression_sensor,
    webhook_server,
    write_project,
)

pytestmark = pytest.mark.slow  # the in-process asset graph: seconds per test; CI runs it

REGRESSED = "fixed|alpha-set"
KEYS = ["fixed|alpha-set", "fixed|beta-set", "lexical|alpha-set", "lexical|beta-set"]


@dataclass
class Graph:
    project: Project
    defs: dg.Definitions
    instance: dg.DagsterInstance
    webhook: Webhook
    first_alert_tick: dg.SensorExecutionData
    second_alert_tick: dg.SensorExecutionData

    def runs(self) -> list[StoredRun]:
        return ResultStore(self.project.store).list_runs()


@pytest.fixture(scope="module")
def graph(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Graph]:
    root = tmp_path_factory.mktemp("graph")
    with webhook_server() as webhook, pytest.MonkeyPatch.context() as patch:
        for name in ("GOLDENEVAL_STORE", "GOLDENEVAL_PRIVACY", "GOLDENEVAL_ALERT_WEBHOOK_URL", "SLACK_TOKEN"):
            patch.delenv(name, raising=False)
        patch.syspath_prepend(str(root))
        project = write_project(root, alerts={"webhook_url": webhook.url, "ui_url": "http://ui.test:3000"})
        defs = definitions(project)
        (root / "dagster_home").mkdir()
        with dg.DagsterInstance.local_temp(str(root / "dagster_home")) as instance:
            assert all(r.success for r in run_nightly(defs, instance))
            tick = tick_regression_sensor(defs, instance)
            assert all(r.success for r in run_requests(defs, instance, tick))
            project.set_rankings(WORSE_ALPHA)
            assert all(r.success for r in run_nightly(defs, instance))
            tick = tick_regression_sensor(defs, instance, cursor=tick.cursor)
            assert all(r.success for r in run_requests(defs, instance, tick))
            first = tick_alert_sensor(defs, instance)
            second = tick_alert_sensor(defs, instance, cursor=first.cursor)
            yield Graph(project, defs, instance, webhook, first, second)


def _rate(metadata: dict[str, Any], key: str) -> float:
    """A rate of a partitioned asset: text to three places, never a float the UI would plot
    across the partitions (tests/test_dagster_plots_over_nights.py)."""
    value = metadata[key]
    assert isinstance(value, dg.TextMetadataValue), f"{key} is {type(value).__name__}, not text"
    number = metadata_number(value)
    assert number is not None and value.value == f"{number:.3f}"
    return number


def test_partitions_are_every_set_times_every_retriever(graph: Graph) -> None:
    assert sorted(partition_keys(graph.defs)) == KEYS


@pytest.mark.parametrize("asset", ASSETS)
def test_every_asset_is_materialised_for_every_partition_in_both_rounds(graph: Graph, asset: str) -> None:
    partitions = sorted(r.partition_key or "" for r in materialisations(graph.instance, asset))
    assert partitions == sorted(KEYS * 2)


def test_question_hits_parquet_reads_all_history_with_one_hive_query(graph: Graph) -> None:
    pattern = str(graph.project.tables / "question_hits" / "**" / "*.parquet")
    rows = (
        duckdb.connect()
        .execute(
            f"SELECT set, retriever, count(*) AS n, count(DISTINCT run_id) AS runs "
            f"FROM read_parquet('{pattern}', hive_partitioning=true) GROUP BY ALL ORDER BY ALL"
        )
        .fetchall()
    )
    assert rows == [
        ("alpha-set", "fixed", 6, 2),
        ("alpha-set", "lexical", 6, 2),
        ("beta-set", "fixed", 4, 2),
        ("beta-set", "lexical", 4, 2),
    ]


def test_question_hits_rows_hold_the_per_question_verdicts(graph: Graph) -> None:
    [first, _] = sorted((graph.project.tables / "question_hits" / "set=alpha-set" / "retriever=fixed").glob("*"))
    rows = {r["question_id"]: r for r in pq.read_table(first).to_pylist()}
    assert rows["a1"]["top1_hit"] and rows["a1"]["top3_hit"]
    assert rows["a1"]["top_documents"] == ["apples", "bananas"]
    assert rows["a3"]["form"] == "GAP" and rows["a3"]["top1_hit"]
    assert rows["a2"]["hard_class"] == "prose-free" and rows["a2"]["status"] == "ok"


def test_rankings_parquet_holds_the_raw_overfetched_ranking(graph: Graph) -> None:
    folder = graph.project.tables / "retriever_rankings" / "set=alpha-set" / "retriever=fixed"
    first = sorted(folder.glob("*.parquet"))[0]
    rows = pq.read_table(first).to_pylist()
    a1 = [(r["rank"], r["returned_id"], r["document_id"]) for r in rows if r["question_id"] == "a1"]
    assert a1 == [(1, "apples#1", "apples"), (2, "apples#2", "apples"), (3, "bananas", "bananas")]
    assert {"latency_ms", "is_target"} <= set(rows[0])
    assert len(rows) == sum(len(GOOD[q]) for q in ("apple orchard", "yellow tropical", "zeppelin"))


def test_each_summary_stores_exactly_one_run(graph: Graph) -> None:
    runs = graph.runs()
    assert len(runs) == 8
    assert sorted({(r.set_id, r.model) for r in runs}) == [
        ("alpha-set", "fixed"),
        ("alpha-set", "lexical"),
        ("beta-set", "fixed"),
        ("beta-set", "lexical"),
    ]


def test_hit_rates_are_text_on_hits_and_summary(graph: Graph) -> None:
    for asset in ("question_hits", "evaluation_summary"):
        metadata = latest_metadata(graph.instance, asset, "fixed|beta-set")
        assert _rate(metadata, "top1_hit_rate") == 1.0
        assert _rate(metadata, "top3_hit_rate") == 1.0


def test_the_seeded_regression_lowers_the_rates(graph: Graph) -> None:
    metadata = latest_metadata(graph.instance, "evaluation_summary", REGRESSED)
    # WORSE_ALPHA: a1 top-3 miss (apples 4th), a2 top-3 miss, a3 still a hit.
    assert _rate(metadata, "top1_hit_rate") == 0.333
    assert _rate(metadata, "top3_hit_rate") == 0.333
    assert _rate(metadata, "form=GAP/top1_hit_rate") == 0.5
    # exact, as floats, on the series' own key (plotted over the nights)
    [latest] = graph.instance.fetch_observations(series_key("alpha-set", "fixed"), limit=1).records
    assert latest.asset_observation is not None
    observed = latest.asset_observation.metadata
    assert observed["top1_hit_rate"] == dg.MetadataValue.float(1 / 3)
    assert observed["form=GAP/top1_hit_rate"] == dg.MetadataValue.float(1 / 2)


def test_summary_metadata_names_the_stored_run_and_its_fingerprints(graph: Graph) -> None:
    metadata = latest_metadata(graph.instance, "evaluation_summary", "lexical|alpha-set")
    stored = ResultStore(graph.project.store).get_run(str(metadata["stored_run_id"].value))
    assert stored is not None and (stored.set_id, stored.model) == ("alpha-set", "lexical")
    assert metadata["benchmark_fingerprint"].value == stored.benchmark_fingerprint
    assert str(metadata["benchmark_fingerprint"].value).startswith("benchmark-v1:sha256:")
    assert str(metadata["variant_fingerprint"].value).startswith("variant-v1:sha256:")
    assert metadata["label_digest"].value == stored.label_digest


def test_summary_metadata_reports_every_rank_metric_the_registry_declares(graph: Graph) -> None:
    metadata = latest_metadata(graph.instance, "evaluation_summary", "lexical|alpha-set")
    stored = ResultStore(graph.project.store).get_run(str(metadata["stored_run_id"].value))
    assert stored is not None
    aggregates = retrieval_details(stored).aggregates.metrics
    assert {name: metadata[f"metric/{name}"].value for name in aggregates} == {
        name: f"{value:.3f}" for name, value in aggregates.items() if value is not None
    }
    [latest] = graph.instance.fetch_observations(series_key("alpha-set", "lexical"), limit=1).records
    assert latest.asset_observation is not None
    observed = latest.asset_observation.metadata
    assert {name: observed[f"metric/{name}"].value for name in aggregates} == aggregates  # exact, plotted
    measured = metadata["measurement"].value
    assert [m["name"] for m in measured["metrics"]] == retrieval_details(stored).metrics
    assert {m["definition"] for m in measured["metrics"]} <= {k.definition for k in METRIC_KINDS.values()}
    assert measured["depth"] == 100


def test_provenance_declared_in_the_suite_file_gives_known_fingerprints(graph: Graph) -> None:
    metadata = latest_metadata(graph.instance, "evaluation_summary", "fixed|alpha-set")
    assert str(metadata["benchmark_fingerprint"].value).startswith("benchmark-v1:sha256:")
    assert str(metadata["variant_fingerprint"].value).startswith("variant-v1:sha256:")
    assert str(metadata["label_digest"].value).startswith("labels-v1:sha256:")


def test_golden_set_metadata_counts_forms_and_hard_classes(graph: Graph) -> None:
    metadata = latest_metadata(graph.instance, "golden_question_sets", "lexical|alpha-set")
    assert metadata["question_count"].value == "3"
    assert metadata["count_by_form"].value == {"GAP": 2, "MATCH": 1}
    assert metadata["count_by_hard_class"].value == {"(none)": 1, "normal": 1, "prose-free": 1}
    assert metadata["row_count"].value == "3"


def test_golden_set_data_version_is_its_label_digest(graph: Graph) -> None:
    key = dg.AssetKey("golden_question_sets")
    record = graph.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=key, asset_partitions=["lexical|beta-set"]), limit=1
    ).records[0]
    assert record.asset_materialization is not None
    digest = record.asset_materialization.metadata["label_digest"].value
    assert record.asset_materialization.tags is not None
    assert record.asset_materialization.tags["dagster/data_version"] == digest


def test_question_hits_metadata_has_row_count_schema_and_preview(graph: Graph) -> None:
    metadata = latest_metadata(graph.instance, "question_hits", "fixed|alpha-set")
    assert metadata["row_count"].value == "3"
    schema = metadata["dagster/column_schema"].value
    assert isinstance(schema, dg.TableSchema)
    assert {"question_id", "top1_hit", "top3_hit", "top_documents"} <= {c.name for c in schema.columns}
    preview = str(metadata[f"preview (first {PREVIEW_ROWS} rows)"].value)
    assert preview.startswith("| question_id | form | hard_class | status | top1_hit | top3_hit |")
    assert "| a2 | GAP | prose-free | ok | False | False |" in preview


def _check_results(graph: Graph, asset: str, check: str) -> list[tuple[str | None, str]]:
    key = dg.AssetCheckKey(dg.AssetKey(asset), check)
    history = graph.instance.event_log_storage.get_asset_check_execution_history(key, limit=100)
    return sorted((r.partition, r.status.value) for r in history)


def test_run_complete_passes_for_every_partition(graph: Graph) -> None:
    assert _check_results(graph, "evaluation_summary", "run_complete") == [(k, "SUCCEEDED") for k in KEYS for _ in "12"]


def test_no_regression_fails_only_for_the_seeded_partition_and_only_in_round_two(graph: Graph) -> None:
    results = _check_results(graph, "regression_check", "no_regression")
    assert [r for r in results if r[1] == "FAILED"] == [(REGRESSED, "FAILED")]
    assert len(results) == 8


def test_regression_check_records_the_verdict(graph: Graph) -> None:
    metadata = latest_metadata(graph.instance, "regression_check", REGRESSED)
    assert metadata["verdict"].value == "regression"
    assert str(metadata["reason"].value).startswith("top-1 hit rate fell 1.000 -> 0.333")
    assert latest_metadata(graph.instance, "regression_check", "lexical|alpha-set")["verdict"].value == "pass"


def test_the_seeded_regression_produces_exactly_one_alert(graph: Graph) -> None:
    assert len(graph.webhook.received) == 1
    alert = graph.webhook.received[0]
    assert (alert["check"], alert["set"], alert["retriever"]) == ("no_regression", "alpha-set", "fixed")
    # the check shows its rates as text to three places: the alert carries them as numbers
    assert alert["rates"] == {"top1_hit_rate": 0.333, "top3_hit_rate": 0.333}
    assert alert["verdict"]["status"] == "regression"
    assert alert["run_url"] == f"http://ui.test:3000/runs/{alert['run_id']}"
    assert graph.instance.get_run_by_id(alert["run_id"]) is not None


def test_a_second_alert_tick_sends_nothing_again(graph: Graph) -> None:
    assert graph.second_alert_tick.skip_message == "0 alert(s) sent"
    assert graph.first_alert_tick.skip_message == "1 alert(s) sent"


def test_an_alert_sensor_without_a_cursor_does_not_repeat_delivered_alerts(graph: Graph) -> None:
    tick = tick_alert_sensor(graph.defs, graph.instance, cursor=None)
    assert tick.skip_message == "0 alert(s) sent"
    assert len(graph.webhook.received) == 1


def test_the_regression_runs_carry_the_sensor_run_keys(graph: Graph) -> None:
    runs = graph.instance.get_runs(filters=dg.RunsFilter(job_name="regression_check_job"))
    keys = sorted(r.tags["dagster/run_key"] for r in runs)
    summaries = materialisations(graph.instance, "evaluation_summary")
    stored = [r.asset_materialization.metadata["stored_run_id"].value for r in summaries if r.asset_materialization]
    assert len(stored) == len(summaries)
    assert keys == sorted(f"regression_check:{run_id}" for run_id in stored)
