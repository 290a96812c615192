"""The fast paths of set loading and of the label digest change nothing but the time taken.

``load_golden_set`` reads a JSONL file through ``golden._load_jsonl_fast`` and falls back to
the checked path on anything that path would not accept as is; ``canonical_label_encoding``
skips NFC normalisation when the encoded text shows that nothing needs it.  Each is compared
here with the way it was done before: the checked path, and a plain implementation of the
encoding of docs/label-digest.md.
"""

from __future__ import annotations

import hashlib
import json
import sys
import tempfile
import unicodedata
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchmarks.zero_retriever import write_set as write_generated_set
from goldeneval.core.errors import GoldenSetError
from goldeneval.retrieval import golden
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm, load_golden_set
from goldeneval.retrieval.labels import canonical_label_encoding, label_digest

SAMPLE_SET = Path(golden.__file__).parents[1] / "sample" / "transit" / "golden.yaml"


@contextmanager
def fast_path_off() -> Iterator[None]:
    with mock.patch.object(golden, "_load_jsonl_fast", return_value=None):
        yield


def load_checked(path: Path) -> GoldenQuestionSet:
    """``load_golden_set`` as it was: every file through the checked path."""
    with fast_path_off():
        return load_golden_set(path)


def outcome(path: Path, *, checked: bool) -> tuple[Any, ...]:
    """What loading ``path`` gives: the set, or the error with every part a caller reads."""
    try:
        return ("set", load_checked(path) if checked else load_golden_set(path))
    except GoldenSetError as exc:
        return ("error", str(exc), exc.source, exc.problem, exc.position, exc.question_id, exc.field)
    except Exception as exc:  # what the checked path lets through must stay what it is, too
        return ("exception", type(exc), str(exc))


def assert_both_paths_agree(path: Path) -> tuple[Any, ...]:
    fast, checked = outcome(path, checked=False), outcome(path, checked=True)
    assert fast == checked
    if fast[0] == "set":
        assert fast[1].model_fields_set == checked[1].model_fields_set
        assert fast[1].model_dump() == checked[1].model_dump()
        assert label_digest(fast[1]) == label_digest(checked[1])
    return fast


def jsonl(header: dict[str, Any] | None, questions: Iterable[Any]) -> str:
    lines = [] if header is None else [json.dumps({"set": header})]
    lines.extend(json.dumps(question) for question in questions)
    return "\n".join(lines) + "\n"


def question(**changes: Any) -> dict[str, Any]:
    q: dict[str, Any] = {
        "id": "q1",
        "text": "How much is a child ticket?",
        "form": "MATCH",
        "expected": ["fares/child"],
    }
    q.update(changes)
    return {k: v for k, v in q.items() if v is not ...}


# --------------------------------------------------------------------------- valid files: one set


def test_the_bundled_sample_loads_to_the_same_set_on_both_paths(tmp_path: Path) -> None:
    document = yaml.safe_load(SAMPLE_SET.read_text(encoding="utf-8"))
    header = {key: value for key, value in document.items() if key != "questions"}
    path = tmp_path / "transit.jsonl"
    path.write_text(jsonl(header, document["questions"]), encoding="utf-8")

    assert golden._load_jsonl_fast(path, path.read_text(encoding="utf-8")) is not None  # the fast path is taken
    loaded = assert_both_paths_agree(path)[1]

    from_yaml = load_golden_set(SAMPLE_SET)
    assert loaded.questions == from_yaml.questions
    assert label_digest(loaded) == label_digest(from_yaml)
    assert loaded.corpus == str((tmp_path / "corpus").resolve())


@pytest.mark.parametrize("size", [1, 13, 2_000])
def test_generated_sets_load_to_the_same_set_on_both_paths(tmp_path: Path, size: int) -> None:
    path = write_generated_set(tmp_path / "generated.jsonl", size)
    assert golden._load_jsonl_fast(path, path.read_text(encoding="utf-8")) is not None
    assert len(assert_both_paths_agree(path)[1].questions) == size


