"""metadata_only through the asset graph: no question text and no document id in the Parquet
tables, the DuckDB store, the Dagster metadata or anything in the Dagster storage folder."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow.parquet as pq
import pytest

from tests.dagster_support import (
    Project,
    definitions,
    latest_metadata,
    run_nightly,
    run_requests,
    tick_regression_sensor,
    write_project,
)

pytestmark = pytest.mark.slow  # the in-process asset graph: seconds per test; CI runs it

TEXT_MARKER = "QTEXTMARKER"
DOC_MARKER = "DOCIDMARKER"
SETS = {
    "private-set": [
        {"id": "p1", "text": f"{TEXT_MARKER} one", "form": "MATCH", "expected": [f"{DOC_MARKER}-a"]},
        {"id": "p2", "text": f"{TEXT_MARKER} two", "form": "GAP", "expected": [f"{DOC_MARKER}-b"]},
        # absent from the rankings file: the plugin raises KeyError quoting the question text
        {"id": "p3", "text": f"{TEXT_MARKER} three", "form": "GAP", "expected": []},
    ]
}
RANKINGS = {
    f"{TEXT_MARKER} one": [f"{DOC_MARKER}-a#1", f"{DOC_MARKER}-b"],
    f"{TEXT_MARKER} two": [f"{DOC_MARKER}-c", f"{DOC_MARKER}-b"],
}


@dataclass
class PrivateRun:
    project: Project
    home: Path
    instance: dg.DagsterInstance


@pytest.fixture(scope="module")
def private_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRun]:
    root = tmp_path_factory.mktemp("private")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(root))
        project = write_project(
            root,
            sets=SETS,
            privacy="metadata_only",
            rankings=RANKINGS,
            retrievers={
                "fixed": {
                    "id": "fixed_rankings_plugin:build",
                    "options": {"rankings": str(root / "rankings.json")},
                }
            },
        )
        defs = definitions(project)
        home = root / "dagster_home"
        home.mkdir()
        with dg.DagsterInstance.local_temp(str(home)) as instance:
            assert all(r.success for r in run_nightly(defs, instance))
            assert all(r.success for r in run_requests(defs, instance, tick_regression_sensor(defs, instance)))
            yield PrivateRun(project, home, instance)


def _assert_clean(text: str, where: str) -> None:
    assert TEXT_MARKER not in text, f"question text in {where}"
    assert DOC_MARKER not in text, f"document id in {where}"


def test_no_parquet_value_or_column_holds_text_or_document_ids(private_run: PrivateRun) -> None:
    files = sorted(private_run.project.tables.rglob("*.parquet"))
    assert len(files) == 3
    for path in files:
        table = pq.read_table(path)
        _assert_clean(json.dumps(table.to_pylist(), default=str), str(path))
        _assert_clean(repr(table.schema.metadata), f"{path} schema metadata")


def test_rankings_keep_question_id_rank_latency_and_is_target_only(private_run: PrivateRun) -> None:
    [path] = (private_run.project.tables / "retriever_rankings").rglob("*.parquet")
    table = pq.read_table(path)
    assert table.column_names == ["question_id", "rank", "is_target", "latency_ms", "run_id", "evaluated_at"]
    assert [(r["question_id"], r["rank"], r["is_target"]) for r in table.to_pylist()] == [
        ("p1", 1, True),
        ("p1", 2, False),
        ("p2", 1, False),
        ("p2", 2, True),
    ]


def test_question_hits_have_no_document_columns_and_errors_only_by_class(private_run: PrivateRun) -> None:
    [path] = (private_run.project.tables / "question_hits").rglob("*.parquet")
    table = pq.read_table(path)
    assert not {"top_documents", "documents"} & set(table.column_names)
    assert sorted(error for error in table.column("error").to_pylist() if error) == ["KeyError"]


def test_the_store_holds_no_text_or_document_ids(private_run: PrivateRun) -> None:
    with duckdb.connect(str(private_run.project.store), read_only=True) as con:
        for table in ("runs", "run_slices"):
            _assert_clean(repr(con.execute(f"SELECT * FROM {table}").fetchall()), f"store table {table}")


def test_no_file_written_by_the_run_holds_a_marker(private_run: PrivateRun) -> None:
    produced = [
        *private_run.project.tables.rglob("*"),
        private_run.project.store,
        *private_run.home.rglob("*"),
    ]
    scanned = 0
    for path in produced:
        if path.is_file():
            data = path.read_bytes()
            assert TEXT_MARKER.encode() not in data, f"question text in {path}"
            assert DOC_MARKER.encode() not in data, f"document id in {path}"
            scanned += 1
    assert scanned > 5


def test_dagster_metadata_holds_no_marker_and_the_summary_stays(private_run: PrivateRun) -> None:
    for asset in ("golden_question_sets", "retriever_rankings", "question_hits", "evaluation_summary"):
        metadata = latest_metadata(private_run.instance, asset, "fixed|private-set")
        _assert_clean(repr(metadata), f"{asset} metadata")
    summary = latest_metadata(private_run.instance, "evaluation_summary", "fixed|private-set")
    assert summary["top1_hit_rate"].value == "0.500"  # text: never plotted across partitions
    assert summary["error_count"].value == "1"
    assert summary["privacy"].value == "metadata_only"
    # the whole table, one DuckDB line away, holds no question text and no document id either
    hits = duckdb.connect().execute(str(summary["full_table_sql"].value))
    rows = hits.fetchall()
    assert len(rows) == 3
    _assert_clean(repr(rows) + repr(hits.description), "the full hits table")
