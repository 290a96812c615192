"""Issue 26 (memory): a run is coded as it is asked, in chunks, and keeps one array of codes.

What is checked here is behaviour: the chunked coder gives exactly what coding every ranking
at once gives, the over-fetch rounds end in the same coded run, arrays are shared only where
they are equal, and the details' lists hold the values they held before."""

from __future__ import annotations

import math
import tracemalloc
from collections.abc import Sequence
from unittest import mock

import numpy as np
import pytest

import goldeneval.retrieval.asking as asking
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval import columnar
from goldeneval.retrieval.asking import ask_to_depth
from goldeneval.retrieval.columnar import scan as columnar_scan
from goldeneval.retrieval.encoding import RunCoder, code_run
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.retrievers.base import document_id_mapper
from goldeneval.retrieval.run import _rounded_ms, _shared_floats

to_doc = document_id_mapper("#")


def _questions(n: int) -> list[GoldenQuestion]:
    return [
        GoldenQuestion(
            id=f"q{i}",
            text=f"question {i}",
            form="GAP" if i % 2 else "MATCH",
            expected=[] if i % 7 == 0 else [f"d{i}"],
            not_relevant=["d0"] if i % 5 == 1 else [],
        )
        for i in range(n)
    ]


def _rankings(n: int) -> list[tuple[str, ...]]:
    """Chunk ids with repeats, empty rankings and ids shared between questions."""
    return [() if i % 9 == 4 else tuple(f"d{(i + j) % 13}#{j % 3}" for j in range(i % 6 + 1)) for i in range(n)]


def _same(a: columnar.Rankings | columnar.Judgements, b: columnar.Rankings | columnar.Judgements) -> bool:
    return bool(np.array_equal(a.offsets, b.offsets) and np.array_equal(a.codes, b.codes))


@pytest.mark.parametrize("batch", [1, 2, 5, 40])
def test_coding_in_batches_equals_coding_at_once(batch: int) -> None:
    questions, returned = _questions(40), _rankings(40)
    whole = code_run(questions, returned, to_doc)
    coder = RunCoder(len(questions), sum(map(len, returned)), to_doc)
    for start in range(0, len(returned), batch):
        coder.add(returned[start : start + batch])
    parts = coder.finish(questions)
    assert _same(parts.rankings, whole.rankings) and _same(parts.judgements, whole.judgements)
    assert parts.documents.tolist() == whole.documents.tolist()
    assert parts.raw.ids.tolist() == whole.raw.ids.tolist() and list(parts.raw) == returned
    assert parts.judged is not None and whole.judged is not None and _same(parts.judged, whole.judged)


def test_a_coder_refuses_more_than_it_was_made_for_and_an_unfinished_run() -> None:
    coder = RunCoder(2, 3, to_doc)
    with pytest.raises(ValueError):
        coder.add([("a", "b", "c", "d")])
    coder.add([("a",)])
    with pytest.raises(ValueError):
        coder.finish(_questions(2))


def test_one_raw_id_per_document_keeps_one_array_for_numbers_and_codes() -> None:
    questions = _questions(3)
    coded = code_run(questions, [("a#1", "b#1"), ("b#1", "c#2"), ()], to_doc)
    assert coded.rankings.codes is coded.raw.numbers  # the same numbers: one array, not two
    shared = code_run(questions, [("a#1", "a#2"), ("b#1",), ()], to_doc)  # a#1 and a#2 are one document
    assert shared.rankings.codes is not shared.raw.numbers
    assert shared.rankings.codes.tolist() == [0, 0, 1] and shared.raw.numbers.tolist() == [0, 1, 2]


def test_collapse_of_rankings_that_lose_nothing_is_the_rankings_themselves() -> None:
    distinct = columnar.Rankings(np.array([0, 2, 3]), np.array([4, 5, 6], dtype=np.int32))
    assert columnar.collapse(distinct, 5) is distinct
    repeated = columnar.Rankings(np.array([0, 2, 3]), np.array([4, 4, 6], dtype=np.int32))
    collapsed = columnar.collapse(repeated, 5)
    assert collapsed is not repeated and collapsed.codes.tolist() == [4, 6]
    assert columnar.collapse(distinct, 1).codes.tolist() == [4, 6]  # cut at the limit: a copy