VALID_QUIRKS: list[tuple[str, str]] = [
    ("no-header", jsonl(None, [question()])),
    ("two-header-lines", jsonl({"id": "s"}, []) + jsonl({"description": "d", "corpus": "c"}, [question()])),
    ("header-questions-are-ignored", jsonl({"id": "s", "questions": [1, 2]}, [question()])),
    ("absolute-corpus", jsonl({"id": "s", "corpus": "/data/corpus"}, [question()])),
    ("blank-and-whitespace-lines", "\n  \t\n" + jsonl({"id": "s"}, [question()]) + "\n\u00a0\n\x1f\n"),
    ("crlf", jsonl({"id": "s"}, [question(), question(id="q2")]).replace("\n", "\r\n")),
    ("no-final-newline", jsonl({"id": "s"}, [question()]).rstrip("\n")),
    (
        "every-field",
        jsonl(
            {"id": "s", "description": "all of it"},
            [
                question(
                    expected=["a", "b", "c"],
                    grades={"a": 3, "b": 1},
                    hard_class=None,
                    answer_gist="gist",
                    form_derived="yes",
                ),
                question(id="q2", form="GAP", expected=[], form_derived=1),
            ],
        ),
    ),
    (
        "non-ascii-and-escapes",
        jsonl(
            None,
            [
                question(id="caf\u00e9", text='cafe\u0301 "quoted" back\\slash \u2028 \U0001f600', expected=["\u212b"]),
                question(id="\U0001f600", text="tab\tand\nnewline, escaped by JSON", expected=["x\u0000y"]),
            ],
        ),
    ),
    ("ascii-escaped-non-bmp", json.dumps(question(text="\U0001f600 \u00e9"), ensure_ascii=True) + "\n"),
    ("escaped-slash", '{"id": "a\\/b", "text": "t", "form": "GAP", "expected": ["a"]}\n'),
    ("uppercase-surrogate-pair", '{"id": "q", "text": "\\uD83D\\uDE00", "form": "GAP", "expected": []}\n'),
]


@pytest.mark.parametrize("content", [case[1] for case in VALID_QUIRKS], ids=[case[0] for case in VALID_QUIRKS])
def test_valid_files_with_quirks_load_to_the_same_set_on_the_fast_path(tmp_path: Path, content: str) -> None:
    path = tmp_path / "quirks.jsonl"
    path.write_text(content, encoding="utf-8")

    assert golden._load_jsonl_fast(path, content) is not None
    assert assert_both_paths_agree(path)[0] == "set"


# --------------------------------------------------------------------------- invalid files: one error

HEADER = json.dumps({"set": {"id": "s"}})
GOOD = json.dumps(question())

