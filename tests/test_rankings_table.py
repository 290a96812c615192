"""The ``retriever_rankings`` table built column by column (issue 26) holds exactly the rows the
definition gives: one per returned id, in rank order, with its document and whether it is
expected, for chunked ids, repeated documents, errors, empty rankings and no-answer questions."""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any
from unittest import mock

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from goldeneval.core.errors import StoreError
from goldeneval.core.forms import QuestionForm
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval import tables
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.retrievers.base import document_id_mapper
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.tables import rankings_table, read_table, write_partition_file
from goldeneval.store.parquet import TableInBatches


def _definition(run: RetrievalRun, privacy: PrivacyMode, separator: str) -> dict[str, list[Any]]:
    """The table row by row, as its docstring defines it."""
    to_document = document_id_mapper(separator)
    rows: dict[str, list[Any]] = {n: [] for n in ("question_id", "rank", "returned_id", "document_id", "is_target")}
    rows["latency_ms"] = []
    for result in run.results:
        for rank, returned_id in enumerate(result.returned_ids, start=1):
            document = to_document(returned_id)
            rows["question_id"].append(result.question_id)
            rows["rank"].append(rank)
            rows["returned_id"].append(returned_id)
            rows["document_id"].append(document)
            rows["is_target"].append(document in result.expected)
            rows["latency_ms"].append(result.latency_ms)
    if privacy is PrivacyMode.METADATA_ONLY:
        del rows["returned_id"], rows["document_id"]
    return rows


class _Scripted:
    def __init__(self, rankings: dict[str, Sequence[str]]) -> None:
        self.rankings = rankings

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        ranking = self.rankings[question]
        if ranking == ["boom"]:
            raise RuntimeError("retriever failed")
        return list(ranking)[:limit]


def _random_run(seed: int) -> RetrievalRun:
    rng = random.Random(seed)
    documents = [f"doc{j}" for j in range(rng.randint(1, 40))]
    questions: list[GoldenQuestion] = []
    rankings: dict[str, Sequence[str]] = {}
    for i in range(rng.randint(1, 30)):
        expected = frozenset(rng.sample(documents, rng.randint(0, min(3, len(documents)))))
        questions.append(GoldenQuestion(id=f"q{i}", text=f"t{i}", form=QuestionForm.MATCH, expected=expected))
        kind = rng.random()
        if kind < 0.1:
            rankings[f"t{i}"] = ["boom"]
        elif kind < 0.2:
            rankings[f"t{i}"] = []
        else:
            rankings[f"t{i}"] = [f"{rng.choice(documents)}#{rng.randint(0, 3)}" for _ in range(rng.randint(1, 25))]
    golden = GoldenQuestionSet(id="r", questions=tuple(questions))
    return evaluate_retrieval(golden, _Scripted(rankings), "scripted", to_document=document_id_mapper("#"))


@pytest.mark.parametrize("block", [tables._ROW_BLOCK, 7, 1])  # 7, 1: many batches, a question's rows split
@pytest.mark.parametrize("privacy", list(PrivacyMode))
@pytest.mark.parametrize("seed", range(25))
def test_the_columnar_table_is_the_row_by_row_definition(seed: int, privacy: PrivacyMode, block: int) -> None:
    run = _random_run(seed)
    with mock.patch.object(tables, "_ROW_BLOCK", block):
        table = rankings_table(run, privacy, "run-1").to_table()
    expected = _definition(run, privacy, "#")
    assert {name: table.column(name).to_pylist() for name in expected} == expected
    assert [name for name in table.column_names if name in expected] == list(expected)


@pytest.mark.parametrize("separator", ["::", ""])
def test_the_table_maps_returned_ids_as_the_run_did(separator: str) -> None:
    """The Dagster job hands over the run alone: its documents are cut where the run's were
    (``--chunk-separator``), never at a default the table would decide again."""
    questions = (GoldenQuestion(id="q1", text="t1", form=QuestionForm.MATCH, expected=frozenset({"a"})),)
    golden = GoldenQuestionSet(id="s", questions=questions)
    run = evaluate_retrieval(golden, _Scripted({"t1": ["a::1", "b#2::3", "a::2"]}), "s", chunk_separator=separator)
    table = rankings_table(run, PrivacyMode.FULL, "run-1").to_table()
    assert table.column("document_id").to_pylist() == _definition(run, PrivacyMode.FULL, separator)["document_id"]
    assert table.column("is_target").to_pylist() == ([True, False, True] if separator else [False, False, False])


@pytest.mark.parametrize("privacy", list(PrivacyMode))
def test_the_table_written_a_batch_at_a_time_reads_back_whole(tmp_path: Path, privacy: PrivacyMode) -> None:
    """Written by the Dagster job a batch at a time (a row group each), the file holds the
    same rows and schema as the table made whole."""
    run = _random_run(3)
    with mock.patch.object(tables, "_ROW_BLOCK", 7):
        batched = rankings_table(run, privacy, "run-1")
        path = write_partition_file(tmp_path, "retriever_rankings", {"set": "r"}, batched, "run-1", run.started_at)
        whole = batched.to_table()
    assert batched.num_rows == whole.num_rows == sum(len(r.returned_ids) for r in run.results)
    assert read_table(path).equals(whole)
    assert pq.ParquetFile(path).num_row_groups == -(-whole.num_rows // 7)


def test_a_table_that_fails_while_being_written_leaves_no_file(tmp_path: Path) -> None:
    """A file is whole or absent: a batch that cannot be made takes the half-written file away."""
    run = _random_run(3)

    def broken(document: str) -> str:
        raise RuntimeError("cannot map")

    calls: list[int] = []
    whole = rankings_table(run, PrivacyMode.FULL, "run-1")

    def batches() -> Iterator[pa.RecordBatch]:
        for batch in whole.to_batches():
            calls.append(batch.num_rows)
            yield batch
            raise OSError(28, "No space left on device")

    failing = TableInBatches(whole.schema, whole.num_rows, whole.evaluated_at, batches)
    with pytest.raises(StoreError, match="cannot write the retriever_rankings table: No space left on device"):
        write_partition_file(tmp_path, "retriever_rankings", {"set": "r"}, failing, "run-1", run.started_at)
    assert calls and not list(tmp_path.rglob("*.parquet")) and not list(tmp_path.rglob(".writing-*"))
    with pytest.raises(RuntimeError, match="cannot map"):
        rankings_table(run, PrivacyMode.FULL, "run-1", to_document=broken)


@pytest.mark.parametrize("declared_more", [True, False])
def test_a_table_whose_batches_hold_other_than_its_declared_rows_is_not_written(
    tmp_path: Path, declared_more: bool
) -> None:
    """The declared row count is what the asset's metadata reports: batches that disagree with
    it (a block lost or made twice) are an error, and no file is left behind."""
    run = _random_run(3)
    whole = rankings_table(run, PrivacyMode.FULL, "run-1")
    declared = whole.num_rows + (1 if declared_more else -1)
    wrong = TableInBatches(whole.schema, declared, whole.evaluated_at, whole.make_batches)
    match = f"made {whole.num_rows:,} rows, not the {declared:,} it declared"
    with pytest.raises(StoreError, match=match):
        write_partition_file(tmp_path, "retriever_rankings", {"set": "r"}, wrong, "run-1", run.started_at)
    assert not list(tmp_path.rglob("*.parquet")) and not list(tmp_path.rglob(".writing-*"))
    written = write_partition_file(tmp_path, "retriever_rankings", {"set": "r"}, whole, "run-1", run.started_at)
    assert read_table(written).num_rows == whole.num_rows
