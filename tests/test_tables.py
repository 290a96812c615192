"""Arrow tables of a run: privacy per mode, the hive layout, and the run rebuilt from its hits."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.tables import (
    golden_set_table,
    hits_table,
    markdown_preview,
    rankings_table,
    run_from_hits,
    write_partition_file,
)
from goldeneval.store.parquet import stamp_columns

WHEN = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


@pytest.fixture(scope="module")
def run() -> RetrievalRun:
    corpus = Corpus(
        (
            Document("apples", "Apples", "Apples grow in the orchard."),
            Document("pears", "Pears", "Pears grow in the orchard too."),
        )
    )
    golden = GoldenQuestionSet(
        id="fruit",
        questions=(
            GoldenQuestion(id="q1", text="apple orchard", form=QuestionForm.MATCH, expected=frozenset({"apples"})),
            GoldenQuestion(id="q2", text="pears", form=QuestionForm.GAP, expected=frozenset({"pears"}), hard_class="x"),
        ),
    )
    return evaluate_retrieval(golden, LexicalRetriever(corpus), "bm25")


def test_the_run_rebuilt_from_its_hits_stores_the_same_record(run: RetrievalRun) -> None:
    rebuilt = run_from_hits(hits_table(run, PrivacyMode.FULL, "r1"))
    assert rebuilt.to_record() == run.to_record()


class _Padded:
    """100 documents a question, each id padded to ``width`` characters."""

    def __init__(self, width: int) -> None:
        self.width = width

    def retrieve(self, question: str, limit: int) -> list[str]:
        i = int(question.rsplit(" ", 1)[-1])
        return [self.id((i + j) % 5_000) for j in range(min(limit, 100))]

    def id(self, document: int) -> str:
        return f"{document:05d}".ljust(self.width, "x")


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("width", [200, 5])
def test_hits_of_a_run_with_more_than_16_mib_of_document_ids_hold_every_ranking(width: int) -> None:
    # pyarrow converts a numpy StringDType array of more than 16 MiB of text into chunks, which
    # a list column refuses: such runs failed the Dagster job's hits table (TypeError).  Here
    # 1,000 questions return 100,000 ids of 200 characters: 20 MB.
    retriever = _Padded(width)
    questions = tuple(
        GoldenQuestion(id=f"q{i}", text=f"question {i}", form=QuestionForm.MATCH, expected=frozenset({retriever.id(i)}))
        for i in range(1_000)
    )
    run = evaluate_retrieval(GoldenQuestionSet(id="padded", questions=questions), retriever, "padded", timeout_s=None)
    table = hits_table(run, PrivacyMode.FULL, "r1")
    assert table.column("documents")[0].as_py() == [retriever.id(j) for j in range(100)]
    assert table.column("top_documents")[999].as_py() == [retriever.id(999 + j) for j in range(3)]
    assert run_from_hits(table).to_record() == run.to_record()


def test_metadata_only_hits_rebuild_the_same_rates_without_documents(run: RetrievalRun) -> None:
    rebuilt = run_from_hits(hits_table(run, PrivacyMode.METADATA_ONLY, "r1"))
    record = rebuilt.to_record(PrivacyMode.METADATA_ONLY)
    assert (record.pass_rate, record.mean_score) == (run.to_record().pass_rate, run.to_record().mean_score)
    assert record.details == run.to_record(PrivacyMode.METADATA_ONLY).details


@pytest.mark.parametrize(
    ("mode", "absent"),
    [
        (PrivacyMode.FULL, set()),
        (PrivacyMode.METADATA_ONLY, {"returned_id", "document_id"}),
    ],
    ids=["full", "metadata_only"],
)
def test_rankings_drop_ids_in_metadata_only(run: RetrievalRun, mode: PrivacyMode, absent: set[str]) -> None:
    table = rankings_table(run, mode, "r1").to_table()
    base = {
        "question_id",
        "rank",
        "returned_id",
        "document_id",
        "is_target",
        "latency_ms",
        "run_id",
        "evaluated_at",
    }
    assert set(table.column_names) == base - absent


def test_the_golden_set_table_keeps_text_only_in_full(run: RetrievalRun) -> None:
    golden = GoldenQuestionSet(
        id="s",
        questions=(GoldenQuestion(id="q", text="secret", form=QuestionForm.GAP, expected=frozenset()),),
    )
    assert "text" in golden_set_table(golden, PrivacyMode.FULL, "r", WHEN).column_names
    private = golden_set_table(golden, PrivacyMode.METADATA_ONLY, "r", WHEN)
    assert not {"text", "expected", "answer_gist"} & set(private.column_names)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("rows", [0, 1, 65_536, 1_000_003])
def test_a_stamped_table_reads_back_with_its_run_on_every_row_from_one_small_buffer(rows: int, tmp_path: Path) -> None:
    table = pa.table({"rank": pa.array(range(rows), pa.int32())})
    before = pa.total_allocated_bytes()
    stamped = stamp_columns(table, "0123456789abcdef0123456789abcdef", WHEN)
    made = pa.total_allocated_bytes() - before
    assert made < 4 * 2**20, made  # the run id on a million rows would be 36 MB made one by one
    pq.write_table(stamped, tmp_path / "t.parquet")
    back = pq.read_table(tmp_path / "t.parquet")
    assert back.schema.equals(stamped.schema)
    assert back.column("run_id").unique().to_pylist() == (["0123456789abcdef0123456789abcdef"] if rows else [])
    assert back.column("evaluated_at").unique().to_pylist() == ([WHEN] if rows else [])
    assert back.num_rows == rows


def test_files_are_laid_out_hive_style_one_file_per_run(tmp_path: Path) -> None:
    table = pa.table({"x": [1]})
    where = {"set": "s", "retriever": "r"}
    mine = write_partition_file(tmp_path, "t", where, table, "run-a", WHEN)
    other = write_partition_file(tmp_path, "t", where, table, "run-b", WHEN.replace(year=2027))
    assert mine == tmp_path / "t" / "set=s" / "retriever=r" / "20260102T030405000000Z_run-a.parquet"
    assert other == tmp_path / "t" / "set=s" / "retriever=r" / "20270102T030405000000Z_run-b.parquet"


def test_the_preview_is_a_markdown_table_that_escapes_pipes() -> None:
    table = pa.table({"id": ["a|b", "c"], "rate": [0.5, None], "docs": [["d1", "d2"], []]})
    assert (
        markdown_preview(table, limit=1)
        == "| id | rate | docs |\n|---|---|---|\n| a\\|b | 0.500 | d1, d2 |\n\n1 more rows"
    )