BAD_FILES: list[tuple[str, str, str]] = [
    ("malformed-line", f'{HEADER}\n{GOOD}\n{{"id": q2}}\n', "malformed JSON on line 3, column 8: Expecting value"),
    (
        "missing-field",
        f"{HEADER}\n{json.dumps(question(text=...))}\n",
        "question #1 (id 'q1'): field 'text': missing required field",
    ),
    (
        "grade-below-one",
        f"{HEADER}\n{json.dumps(question(grades={'fares/child': 0}))}\n",
        "question #1 (id 'q1'): field 'grades': grade of 'fares/child' must be at least 1 (expected means relevant), "
        "got 0 (got {'fares/child': 0})",
    ),
    (
        "grade-not-an-integer",
        f"{HEADER}\n{json.dumps(question(grades={'fares/child': 2.0}))}\n",
        "question #1 (id 'q1'): field 'grades.fares/child': Input should be a valid integer (got 2.0)",
    ),
    (
        "grade-of-an-unexpected-document",
        f"{HEADER}\n{json.dumps(question(grades={'other': 2}))}\n",
        "question #1 (id 'q1'): field 'grades': names documents that are not expected: other (got {'other': 2})",
    ),
    (
        "duplicate-question-id",
        f"{HEADER}\n{GOOD}\n{GOOD}\n",
        "question #2 (id 'q1'): field 'id': duplicate question id (first used by question #1)",
    ),
    (
        "grade-above-the-maximum",  # a long grade json.loads reads, but no relevance grade
        jsonl(None, [question(expected=["a"], grades={"a": 10**4000})]),
        "question #1 (id 'q1'): field 'grades': grade of 'a' must be at most 1000000 (a relevance grade) "
        "(got {'a': 100000000000000000...0000000000000000000})",
    ),
    (
        "repeated-key",  # json.loads keeps the last one; YAML files are refused for it too
        '{"id": "q1", "id": "q2", "text": "t", "form": "GAP", "expected": ["a"]}\n',
        "line 1: duplicate key 'id'; the keys of a JSON object must be unique",
    ),
    (
        "repeated-grade",
        '{"id": "q1", "text": "t", "form": "GAP", "expected": ["a"], "grades": {"a": 2, "a": 3}}\n',
        "line 1: duplicate key 'a'; the keys of a JSON object must be unique",
    ),
    (
        "document-listed-twice",
        f"{HEADER}\n{json.dumps(question(expected=['a', 'b', 'a']))}\n",
        "question #1 (id 'q1'): field 'expected': document ids listed twice: a (got ['a', 'b', 'a'])",
    ),
    (
        "lone-surrogate-escape",
        f'{HEADER}\n{{"id": "q1", "text": "\\ud83d", "form": "MATCH", "expected": []}}\n',
        "holds an escaped lone surrogate (such as \\ud83d), which is not text",
    ),
    (
        "lone-low-surrogate-in-an-unknown-field",
        f'{HEADER}\n{{"id": "q1", "text": "t", "form": "MATCH", "expected": [], "x\\ude00": 1}}\n',
        "holds an escaped lone surrogate (such as \\ud83d), which is not text",
    ),
    (
        "lone-surrogate-in-the-header",
        '{"set": {"id": "s", "description": "\\ud83d"}}\n' + GOOD + "\n",
        "holds an escaped lone surrogate (such as \\ud83d), which is not text",
    ),
    ("non-mapping-line", f"{HEADER}\n{GOOD}\n[1, 2]\n", "question #2: must be a mapping, found list"),
    ("header-not-an-object", '{"set": 3}\n' + GOOD + "\n", "line 1: 'set' must be an object"),
    (
        "header-after-a-question",
        f"{GOOD}\n{HEADER}\n",
        "question #2: field 'id': missing required field",
    ),
    (
        "header-unknown-field",
        '{"set": {"id": "s", "owner": "me"}}\n' + GOOD + "\n",
        "field 'owner': Extra inputs are not permitted",
    ),
    ("header-id-blank", '{"set": {"id": " "}}\n' + GOOD + "\n", "field 'id': must not be empty or only whitespace"),
    ("only-a-header", f"{HEADER}\n", "field 'questions': must hold at least one question"),
    ("empty-file", "", "field 'questions': must hold at least one question"),
    (
        "raw-control-character",
        '{"id": "q1", "text": "a\tb", "form": "MATCH", "expected": []}\n',
        "malformed JSON on line 1, column 24: Invalid control character at",
    ),
    (
        "raw-line-separator-splits-the-line",
        '{"id": "q1", "text": "a\u2028b", "form": "MATCH", "expected": []}\n',
        "malformed JSON on line 1, column 22: Unterminated string starting at",
    ),
    (
        "byte-order-mark",
        "\ufeff" + GOOD + "\n",
        "malformed JSON on line 1, column 1: Unexpected UTF-8 BOM (decode using utf-8-sig)",
    ),
    ("two-values-on-a-line", f"{GOOD} {GOOD}\n", "malformed JSON on line 1, column 99: Extra data"),
    (
        "a-question-split-over-two-lines",
        '{"id": "q1", "text": "t",\n"form": "MATCH", "expected": []}\n',
        "malformed JSON on line 1, column 26: Expecting property name enclosed in double quotes",
    ),
    (
        "nan-flag",
        GOOD[:-1] + ', "form_derived": NaN}\n',
        "question #1 (id 'q1'): field 'form_derived': Input should be a valid boolean (got nan)",
    ),
]


@pytest.mark.parametrize(("content", "problem"), [case[1:] for case in BAD_FILES], ids=[case[0] for case in BAD_FILES])
def test_a_bad_jsonl_file_fails_as_before_with_the_file_line_question_and_field(
    tmp_path: Path, content: str, problem: str
) -> None:
    path = tmp_path / "set.jsonl"
    path.write_text(content, encoding="utf-8")

    assert golden._load_jsonl_fast(path, content) is None  # the checked path words every error
    result = assert_both_paths_agree(path)
    assert result[:2] == ("error", f"{path}: {problem}")


def test_a_grade_longer_than_json_loads_reads_fails_as_before(tmp_path: Path) -> None:
    path = tmp_path / "set.jsonl"
    content = GOOD[:-1] + ', "grades": {"fares/child": ' + "9" * (sys.get_int_max_str_digits() + 1) + "}}\n"
    path.write_text(content, encoding="utf-8")

    assert golden._load_jsonl_fast(path, content) is None
    kind, message, *_ = assert_both_paths_agree(path)
    assert kind == "error" and "line 1: cannot read the JSON: Exceeds the limit" in message


# --------------------------------------------------------------------------- any file: the same outcome

