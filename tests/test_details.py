"""The details record the evaluator writes: valid as stored, and one JSON text."""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal
from unittest import mock

import numpy as np
import pyarrow as pa
import pytest

from goldeneval.core.errors import StoreError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval.details import (
    DocumentColumns,
    QuestionColumns,
    QuestionDetail,
    RetrievalDetails,
    parse_details,
    parse_details_json,
    read_verdicts,
    retrieval_details,
)
from goldeneval.retrieval.details import documents as documents_module
from goldeneval.retrieval.details import questions as questions_module
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.metrics import parse_metrics
from goldeneval.retrieval.run import RetrievalRun, _rounded_ms
from goldeneval.store import ResultStore


class _Mixed:
    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        if question.endswith("2"):
            raise KeyError("doc-secret")
        return ["a#0", "a#1", "b", "c"]


GOLDEN = GoldenQuestionSet(
    id="details",
    questions=tuple(
        GoldenQuestion(
            id=f"q{i}",
            text=f"question {i}",
            form=QuestionForm.GAP if i % 2 else QuestionForm.MATCH,
            expected=frozenset() if i == 3 else frozenset({"b"}),
            hard_class="prose-free" if i == 1 else None,
        )
        for i in range(4)
    ),
)


@pytest.mark.parametrize("privacy", list(PrivacyMode))
def test_the_details_the_evaluator_builds_validate_and_serialise_as_one_text(privacy: PrivacyMode) -> None:
    """The evaluator builds its per-question records without re-validating them; whatever it
    builds must pass the validation a stored run is read back with, and the one-string JSON the
    store writes must be exactly the dict form."""
    details = evaluate_retrieval(GOLDEN, _Mixed(), "mixed").details(privacy)
    text = details.to_json_text()
    assert json.loads(text) == details.to_json()
    again = parse_details(json.loads(text), "test")
    assert isinstance(again, RetrievalDetails)
    assert again == RetrievalDetails.model_validate(details.to_json())
    assert [q.status for q in again.question_rows()] == ["ok", "ok", "error", "ok"]
    withheld = privacy is PrivacyMode.METADATA_ONLY
    assert ("documents" in json.loads(text)["questions"]) is not withheld
    assert ("doc-secret" in text) is not withheld


def _records_of(run: RetrievalRun) -> list[QuestionDetail]:
    """What formats 1 to 3 held for each question, built from the evaluator's results."""
    return [
        QuestionDetail(
            id=r.question_id,
            form=r.form,
            hard_class=r.hard_class,
            documents=list(r.documents),
            depth=r.depth if r.scored else None,
            top1_hit=r.top1_hit if r.scored else None,
            top3_hit=r.top3_hit if r.scored else None,
            latency_ms=round(r.latency_ms, 3),
            status=r.status.value,
            error=r.error,
            metrics=dict(r.metrics),
        )
        for r in run.results
    ]


class _Deep:
    """Rankings of varying length and chunk repeats, one question failing."""

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        i = int(question.rsplit(" ", 1)[1])
        if i == 2:
            raise KeyError("doc-secret")
        ranking = [f"d{(i * 7 + j) % 23}#{j % 2}" for j in range(3 + 9 * i)]
        return ranking[:limit]


def test_the_columns_hold_exactly_the_records_the_results_give() -> None:
    """The details are written from the scoring arrays, never from per-question records;
    read back, every question's record equals the one its result gives (documents, depth,
    verdicts, metrics, error), in both privacy modes."""
    run = evaluate_retrieval(GOLDEN, _Deep(), "deep", metrics=parse_metrics(["ndcg@10", "recall@20"]))
    details = run.details()
    assert isinstance(details.questions, QuestionColumns)
    assert details.question_rows() == _records_of(run)
    assert [len(q.documents or ()) for q in details.question_rows()] == [3, 12, 0, 20]
    withheld = run.details(PrivacyMode.METADATA_ONLY)
    assert withheld.question_rows() == [q.without_content() for q in _records_of(run)]
    assert withheld.columns.documents is None and "documents" not in withheld.to_json()["questions"]