@pytest.mark.parametrize("loses", [False, True])
def test_a_collapse_that_loses_nothing_allocates_no_mask_as_long_as_the_run(loses: bool) -> None:
    # 1,000 rankings of 1,000 distinct documents: a mask of the raw ids would be 1,000,000 bytes;
    # small blocks keep the scan's own arrays (a few per question, a few per block) far below.
    rows, width = 1_000, 1_000
    codes = ((np.arange(rows)[:, None] * 7 + np.arange(width)[None, :]) % 99_991).astype(np.int32)
    if loses:
        codes[-1, -1] = codes[-1, 0]  # the last ranking repeats a document: the mask is needed
    rankings = columnar.Rankings(np.arange(0, rows * width + 1, width, dtype=np.int64), codes.reshape(-1))
    with mock.patch.object(columnar_scan, "_CHUNK_ELEMENTS", 1 << 12):
        columnar.collapse(columnar.Rankings(rankings.offsets[:3], codes[:2].reshape(-1)), width)  # lazy imports
        tracemalloc.start()
        try:
            collapsed = columnar.collapse(rankings, width)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    assert (collapsed is rankings) == (not loses)
    assert (peak >= rows * width) == loses, peak


class _Deep:
    """Three chunks per document: the first 30 ids hold 10 documents, so a depth of 20 asks again."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, int]] = []

    def retrieve(self, question: str, limit: int) -> list[str]:
        self.calls.append((question, limit))
        i = int(question.rsplit(" ", 1)[-1])
        if i % 4 == 3:
            return [f"d{i}#0"]  # short: never asked again
        return [f"x{(i + j // 3) % 50}#{j % 3}" for j in range(limit)]


@pytest.mark.parametrize("chunk", [1, 3, 1000])
def test_asking_in_chunks_and_rounds_codes_what_the_final_rankings_code_to(
    chunk: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(asking, "ASK_CHUNK", chunk)
    questions = _questions(10)
    retriever = _Deep()
    answers, coded = ask_to_depth(retriever, questions, 20, to_doc, timeout_s=None)
    final = [tuple(retriever.retrieve(q.text, limit)) for q, limit in _last_limits(retriever.calls, questions)]
    expected = code_run(questions, final, to_doc)
    assert _same(coded.rankings, expected.rankings) and coded.documents.tolist() == expected.documents.tolist()
    assert coded.raw.ids.tolist() == expected.raw.ids.tolist() and list(answers.returned) == final
    assert answers.errors == [None] * 10


def _last_limits(
    calls: Sequence[tuple[str, int]], questions: Sequence[GoldenQuestion]
) -> list[tuple[GoldenQuestion, int]]:
    last = dict(calls)
    return [(question, last[question.text]) for question in questions]


def test_the_calls_do_not_depend_on_the_chunk_size(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    for chunk in (2, 1000):
        monkeypatch.setattr(asking, "ASK_CHUNK", chunk)
        retriever = _Deep()
        ask_to_depth(retriever, _questions(9), 20, to_doc, timeout_s=None)
        calls.append(retriever.calls)
    assert calls[0] == calls[1]  # every first call, then the deeper ones, in question order


def test_a_chunked_run_stores_what_one_chunk_stores(monkeypatch: pytest.MonkeyPatch) -> None:
    golden = GoldenQuestionSet(id="s", questions=_questions(12))
    details = []
    for chunk in (1, 5, 1000):
        monkeypatch.setattr(asking, "ASK_CHUNK", chunk)
        run = evaluate_retrieval(golden, _Deep(), "deep", to_document=to_doc, timeout_s=None)
        stored = run.details(PrivacyMode.FULL).to_json()
        del stored["questions"]["latency_ms"]  # measured: differs from run to run
        details.append(stored)
    assert details[0] == details[1] == details[2]


def test_shared_floats_keep_each_value_as_it_was() -> None:
    values = np.array([0.5, math.nan, -0.0, 0.0, 0.5, 1 / 3, 1 / 3 + 1e-16, math.nan])
    listed = _shared_floats(values)
    assert listed[1] is None and listed[7] is None
    assert [repr(v) for v in listed] == [repr(v) for v in [0.5, None, -0.0, 0.0, 0.5, 1 / 3, 1 / 3 + 1e-16, None]]
    assert listed[0] is listed[4]  # equal values: one object
    assert listed[2] is not listed[3]  # -0.0 and 0.0 are two values


def test_rounded_latencies_are_rounded_by_python_and_shared_only_when_all_floats() -> None:
    assert _rounded_ms([1.23456, 1.23449, -0.0, 0.0]) == [1.235, 1.234, -0.0, 0.0]
    assert repr(_rounded_ms([-0.0, 0.0])) == "[-0.0, 0.0]"
    shared = _rounded_ms([2.0001, 2.0002])
    assert shared == [2.0, 2.0] and shared[0] is shared[1]
    mixed = _rounded_ms([1, 1.0])
    assert mixed == [1, 1.0] and type(mixed[0]) is int and type(mixed[1]) is float