NASTY_CHARACTERS = list('"\\\x00\n\t\x1f\x7f\u2028\u00a0e\u0301\u00e9\U0001f600')
nasty_text = st.text(alphabet=st.sampled_from(NASTY_CHARACTERS) | st.characters(codec="utf-8"), max_size=6)
ids = st.sampled_from(["q1", "q2", "", " ", "caf\u00e9", "cafe\u0301"]) | nasty_text
documents = st.sampled_from(["a", "b", "", "\u212b", "A\u030a"])
flags = st.sampled_from([True, False, 0, 1, 2, "yes", "maybe", None, 1.0])
question_objects = st.fixed_dictionaries(
    {
        "id": ids | st.integers(),
        "text": nasty_text,
        "form": st.sampled_from(["MATCH", "GAP", "match"]),
        "expected": st.lists(documents, max_size=3) | st.just("a"),
    },
    optional={
        "hard_class": st.none() | nasty_text,
        "grades": st.dictionaries(documents, st.integers(-1, 3) | st.just(2.0), max_size=2),
        "answer_gist": st.none() | nasty_text,
        "form_derived": flags,
        "colour": st.just("blue"),
    },
)
headers = st.fixed_dictionaries({}, optional={"id": ids, "description": nasty_text, "corpus": st.just("corpus")})
raw_lines = st.sampled_from(
    [
        "",
        "   ",
        '{"set": 3}',
        "[1, 2]",
        '"text"',
        "nonsense",
        '{"id": "q9", "text": "\\ud83d", "form": "GAP", "expected": []}',
        '{"id": "q9", "text": "\\ud83d\\ude00", "form": "GAP", "expected": []}',
        '{"id": "q9", "text": "t", "form": "GAP", "expected": ["a"],',
        '"b"]}',
    ]
)


@st.composite
def jsonl_files(draw: st.DrawFn) -> str:
    lines = [json.dumps({"set": header}) for header in draw(st.lists(headers, max_size=2))]
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["question", "question", "question", "header", "raw"]))
        if kind == "question":
            lines.append(json.dumps(draw(question_objects), ensure_ascii=draw(st.booleans())))
        elif kind == "header":
            lines.append(json.dumps({"set": draw(headers)}))
        else:
            lines.append(draw(raw_lines))
    return draw(st.sampled_from(["\n", "\r\n"])).join(lines)


@pytest.mark.slow  # 300 generated files: 1.5-4 s; CI runs it
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(jsonl_files())
def test_any_jsonl_file_gives_the_same_set_or_error_on_both_paths(content: str) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzzed.jsonl"
        path.write_text(content, encoding="utf-8")
        assert_both_paths_agree(path)


# --------------------------------------------------------------------------- label digest


def documented_encoding(questions: Iterable[GoldenQuestion]) -> bytes:
    """docs/label-digest.md, written plainly (the implementation before the fast path)."""

    def nfc(value: str) -> str:
        return unicodedata.normalize("NFC", value)

    records = []
    for q in questions:
        record: list[Any] = [
            nfc(q.id),
            nfc(q.text),
            q.form.value,
            None if q.hard_class is None else nfc(q.hard_class),
            sorted(nfc(doc) for doc in q.expected),
        ]
        if q.grades:
            record.append({nfc(doc): grade for doc, grade in sorted(q.grades.items())})
        records.append(record)
    records.sort(key=lambda record: record[0])
    document = {"version": "labels-v1", "questions": records}
    return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def documented_digest(questions: Iterable[GoldenQuestion]) -> str:
    return "labels-v1:sha256:" + hashlib.sha256(documented_encoding(questions)).hexdigest()


DIGEST_CHARACTERS = [
    *('"', "\\", "/", "\x00", "\n", "\r", "\t", "\x08", "\x0c", "\x1f", "\x7f", "\u2028", "\u2029", "\ufeff"),
    *("e", "n", "A", "<", "=", " ", "\u0301", "\u0316", "\u0338", "\u030a", "\u00e9", "\u212b", "\u0344"),
    *("\u1100", "\u1161", "\u11a8", "\uac00", "\ufb01", "\U0001f600", "\U0001d15e", "\U00010000"),
]
"""Quotes, backslashes, control characters (JSON escapes them; ``\\n`` then a combining
mark is NFC text but not NFC JSON), separators, combining marks in and out of canonical
order, composable pairs, singletons (U+212B), Hangul jamo, non-BMP characters."""
digest_text = st.text(alphabet=st.sampled_from(DIGEST_CHARACTERS), min_size=1, max_size=6).filter(str.strip)