@pytest.mark.parametrize(
    ("block", "named", "characters"), [(1 << 20, 1 << 16, 1 << 20), (7, 3, 4), (1, 1, 8), (5, 1000, 12)]
)
@pytest.mark.parametrize("read_back", [False, True], ids=["as-evaluated", "read-back"])
def test_json_rows_name_each_questions_documents_a_block_at_a_time(
    block: int, named: int, characters: int, read_back: bool
) -> None:
    """``--format json`` takes each question's documents from codes decompressed a block at a
    time, from base64 text decoded a slice at a time (a question's codes may span blocks; an
    errored question has none), and equals the records, whether the codes are the
    evaluator's own or decoded from the stored text."""
    run = evaluate_retrieval(GOLDEN, _Deep(), "deep", metrics=parse_metrics(["ndcg@10", "recall@20"]))
    details = run.details()
    if read_back:
        read = parse_details_json(details.to_json_text(), "run r1")
        assert isinstance(read, RetrievalDetails)
        details = read
    with (
        mock.patch.multiple(documents_module, _BLOCK_CODES=block, _BASE64_SLICE=characters),
        mock.patch.object(questions_module, "_NAMED_AT_ONCE", named),
    ):
        rows = list(details.question_json())
    assert rows == [record.to_json() for record in _records_of(run)]
    assert [len(row["documents"]) for row in rows] == [3, 12, 0, 20]


