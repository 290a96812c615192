"""Loading golden set files: the three formats give one model, and every bad file fails with
one message naming the file, the question (position and id) and the field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from goldeneval.core.errors import GoldenSetError
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm, load_golden_set

CHILD_FARE = {
    "id": "fare-child",
    "text": "How much is a ticket for my daughter?",
    "form": "GAP",
    "expected": ["fares/child-tickets", "fares/family-pass"],
    "hard_class": "near-duplicate",
    "answer_gist": "Children under 15 pay the reduced fare.",
}
NO_ANSWER = {"id": "lost-cat", "text": "Has anyone found my cat?", "form": "MATCH", "expected": []}
SET = {
    "id": "transit-mini",
    "description": "Two questions about fares.",
    "corpus": "corpus",
    "questions": [CHILD_FARE, NO_ANSWER],
}


def expected_model(*, description: str, corpus: str | None) -> GoldenQuestionSet:
    return GoldenQuestionSet(
        id="transit-mini",
        description=description,
        corpus=corpus,
        questions=(
            GoldenQuestion(
                id="fare-child",
                text="How much is a ticket for my daughter?",
                form=QuestionForm.GAP,
                expected=frozenset({"fares/child-tickets", "fares/family-pass"}),
                hard_class="near-duplicate",
                answer_gist="Children under 15 pay the reduced fare.",
            ),
            GoldenQuestion(
                id="lost-cat", text="Has anyone found my cat?", form=QuestionForm.MATCH, expected=frozenset()
            ),
        ),
    )


def one_question(**changes: Any) -> dict[str, Any]:
    """A set of one valid question, with fields replaced (or removed, given ``...``)."""
    question: dict[str, Any] = {
        "id": "q1",
        "text": "How much is a child ticket?",
        "form": "MATCH",
        "expected": ["fares/child"],
    }
    question.update(changes)
    return {"id": "s", "questions": [{k: v for k, v in question.items() if v is not ...}]}


# --------------------------------------------------------------------------- formats


@pytest.mark.parametrize("name", ["set.yaml", "set.yml", "set.json", "set.jsonl"])
def test_each_format_loads_the_same_model(write_set: Callable[..., Path], tmp_path: Path, name: str) -> None:
    loaded = load_golden_set(write_set(name, SET))

    assert loaded == expected_model(
        description="Two questions about fares.", corpus=str((tmp_path / "corpus").resolve())
    )


def test_jsonl_without_a_header_line_takes_its_id_from_the_file_name(write_set: Callable[..., Path]) -> None:
    loaded = load_golden_set(write_set("transit-mini.jsonl", SET, jsonl_header=False))

    assert loaded == expected_model(description="", corpus=None)


def test_a_relative_corpus_is_resolved_against_the_folder_of_the_set_file(
    write_set: Callable[..., Path], tmp_path: Path
) -> None:
    path = write_set("sets/nested/set.yaml", {**SET, "corpus": "../corpus"})

    assert load_golden_set(path).corpus == str((tmp_path / "sets" / "corpus").resolve())


def test_an_absolute_corpus_is_kept_as_written(write_set: Callable[..., Path], tmp_path: Path) -> None:
    corpus = str(tmp_path.resolve() / "elsewhere" / "corpus")

    assert load_golden_set(write_set("sets/set.yaml", {**SET, "corpus": corpus})).corpus == corpus


def test_a_set_without_a_corpus_has_none(write_set: Callable[..., Path]) -> None:
    without_corpus = {k: v for k, v in SET.items() if k != "corpus"}

    assert load_golden_set(write_set("set.yaml", without_corpus)).corpus is None


# --------------------------------------------------------------------------- optional fields


def test_an_empty_expected_list_loads_as_a_no_answer_question(write_set: Callable[..., Path]) -> None:
    loaded = load_golden_set(write_set("set.yaml", one_question(expected=[])))

    assert loaded.questions[0].expected == frozenset()


def test_hard_class_and_answer_gist_are_optional(write_set: Callable[..., Path]) -> None:
    question = load_golden_set(write_set("set.yaml", one_question())).questions[0]

    assert (question.hard_class, question.answer_gist) == (None, None)


def test_a_hard_class_outside_the_known_ones_is_accepted(write_set: Callable[..., Path]) -> None:
    loaded = load_golden_set(write_set("set.yaml", one_question(hard_class="tables")))

    assert loaded.questions[0].hard_class == "tables"


def test_a_labelled_question_is_not_marked_as_derived(write_set: Callable[..., Path]) -> None:
    assert load_golden_set(write_set("set.yaml", one_question())).questions[0].form_derived is False


# --------------------------------------------------------------------------- bad files

HEADER = json.dumps({"set": {"id": "s"}})
GOOD_LINE = json.dumps({"id": "q1", "text": "Child fares?", "form": "MATCH", "expected": ["a"]})
Q1 = "question #1 (id 'q1')"

BAD_FILES: list[tuple[str, str, Any, str]] = [
    (
        "malformed-yaml",
        "set.yaml",
        "id: s\nquestions: [\n  - id: q1\n",
        "malformed YAML at line 3, column 3: expected the node content, but found '-'",
    ),
    (
        "malformed-json",
        "set.json",
        '{"id": "s", "questions": [}',
        "malformed JSON at line 1, column 27: Expecting value",
    ),
    (
        "malformed-jsonl-line",
        "set.jsonl",
        f'{HEADER}\n{GOOD_LINE}\n{{"id": q2}}\n',
        "malformed JSON on line 3, column 8: Expecting value",
    ),
    (
        "jsonl-header-not-an-object",
        "set.jsonl",
        '{"set": 3}\n',
        "line 1: 'set' must be an object",
    ),
    (
        "jsonl-positions-count-questions-not-lines",
        "set.jsonl",
        f'{HEADER}\n{GOOD_LINE}\n{{"id": "q2", "text": "t", "form": "MAYBE", "expected": []}}\n',
        "question #2 (id 'q2'): field 'form': Input should be 'MATCH' or 'GAP' (got 'MAYBE')",
    ),
    (
        "expected-is-a-string",
        "set.yaml",
        one_question(expected="fares/child"),
        f"{Q1}: field 'expected': must be a list of document ids (got 'fares/child')",
    ),
    (
        "expected-is-an-integer",
        "set.json",
        one_question(expected=7),
        f"{Q1}: field 'expected': must be a list of document ids (got 7)",
    ),
    (
        "expected-holds-a-number",
        "set.yaml",
        one_question(expected=[17]),
        f"{Q1}: field 'expected.0': Input should be a valid string (got 17)",
    ),
    (
        "expected-holds-an-empty-id",
        "set.yaml",
        one_question(expected=[""]),
        f"{Q1}: field 'expected': document ids must not be empty (got [''])",
    ),
    (
        "text-is-a-number",
        "set.yaml",
        one_question(text=42),
        f"{Q1}: field 'text': Input should be a valid string (got 42)",
    ),
    (
        "id-is-a-number",
        "set.yaml",
        one_question(id=5),
        "question #1: field 'id': Input should be a valid string (got 5)",
    ),
    (
        "form-is-unknown",
        "set.yaml",
        one_question(form="MAYBE"),
        f"{Q1}: field 'form': Input should be 'MATCH' or 'GAP' (got 'MAYBE')",
    ),
    (
        "text-is-empty",
        "set.yaml",
        one_question(text=""),
        f"{Q1}: field 'text': String should have at least 1 character (got '')",
    ),
    (
        "text-is-whitespace",
        "set.yaml",
        one_question(text="  \t "),
        f"{Q1}: field 'text': must not be empty or only whitespace (got '  \\t ')",
    ),
    (
        "hard-class-is-whitespace",
        "set.yaml",
        one_question(hard_class=" "),
        f"{Q1}: field 'hard_class': must not be empty or only whitespace (got ' ')",
    ),
    (
        "id-is-missing",
        "set.yaml",
        one_question(id=...),
        "question #1: field 'id': missing required field",
    ),
    (
        "expected-is-missing",
        "set.yaml",
        one_question(expected=...),
        f"{Q1}: field 'expected': missing required field",
    ),
    (
        "question-ids-repeat",
        "set.yaml",
        {"id": "s", "questions": [one_question()["questions"][0], {**NO_ANSWER, "id": "q1"}]},
        "question #2 (id 'q1'): field 'id': duplicate question id (first used by question #1)",
    ),
    (
        "question-has-an-unknown-field",
        "set.yaml",
        one_question(colour="blue"),
        f"{Q1}: field 'colour': Extra inputs are not permitted",
    ),
    (
        "question-is-not-a-mapping",
        "set.yaml",
        {"id": "s", "questions": ["How much is a child ticket?"]},
        "question #1: must be a mapping, found str",
    ),
    (
        "set-has-an-unknown-field",
        "set.yaml",
        {**one_question(), "owner": "fares team"},
        "field 'owner': Extra inputs are not permitted",
    ),
    (
        "set-id-is-missing",
        "set.json",
        {"questions": one_question()["questions"]},
        "field 'id': missing required field",
    ),
    (
        "not-utf8",
        "set.yaml",
        b"\xff\xfeid: s\n",
        "not valid UTF-8 (byte 0xff at offset 0); save the file as UTF-8",
    ),
    (
        "top-level-list",
        "set.yaml",
        one_question()["questions"],
        "expected a mapping with 'id' and 'questions', found list",
    ),
    (
        "empty-file",
        "set.yaml",
        "",
        "expected a mapping with 'id' and 'questions', found an empty document",
    ),
    (
        "questions-missing",
        "set.yaml",
        {"id": "s"},
        "field 'questions': missing required field",
    ),
    (
        "questions-not-a-list",
        "set.yaml",
        {"id": "s", "questions": {"q1": "How much?"}},
        "field 'questions': must be a list, found dict",
    ),
    (
        "questions-empty",
        "set.yaml",
        {"id": "s", "questions": []},
        "field 'questions': must hold at least one question",
    ),
    (
        "unsupported-suffix",
        "set.txt",
        "id: s\n",
        "unsupported file type '.txt'; use one of .yaml, .yml, .json, .jsonl",
    ),
    # hostile values: an error quotes at most a short excerpt of what it names
    (
        "long-list",
        "set.json",
        one_question(text=["lol"] * 1_000_000),
        f"{Q1}: field 'text': Input should be a valid string (got ['lol', 'lol', 'lol', 'lol', ...])",
    ),
    (
        "deep-and-long",
        "set.json",
        one_question(text={"a": [[["deep" * 1_000_000]]]}),
        f"{Q1}: field 'text': Input should be a valid string (got {{'a': [[[...]]]}})",
    ),
    (
        "long-id",
        "set.yaml",
        one_question(id="x" * 1_000_000),
        "question #1 (id '" + "x" * 57 + "...'): field 'id': String should have at most 200 characters "
        "(got '" + "x" * 27 + "..." + "x" * 28 + "')",
    ),
    (
        "long-unknown-field",
        "set.json",
        {**one_question(), "k" * 1_000_000: 1},
        "field '" + "k" * 57 + "...': Extra inputs are not permitted",
    ),
]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize(
    ("name", "content", "problem"),
    [case[1:] for case in BAD_FILES],
    ids=[case[0] for case in BAD_FILES],
)
def test_a_bad_file_fails_with_the_file_question_and_field(
    write_set: Callable[..., Path], name: str, content: Any, problem: str
) -> None:
    path = write_set(name, content)

    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)

    assert str(caught.value) == f"{path}: {problem}"


def test_a_missing_file_fails_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"

    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)

    assert str(caught.value) == f"{path}: file not found"


def test_the_error_keeps_its_parts_for_callers(write_set: Callable[..., Path]) -> None:
    path = write_set("set.yaml", one_question(form="MAYBE"))

    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)

    error = caught.value
    assert (error.source, error.position, error.question_id, error.field) == (str(path), 1, "q1", "form")


# --------------------------------------------------------------------------- hostile values


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_an_error_about_a_huge_value_stays_a_few_hundred_characters(write_set: Callable[..., Path]) -> None:
    huge = "x" * 1_000_000
    path = write_set("set.json", one_question(id=huge, **{huge: [huge] * 10}))

    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)

    assert len(str(caught.value)) < len(str(path)) + 300


def test_a_question_may_list_many_documents(write_set: Callable[..., Path]) -> None:
    ids = [f"doc-{n}" for n in range(100_000)]  # the repeated-id check is linear: ~0.1 s
    loaded = load_golden_set(write_set("set.json", one_question(expected=ids)))
    assert len(loaded.questions[0].expected) == 100_000