@st.composite
def digest_questions(draw: st.DrawFn) -> GoldenQuestion:
    expected = draw(st.frozensets(digest_text, max_size=4))
    graded = draw(st.lists(st.sampled_from(sorted(expected)), unique=True)) if expected else []
    return GoldenQuestion(
        id=draw(digest_text),
        text=draw(digest_text),
        form=draw(st.sampled_from(list(QuestionForm))),
        expected=expected,
        hard_class=draw(st.none() | digest_text),
        grades={doc: draw(st.integers(1, 5)) for doc in graded},
        answer_gist=draw(st.none() | digest_text),
    )


@pytest.mark.slow  # 400 generated sets: seconds; CI runs it
@settings(max_examples=400, deadline=None)
@given(st.lists(digest_questions(), min_size=1, max_size=8, unique_by=lambda q: q.id))
def test_the_digest_is_the_documented_one_for_nasty_sets(items: list[GoldenQuestion]) -> None:
    assert canonical_label_encoding(items) == documented_encoding(items)
    assert label_digest(GoldenQuestionSet(id="s", questions=tuple(items))) == documented_digest(items)


def nasty_question(i: int, value: str, grades: dict[str, int] | None = None) -> GoldenQuestion:
    expected = frozenset({f"doc{value}", "plain", *(grades or {})})
    hard_class = value if i % 2 else None
    return GoldenQuestion(
        id=f"{value}{i}",
        text=value,
        form=QuestionForm.GAP,
        expected=expected,
        hard_class=hard_class,
        grades=grades or {},
    )


NASTY_VALUES = [
    "plain ascii",
    'quotes " and \\ backslashes /',
    "controls \x00 \x01 \x1f \x7f \t \n \r \x08 \x0c",
    "separators \u2028 \u2029 and a BOM \ufeff",
    "non-BMP \U0001f600 \U00010000",
    "composed caf\u00e9",
    "decomposed cafe\u0301",
    "escape before a mark \n\u0301",
    "marks out of order a\u0301\u0316",
    "singleton \u212b",
    "jamo \u1100\u1161\u11a8",
    "not-equal <\u0338",
]


@pytest.mark.parametrize("value", NASTY_VALUES)
def test_the_digest_is_the_documented_one_for_each_nasty_string(value: str) -> None:
    items = [
        nasty_question(0, value),
        nasty_question(1, value, grades={"gr\u00e9": 2, "gre\u0301": 3, "plain": 1}),
        nasty_question(2, "plain"),
    ]
    assert canonical_label_encoding(items) == documented_encoding(items)
    assert canonical_label_encoding(iter(items)) == documented_encoding(items)  # any iterable
    assert label_digest(GoldenQuestionSet(id="s", questions=tuple(items))) == documented_digest(items)


def test_ids_equal_once_normalised_keep_the_order_of_the_set() -> None:
    composed = GoldenQuestion(id="caf\u00e9", text="one", form=QuestionForm.MATCH, expected=frozenset())
    decomposed = GoldenQuestion(id="cafe\u0301", text="two", form=QuestionForm.MATCH, expected=frozenset())
    ascii_id = GoldenQuestion(id="cafz", text="three", form=QuestionForm.GAP, expected=frozenset({"d"}))
    for items in ([composed, decomposed, ascii_id], [decomposed, ascii_id, composed]):
        assert canonical_label_encoding(items) == documented_encoding(items)


def test_the_digest_of_a_large_generated_set_is_the_documented_one(tmp_path: Path) -> None:
    loaded = load_golden_set(write_generated_set(tmp_path / "generated.jsonl", 5_000))
    assert label_digest(loaded) == documented_digest(loaded.questions)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
@pytest.mark.parametrize(
    ("value", "problem"),
    [("9" * 5000, "Exceeds the limit (4300 digits)"), ("[" * 100_000 + "]" * 100_000, "nested too deeply")],
    ids=["a-5000-digit-grade", "nesting-100000-deep"],
)
def test_json_that_json_loads_cannot_convert_is_one_clear_error(
    tmp_path: Path, suffix: str, value: str, problem: str
) -> None:
    """Not a traceback: the file, the line and what could not be read."""
    question = f'{{"id": "q1", "text": "t", "form": "MATCH", "expected": ["d"], "grades": {{"d": {value}}}}}'
    text = question if suffix == ".jsonl" else f'{{"id": "s", "questions": [{question}]}}'
    path = tmp_path / f"set{suffix}"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)
    message = str(caught.value)
    assert str(path) in message and problem in message and "\n" not in message
    if suffix == ".jsonl":
        assert "line 1: cannot read the JSON" in message