@pytest.mark.parametrize("block", [1 << 20, 4])
def test_json_rows_of_codes_that_cannot_be_decoded_are_a_store_error(block: int) -> None:
    """Codes cut short are found while they are streamed: a store error naming the field."""
    stored = evaluate_retrieval(GOLDEN, _Deep(), "deep").details().to_json()
    codes = stored["questions"]["documents"]["codes"]
    stored["questions"]["documents"]["codes"] = codes[: len(codes) // 2]
    read = parse_details_json(json.dumps(stored), "run r1")
    with (
        mock.patch.object(documents_module, "_BLOCK_CODES", block),
        pytest.raises(StoreError, match=r"^run r1: details field 'questions\.documents\.codes': cannot be decoded"),
    ):
        list(read.question_json())


def _stored_with_codes(codes: np.ndarray) -> str:
    """The details of the _Deep run, its documents' codes replaced by ``codes`` (1 byte each)."""
    stored = evaluate_retrieval(GOLDEN, _Deep(), "deep").details().to_json()
    packed = pa.Codec("zstd").compress(codes.astype("u1").tobytes(), asbytes=True)
    stored["questions"]["documents"]["codes"] = base64.b64encode(packed).decode("ascii")
    return json.dumps(stored)


@pytest.mark.parametrize("block", [1 << 20, 7, 1])
def test_json_rows_of_more_codes_than_the_count_are_a_store_error(block: int) -> None:
    """The stream is read to its end before the last question's documents are given: codes
    past the count are found (found by the review: the rows were written without a word)."""
    written = DocumentColumns.model_validate(
        evaluate_retrieval(GOLDEN, _Deep(), "deep").details().to_json()["questions"]["documents"]
    )
    codes = written.decoded()
    read = parse_details_json(_stored_with_codes(np.concatenate([codes, codes[:5]])), "run r1")
    with (
        mock.patch.object(documents_module, "_BLOCK_CODES", block),
        pytest.raises(StoreError, match=r"cannot be decoded: more bytes than 38 codes of 1 bytes"),
    ):
        list(read.question_json())


def test_json_rows_of_text_that_is_not_base64_past_the_first_slice_are_a_store_error() -> None:
    documents = evaluate_retrieval(GOLDEN, _Deep(), "deep").details().to_json()["questions"]["documents"]
    stored = json.loads(_stored_with_codes(DocumentColumns.model_validate(documents).decoded()))
    assert list(parse_details_json(json.dumps(stored), "run r1").question_json())  # whole, it reads
    codes = stored["questions"]["documents"]["codes"]
    stored["questions"]["documents"]["codes"] = codes[:8] + "!!!!" + codes[12:]
    read = parse_details_json(json.dumps(stored), "run r1")
    with (
        mock.patch.object(documents_module, "_BASE64_SLICE", 4),
        pytest.raises(StoreError, match=r"^run r1: details field 'questions\.documents\.codes': cannot be decoded"),
    ):
        list(read.question_json())


def test_records_read_back_from_a_table_give_the_same_details_as_the_arrays() -> None:
    """A run rebuilt from records (the Dagster hits table) writes the same questions."""
    run = evaluate_retrieval(GOLDEN, _Deep(), "deep")
    rebuilt = dataclasses.replace(run, results=list(run.results))
    for privacy in PrivacyMode:
        assert rebuilt.details(privacy).question_rows() == run.details(privacy).question_rows()


def test_records_of_an_older_format_convert_to_columns_and_back() -> None:
    rows = _records_of(evaluate_retrieval(GOLDEN, _Mixed(), "mixed"))
    columns = QuestionColumns.from_rows(rows)
    assert columns.rows() == rows
    assert columns.top_documents(2) == [q.documents[:2] if q.documents is not None else None for q in rows]
    older = RetrievalDetails.model_validate(
        {
            **evaluate_retrieval(GOLDEN, _Mixed(), "mixed").details().to_json(),
            "format_version": 3,
            "questions": [q.to_json() for q in rows],
        }
    )
    ids, verdicts = older.verdicts("top1_hit")
    assert dict(zip(ids, verdicts.tolist(), strict=True)) == {q.id: q.top1_hit for q in rows if q.top1_hit is not None}
    assert older.columns.rows() == older.question_rows() == rows


def _stored() -> dict[str, Any]:
    return evaluate_retrieval(GOLDEN, _Deep(), "deep").details().to_json()


def _with(path: str, value: Any) -> dict[str, Any]:
    raw = _stored()
    *parents, last = path.split(".")
    target = raw
    for part in parents:
        target = target[part]
    target[last] = value(target[last]) if callable(value) else value
    return raw


@pytest.mark.parametrize(
    ("broken", "field", "problem"),
    [
        (_with("questions.depth", lambda d: d[:-1]), "questions.columns", "depth: 3 entries for 4 questions"),
        (
            _with("questions.metrics", lambda m: {**m, "mrr@10": [0.5]}),
            "questions.columns",
            "metrics.mrr@10: 1 entries",
        ),
        (
            _with("questions.documents.count", 2),
            "questions.columns",
            "documents.count: 2 codes where depth adds up to 38",
        ),
        (_with("questions.status", lambda s: [*s[:-1], "maybe"]), "questions.columns.status.3", "'ok' or 'error'"),
        (_with("format_version", 3), "(details)", "questions: format 3 does not hold columns"),
        (_with("questions.depth", lambda d: [d[0], d[1], 1, d[3]]), "questions.columns", "'q2' is an error but"),
        (_with("questions.top1_hit", lambda h: [None, *h[1:]]), "questions.columns", "'q0' is scored but its top1"),
        (_with("questions.depth", lambda d: [-1, d[1] + 1, *d[2:]]), "questions.columns", "a depth below 0"),
        (
            _with(  # consistent with the count: only the measurement depth bounds what is decoded
                "questions",
                lambda q: {
                    **q,
                    "depth": [10**12, *q["depth"][1:]],
                    "documents": {**q["documents"], "count": 10**12 + sum(d or 0 for d in q["depth"][1:])},
                },
            ),
            "(details)",
            "questions.depth: 1000000000000 is deeper than the measurement depth 100",
        ),
    ],
)
def test_broken_columns_are_refused_naming_the_field(broken: dict[str, Any], field: str, problem: str) -> None:
    with pytest.raises(StoreError) as caught:
        parse_details(broken, "run r1")
    assert f"run r1: details field {field!r}" in str(caught.value)
    assert problem in str(caught.value)
    with pytest.raises(StoreError, match="run r1: details field"):
        parse_details_json(json.dumps(broken), "run r1")


def _codes_of(vocabulary: list[str], codes: list[int]) -> str:
    return DocumentColumns.encode(vocabulary, np.asarray(codes)).codes


@pytest.mark.parametrize(
    ("codes", "problem"),
    [
        ("not base64!", "cannot be decoded"),
        (lambda c: c[: len(c) // 2], "cannot be decoded"),
        (_codes_of([f"x{i}" for i in range(300)], [7] * 38), "cannot be decoded"),  # 2-byte codes, 1 expected
        (_codes_of(["a", "b"], [299 % 256] * 38), "code 43 is outside the vocabulary of"),
    ],
)
def test_documents_that_cannot_be_decoded_fail_when_read(codes: Any, problem: str) -> None:
    """The codes are decoded when the documents are first read (a comparison never reads
    them); what cannot be decoded is a store error naming the field, never wrong documents."""
    details = parse_details(_with("questions.documents.codes", codes), "run r1")
    assert isinstance(details, RetrievalDetails) and details.verdicts("top1_hit")[0]  # the verdicts still read
    with pytest.raises(StoreError, match=f"^run r1: details field 'questions.documents.codes': {problem}"):
        details.columns.document_lists()


@pytest.mark.parametrize(
    "size",
    [1, 255, 256, 65_536, 65_537, pytest.param(16_777_217, marks=pytest.mark.slow)],  # 16M codes: seconds; CI runs it
)
def test_codes_round_trip_at_every_width(size: int) -> None:
    codes = np.array([0, size - 1, size // 2, 0, size - 1], dtype=np.int64)
    vocabulary = [f"d{i}" for i in range(size)] if size < 100_000 else [""] * size
    stored = DocumentColumns.model_validate_json(DocumentColumns.encode(vocabulary, codes).model_dump_json())
    assert stored.decoded().tolist() == codes.tolist()


def test_documents_compare_equal_whether_or_not_they_were_decoded() -> None:
    written = evaluate_retrieval(GOLDEN, _Deep(), "deep").details()
    read = parse_details_json(written.to_json_text(), "run r1")
    assert read == written
    assert isinstance(read, RetrievalDetails) and read.columns.document_lists() is not None
    assert read == written and written == read


def test_a_dataframe_has_the_columns_the_records_have() -> None:
    """metadata_only: no documents column; a metric no question has: no column."""
    withheld = evaluate_retrieval(GOLDEN, _Deep(), "deep").details(PrivacyMode.METADATA_ONLY).to_dataframe()
    assert "documents" not in withheld.columns and "metric:mrr@10" in withheld.columns

    class _Fails:
        def retrieve(self, question: str, limit: int) -> Sequence[str]:
            raise RuntimeError("down")

    failed = evaluate_retrieval(GOLDEN, _Fails(), "down").details().to_dataframe()
    assert not [column for column in failed.columns if column.startswith("metric:")]
    assert list(failed["status"]) == ["error"] * 4


def test_records_before_format_3_keep_an_unknown_depth() -> None:
    rows = [q.model_copy(update={"depth": None}) for q in _records_of(evaluate_retrieval(GOLDEN, _Mixed(), "mixed"))]
    columns = QuestionColumns.from_rows(rows)
    assert columns.depth == [None] * 4
    assert columns.document_lists() == [q.documents for q in rows]


def test_a_run_compares_and_copies_as_before() -> None:
    """The evaluator's lazily built results behave as the tuple they were."""
    run = evaluate_retrieval(GOLDEN, _Deep(), "deep")
    assert copy.deepcopy(run) == run
    assert run.results == tuple(run.results) and isinstance(run.results[1:3], tuple)
    assert dataclasses.replace(run, results=tuple(run.results)) == run


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_comparison_reads_only_the_verdict_columns_of_the_earlier_run(tmp_path: Path) -> None:
    """The earlier run's ids and verdicts are read without its other columns, and equal what
    the whole details give; an error has no verdict on either path."""
    store = ResultStore(tmp_path / "results.duckdb")
    run = evaluate_retrieval(GOLDEN, _Mixed(), "mixed")
    saved = store.save_run(run.to_record())
    earlier = store.get_run(saved.id)
    assert earlier is not None
    columns: dict[str, Literal["top1_hit", "top3_hit"]] = {"pass_rate": "top1_hit", "mean_score": "top3_hit"}
    light = [earlier.paired_outcomes(rate) for rate in columns]
    assert "details" not in earlier.__dict__  # the whole details were not parsed
    whole = retrieval_details(earlier)
    for column, outcomes in zip(columns.values(), light, strict=True):
        assert outcomes is not None
        ids, verdicts = outcomes
        expected_ids, expected = whole.verdicts(column)
        assert ids == expected_ids == ["q0", "q1", "q3"] and verdicts.tolist() == expected.tolist()


@pytest.mark.parametrize(
    ("broken", "field"),
    [
        (_with("questions.top1_hit", lambda h: h[:-1]), "questions"),
        (_with("questions.top3_hit", lambda h: ["yes?", *h[1:]]), "questions.top3_hit.0"),
        (_with("questions", lambda q: {k: v for k, v in q.items() if k != "id"}), "questions.id"),
    ],
)
def test_broken_verdict_columns_are_refused_naming_the_run_and_field(broken: dict[str, Any], field: str) -> None:
    with pytest.raises(StoreError, match=f"^run r1: details field '{field}'"):
        read_verdicts(json.dumps(broken), "run r1")


def test_records_before_format_4_are_read_whole_for_their_verdicts() -> None:
    rows = _records_of(evaluate_retrieval(GOLDEN, _Mixed(), "mixed"))
    older = {**_stored(), "format_version": 3, "questions": [q.to_json() for q in rows]}
    assert read_verdicts(json.dumps(older), "run r1") is None
    assert read_verdicts(json.dumps({"kind": "prompts", "format_version": 4}), "run r1") is None


@pytest.mark.parametrize(
    "latencies",
    [
        [0.0, -0.0, 0.0],
        [-0.0, 0.0],
        [1, 1.0, True],
        [float("nan"), 1.0, float("inf"), -float("inf"), 1e308, 5e-324, 0.0005, 0.0015, 2.675],
        np.array([1.0, np.nan, 0.0005, 1.0]),
        [0.1234567] * 32 + [2.0004999] * 32,
    ],
)
def test_latencies_are_rounded_as_pythons_round_rounds_each(latencies: Sequence[float]) -> None:
    # Rounded once per latency object (a batch shares one), never merged by value.
    expected = [round(ms, 3) for ms in latencies]
    rounded = _rounded_ms(latencies)
    assert [(repr(ms), type(ms)) for ms in rounded] == [(repr(ms), type(ms)) for ms in expected]
