"""Importing a golden set from the BEIR layout: targets from qrels, forms derived by the
documented overlap rule (goldeneval.retrieval.beir), and errors that name the file, question and field."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

import pytest

from goldeneval.core.corpus import Document
from goldeneval.core.errors import GoldenSetError
from goldeneval.retrieval.beir import FORM_OVERLAP_THRESHOLD, derive_form, load_beir_set, vocabulary_overlap
from goldeneval.retrieval.golden import GoldenQuestionSet, QuestionForm

CORPUS = [
    {"_id": "d1", "title": "Bicycle permits", "text": "Bicycles travel free on trams."},
    {"_id": "d2", "title": "Night buses", "text": "Night buses run every hour."},
    {"_id": "d3", "title": "Lost property", "text": "Report lost items at the office."},
]
QUERIES = [
    # content terms {do, bicycl, travel, free, tram}: 4 of 5 in d1 -> MATCH
    {"_id": "q-match", "text": "Do bicycles travel free on trams?"},
    # content terms {where, can, find, weather, tomorrow}: none in d2 -> GAP
    {"_id": "q-gap", "text": "Where can I find the weather tomorrow"},
    # content terms {bicycl, lunch}: 1 of 2 in d1, exactly the threshold -> MATCH
    {"_id": "q-half", "text": "bicycle lunch"},
    # content term {properti}: only in d3's title -> MATCH
    {"_id": "q-title", "text": "property"},
    {"_id": "q-none", "text": "Is the office open on Sundays?"},
    {"_id": "q-unjudged", "text": "Never judged in this split"},
]
QRELS = """\
query-id\tcorpus-id\tscore
q-match\td1\t1
q-match\td2\t2
q-match\td3\t0
q-gap\td2\t1
q-half\td1\t1
q-title\td3\t1
q-none\td3\t0
"""


def write_beir(
    folder: Path, *, qrels: str = QRELS, queries: list[dict[str, str]] | str = QUERIES, split: str = "test"
) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in CORPUS))
    query_text = queries if isinstance(queries, str) else "".join(json.dumps(q) + "\n" for q in queries)
    (folder / "queries.jsonl").write_text(query_text)
    (folder / "qrels" / f"{split}.tsv").write_text(qrels)
    return folder


@pytest.fixture
def tinyfact(tmp_path: Path) -> Path:
    return write_beir(tmp_path / "tinyfact")


@pytest.fixture
def imported(tinyfact: Path) -> GoldenQuestionSet:
    return load_beir_set(tinyfact)


def forms(golden_set: GoldenQuestionSet) -> dict[str, QuestionForm]:
    return {q.id: q.form for q in golden_set.questions}


# --------------------------------------------------------------------------- targets


def test_targets_are_the_documents_judged_above_zero(imported: GoldenQuestionSet) -> None:
    assert {q.id: q.expected for q in imported.questions} == {
        "q-gap": {"d2"},
        "q-half": {"d1"},
        "q-match": {"d1", "d2"},
        "q-title": {"d3"},
    }


def test_a_query_judged_only_non_relevant_is_left_out(imported: GoldenQuestionSet) -> None:
    # An empty target set would claim "no document answers it"; a score-0 judgement does not.
    assert "q-none" not in {q.id for q in imported.questions}


def test_a_query_absent_from_the_split_is_not_imported(imported: GoldenQuestionSet) -> None:
    assert "q-unjudged" not in {q.id for q in imported.questions}


def test_the_set_is_named_after_the_folder_and_split_and_points_at_the_folder(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tinyfact", split="dev")

    golden_set = load_beir_set(folder, "dev")

    assert (golden_set.id, golden_set.corpus) == ("beir-tinyfact-dev", str(folder.resolve()))


# --------------------------------------------------------------------------- derived forms


def test_a_question_sharing_most_terms_with_its_targets_is_match(imported: GoldenQuestionSet) -> None:
    assert forms(imported)["q-match"] is QuestionForm.MATCH


def test_a_question_sharing_no_terms_with_its_targets_is_gap(imported: GoldenQuestionSet) -> None:
    assert forms(imported)["q-gap"] is QuestionForm.GAP


def test_an_overlap_of_exactly_the_threshold_is_match(imported: GoldenQuestionSet) -> None:
    assert vocabulary_overlap("bicycle lunch", ["Bicycle permits\nBicycles travel free on trams."]) == 0.5
    assert FORM_OVERLAP_THRESHOLD == 0.5
    assert forms(imported)["q-half"] is QuestionForm.MATCH


def test_a_target_title_counts_as_target_vocabulary(imported: GoldenQuestionSet) -> None:
    assert forms(imported)["q-title"] is QuestionForm.MATCH


def test_a_question_without_targets_is_gap() -> None:
    assert derive_form("Is the office open on Sundays?", []) is QuestionForm.GAP


def test_a_question_without_content_terms_is_gap() -> None:
    assert derive_form("the?", ["the document text"]) is QuestionForm.GAP


def test_every_imported_form_is_marked_as_derived(imported: GoldenQuestionSet) -> None:
    assert {q.form_derived for q in imported.questions} == {True}


def test_the_import_is_deterministic(tinyfact: Path, imported: GoldenQuestionSet) -> None:
    assert load_beir_set(tinyfact) == imported


# --------------------------------------------------------------------------- errors


def test_a_target_missing_from_the_corpus_fails_naming_qrels_question_and_field(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tinyfact", qrels="q-gap\td2\t1\nq-match\td1\t1\nq-match\td99\t1\n")
    qrels = folder / "qrels" / "test.tsv"

    with pytest.raises(GoldenSetError) as caught:
        load_beir_set(folder)

    assert str(caught.value) == (
        f"{qrels}: question #2 (id 'q-match'): field 'expected': document ids not in the corpus: d99"
    )


def test_a_judged_query_missing_from_queries_fails_naming_the_question(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "tinyfact", qrels="q-ghost\td1\t1\n")

    with pytest.raises(GoldenSetError) as caught:
        load_beir_set(folder)

    assert str(caught.value) == (
        f"{folder / 'qrels' / 'test.tsv'}: question #1 (id 'q-ghost'): query id not found in queries.jsonl"
    )


def test_a_missing_split_fails_naming_the_qrels_file(tinyfact: Path) -> None:
    with pytest.raises(GoldenSetError) as caught:
        load_beir_set(tinyfact, "train")

    assert str(caught.value) == f"{tinyfact / 'qrels' / 'train.tsv'}: qrels file not found"


BAD_QRELS = {
    "two-columns": ("q-gap\td2\n", "line 1: expected 3 tab-separated columns, found 2"),
    "score-not-an-integer": (
        "query-id\tcorpus-id\tscore\nq-gap\td2\thigh\n",
        "line 2: score 'high' is not an integer",
    ),
}


@pytest.mark.parametrize(("qrels", "problem"), BAD_QRELS.values(), ids=BAD_QRELS.keys())
def test_a_malformed_qrels_line_fails_naming_the_line(tmp_path: Path, qrels: str, problem: str) -> None:
    folder = write_beir(tmp_path / "tinyfact", qrels=qrels)

    with pytest.raises(GoldenSetError) as caught:
        load_beir_set(folder)

    assert str(caught.value) == f"{folder / 'qrels' / 'test.tsv'}: {problem}"


BAD_QUERIES = {
    "malformed-json": (
        '{"_id": "q-gap", "text": "x"}\n{"_id": \n',
        "line 2: malformed JSON: Expecting value",
    ),
    "missing-id": ('{"_id": "q-gap", "text": "x"}\n{"text": "y"}\n', "line 2: field '_id': missing or empty"),
    "missing-text": (
        '{"_id": "q-gap"}\n',
        "line 1 (id 'q-gap'): field 'text': missing, empty or not a string",
    ),
    "not-an-object": ('["q-gap", "x"]\n', "line 1: field '_id': missing or empty"),
}


@pytest.mark.parametrize(("queries", "problem"), BAD_QUERIES.values(), ids=BAD_QUERIES.keys())
def test_a_malformed_queries_line_fails_naming_the_line(tmp_path: Path, queries: str, problem: str) -> None:
    folder = write_beir(tmp_path / "tinyfact", queries=queries)

    with pytest.raises(GoldenSetError) as caught:
        load_beir_set(folder)

    assert str(caught.value) == f"{folder / 'queries.jsonl'}: {problem}"


# --------------------------------------------------------------------------- real data: SciFact


@pytest.fixture(scope="module")
def scifact_set(scifact_dir: Path) -> GoldenQuestionSet:
    return load_beir_set(scifact_dir, "test")


@pytest.mark.scifact
def test_scifact_test_split_imports_300_questions(scifact_set: GoldenQuestionSet) -> None:
    assert len(scifact_set.questions) == 300


@pytest.mark.scifact
def test_scifact_test_split_has_339_targets_in_total(scifact_set: GoldenQuestionSet) -> None:
    assert sum(len(q.expected) for q in scifact_set.questions) == 339


@pytest.mark.scifact
def test_every_scifact_form_is_derived(scifact_set: GoldenQuestionSet) -> None:
    assert all(q.form_derived for q in scifact_set.questions)


@pytest.mark.scifact
def test_scifact_holds_both_forms(scifact_set: GoldenQuestionSet) -> None:
    # At the time of writing the rule gives 203 MATCH and 97 GAP.
    assert {q.form for q in scifact_set.questions} == {QuestionForm.MATCH, QuestionForm.GAP}


# --------------------------------------------------------------------------- one read per run


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_over_a_beir_folder_reads_its_corpus_once(
    tinyfact: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The set's loader (forms) and the retriever share one read of corpus.jsonl (pipeline.run)."""
    from goldeneval.core import corpus as corpus_module
    from goldeneval.retrieval import pipeline
    from goldeneval.retrieval.spec import RunSpec

    reads: list[Path] = []
    read = corpus_module._beir_documents

    def counted(path: Path) -> Iterable[Document]:
        reads.append(path)
        return read(path)

    monkeypatch.setattr(corpus_module, "_beir_documents", counted)
    spec = RunSpec(
        set_ref=str(tinyfact), retriever_id="goldeneval.lexical", series="lexical", cache_dir=tmp_path / "cache"
    )
    outcome = pipeline.run(spec, tmp_path / "results.duckdb")
    assert len(outcome.run.results) == 4
    assert reads == [tinyfact / "corpus.jsonl"]


def test_a_corpus_changed_inside_a_block_is_read_again_and_nothing_is_kept_after(tinyfact: Path) -> None:
    from goldeneval.core.corpus import load_beir_corpus, shared_corpora

    path = tinyfact / "corpus.jsonl"
    with shared_corpora():
        first = load_beir_corpus(path)
        assert load_beir_corpus(path) is first
        path.write_text(path.read_text() + json.dumps({"_id": "d4", "title": "New", "text": "A new page."}) + "\n")
        changed = load_beir_corpus(path)
        assert changed is not first and len(changed) == 4
    assert load_beir_corpus(path) is not load_beir_corpus(path)
