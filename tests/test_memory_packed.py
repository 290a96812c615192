"""Issue 26 (memory): an evaluated run keeps its documents packed as the store keeps them, and
a report is made a block of questions at a time.  Nothing a reader sees changes: the packed
documents read back as the array they were packed from, the raw rankings as the returned ids,
and the streamed table is the table made whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import goldeneval.retrieval.report as report
import goldeneval.retrieval.text_table as text_table
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import StoredRun
from goldeneval.retrieval.details import DocumentColumns, retrieval_details
from goldeneval.retrieval.encoding import RawRankings
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.retrievers.base import document_id_mapper
from goldeneval.retrieval.scored import KeptDocuments, ScoredAnswers
from goldeneval.store.duckdb_store import ResultStore

to_doc = document_id_mapper("#")


@pytest.mark.parametrize("vocabulary_size", [1, 200, 300, 70_000])
def test_encoding_in_place_writes_what_encoding_writes_and_reads_back_the_codes(vocabulary_size: int) -> None:
    rng = np.random.default_rng(vocabulary_size)
    codes = rng.integers(0, vocabulary_size, 5_000).astype("<u4")
    vocabulary = [f"d{i}" for i in range(vocabulary_size)]
    encoded = DocumentColumns.encode(vocabulary, codes.copy())
    handed_over = codes.copy()
    packed = DocumentColumns.encode_in_place(vocabulary, handed_over)
    assert packed == encoded and packed.codes == encoded.codes
    assert np.array_equal(packed.decoded_afresh(), codes)
    positions = np.sort(rng.choice(codes.size, 700, replace=False))
    assert np.array_equal(packed.picked(positions), codes[positions])
    assert np.array_equal(packed.decoded(), codes)  # and decoded() keeps them from then on
    with pytest.raises(ValueError):
        DocumentColumns.encode_in_place(vocabulary, codes.astype(np.int64))


def test_picked_reads_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    import goldeneval.retrieval.details.documents as documents

    monkeypatch.setattr(documents, "_BLOCK_CODES", 7)
    codes = np.arange(100, dtype="<u4") % 300
    packed = DocumentColumns.encode_in_place([f"d{i}" for i in range(300)], codes.copy())
    positions = np.array([0, 6, 7, 8, 50, 99])
    assert packed.picked(positions).tolist() == codes[positions].tolist()


class _Chunks:
    """Two chunks per document, one question errors, one returns nothing."""

    def retrieve(self, question: str, limit: int) -> list[str]:
        i = int(question.rsplit(" ", 1)[-1])
        if i == 3:
            raise RuntimeError("down")
        if i == 4:
            return []
        return [f"d{(i + j) % 40}#{j % 2}" for j in range(min(limit, 2 + i))]


class _Documents:
    """Document ids as they are: one id per document, no repeats."""

    def retrieve(self, question: str, limit: int) -> list[str]:
        i = int(question.rsplit(" ", 1)[-1])
        return [f"d{(i * 7 + j) % 90}" for j in range(min(limit, 5 + i % 4))]


def _set(n: int) -> GoldenQuestionSet:
    return GoldenQuestionSet(
        id="s",
        questions=[
            GoldenQuestion(id=f"q{i}", text=f"question {i}", form="GAP" if i % 2 else "MATCH", expected=[f"d{i}"])
            for i in range(n)
        ],
    )


@pytest.mark.parametrize("retriever", [_Chunks(), _Documents()], ids=["chunks", "documents"])
def test_packed_documents_read_back_as_the_run_kept_them(retriever: object) -> None:
    run = evaluate_retrieval(_set(12), retriever, "r", to_document=to_doc, timeout_s=None)  # type: ignore[arg-type]
    scored = run.results
    assert isinstance(scored, ScoredAnswers)
    kept = scored.kept_documents
    assert kept.codes is None and kept.packed is not None  # the evaluator's run holds them packed
    again = KeptDocuments.of(scored.kept)  # the same documents as an array
    assert np.array_equal(again.rankings.codes, kept.rankings.codes)
    assert again.columns(scored.documents) == kept.columns(scored.documents)
    for result in scored.results:
        assert result.documents == tuple(dict.fromkeys(to_doc(raw) for raw in result.returned_ids))
    returned = scored.returned
    assert isinstance(returned, RawRankings) and len(returned) == 12
    assert [tuple(r) for r in returned] == [result.returned_ids for result in scored.results]


def test_raw_rankings_that_are_the_kept_documents_are_decoded_from_them() -> None:
    run = evaluate_retrieval(_set(6), _Documents(), "r", to_document=to_doc, timeout_s=None)
    returned = run.results.returned  # type: ignore[attr-defined]
    assert isinstance(returned, RawRankings)
    assert returned.held is None  # not decoded until read
    first = returned[0]
    assert returned.held is not None and first == tuple(f"d{j % 90}" for j in range(5))


def _stored(tmp_path: object, run: object, privacy: PrivacyMode) -> StoredRun:
    store = ResultStore(f"{tmp_path}/s.duckdb")
    return store.save_run(run.to_record(privacy))  # type: ignore[attr-defined]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("privacy", list(PrivacyMode))
def test_the_streamed_table_is_the_table_made_whole(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch, privacy: PrivacyMode
) -> None:
    questions = [
        GoldenQuestion(
            id=f"q\x1b{i}" if i == 5 else f"q{i}",
            text=f"question {i}",
            form="GAP" if i % 2 else "MATCH",
            expected=[f"d{i}"],
            hard_class="long hard class" if i == 9 else None,
            not_relevant=["d1"] if i == 2 else [],
        )
        for i in range(11)
    ]
    run = evaluate_retrieval(GoldenQuestionSet(id="s", questions=questions), _Chunks(), "r", to_document=to_doc)
    stored = _stored(tmp_path, run, privacy)
    from goldeneval.core.baseline import Baseline
    from goldeneval.core.gate import RegressionThresholds
    from goldeneval.history.comparison import compare_with_history

    verdict = compare_with_history(
        ResultStore(f"{tmp_path}/s.duckdb"), stored, RegressionThresholds(), Baseline.parse("previous")
    )
    whole = report.render_outcome(stored, verdict, Path("STORE"))
    monkeypatch.setattr(text_table, "BLOCK_ROWS", 3)
    assert report.render_outcome(stored, verdict, Path("STORE")) == whole
    details = retrieval_details(stored)
    columns = details.columns
    tops = columns.top_documents(3)
    cells = [
        f"ERROR: {error}" if status != "ok" else "(withheld: metadata_only)" if tops is None else ", ".join(tops[i])
        for i, (status, error) in enumerate(zip(columns.status, columns.error, strict=True))
    ]
    table = text_table.column_table(
        ["question", "form", "hard class", "top1", "top3", "judged@3", "top-3 documents", "ms"],
        [
            columns.id,
            columns.form,
            [h or "" for h in columns.hard_class],
            [report._MARKS[hit] for hit in columns.top1_hit],
            [report._MARKS[hit] for hit in columns.top3_hit],
            [text_table.rate_text(share).strip() for share in (columns.judged_at or {})["judged@3"]],
            cells,
            [f"{ms:.1f}" for ms in columns.latency_ms],
        ],
    )
    assert "\n".join(table) in whole and "q\\x1b5" in whole


class _Repeats:
    """Two chunks per document, every ranking deep enough: one round, with repeats to collapse."""

    def retrieve(self, question: str, limit: int) -> list[str]:
        i = int(question.rsplit(" ", 1)[-1])
        return [f"d{(i + j // 2) % 60}#{j % 2}" for j in range(limit)]


@pytest.mark.parametrize("retriever", [_Repeats(), _Documents()], ids=["repeats", "documents"])
def test_the_collapse_made_while_asking_is_the_one_the_scoring_reads(retriever: object) -> None:
    from goldeneval.retrieval import columnar
    from goldeneval.retrieval.asking import ask_to_depth

    _, coded = ask_to_depth(retriever, _set(9).questions, 5, to_doc, timeout_s=None)  # type: ignore[arg-type]
    assert 5 in coded.collapsed  # made once, while asking
    kept, fresh = coded.kept(5), columnar.collapse(coded.rankings, 5)
    assert np.array_equal(kept.offsets, fresh.offsets) and np.array_equal(kept.codes, fresh.codes)
    assert (kept is coded.rankings) == (fresh is coded.rankings)  # one array where nothing collapses


def test_a_run_asked_again_deeper_collapses_its_final_rankings() -> None:
    from goldeneval.retrieval import columnar
    from goldeneval.retrieval.asking import ask_to_depth

    _, coded = ask_to_depth(_Chunks(), _set(12).questions, 5, to_doc, timeout_s=None)
    kept, fresh = coded.kept(5), columnar.collapse(coded.rankings, 5)
    assert np.array_equal(kept.offsets, fresh.offsets) and np.array_equal(kept.codes, fresh.codes)


def test_same_numbers_is_array_equal_a_block_at_a_time(monkeypatch: pytest.MonkeyPatch) -> None:
    import goldeneval.retrieval.scored as scoring

    monkeypatch.setattr(scoring, "_COMPARED_AT_ONCE", 4)
    a = np.arange(10, dtype=np.int32)
    assert scoring._same_numbers(a, a) and scoring._same_numbers(a, a[:])  # the same memory
    assert scoring._same_numbers(a, a.copy()) and scoring._same_numbers(a, a.astype("<u4"))
    changed = a.copy()
    changed[9] = 0  # in the last block
    assert not scoring._same_numbers(a, changed) and not scoring._same_numbers(a, a[:9])
    assert not scoring._same_numbers(a[::2], a[:5])  # the same start, read differently
    assert scoring._same_numbers(np.empty(0, np.int32), np.empty(0, np.int64))
