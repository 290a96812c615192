"""Judged negatives in the set format (issue 23): ``not_relevant``, validated like ``expected``,
in the JSON Schema, the label digest and the TREC qrels export, and written by ``to-set``."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from pathlib import Path

import jsonschema  # type: ignore[import-untyped]
import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.core.errors import GoldenSetError
from goldeneval.core.provenance import canonical_json
from goldeneval.judgments.judgments import JudgmentLine, append_lines
from goldeneval.retrieval.golden import GoldenQuestion, golden_set_json_schema, load_golden_set
from goldeneval.retrieval.labels import LABEL_DIGEST_VERSION, _question_record, canonical_label_encoding, label_digest
from goldeneval.retrieval.trec import qrels_lines
from goldeneval.sample import SAMPLE_DIR

SAMPLE_SET = SAMPLE_DIR / "golden.yaml"

# Computed on main before the field existed (commit da46a86): a set without it keeps them.
SAMPLE_DIGEST = "labels-v1:sha256:60abf1b06359bd8097c7bc7fce8f0e50046d1088e79a01a9bd370319a3a0f89a"
GRADED_DIGEST = "labels-v1:sha256:fc0efbe83d7df47e58e741e3114b023e58288876c6d2c4c581d390aa55609b56"
GRADED_YAML = """\
id: graded-mini
questions:
  - id: q1
    text: Café prices?
    form: MATCH
    expected: [b, a]
    grades: {a: 2}
    hard_class: near-duplicate
  - id: q2
    text: Nothing answers this
    form: GAP
    expected: []
"""


def _write(tmp_path: Path, document: Mapping[str, object], name: str = "set.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return path


def _one_question(**fields: object) -> dict[str, object]:
    question = {"id": "q1", "text": "Where do I buy a ticket?", "form": "MATCH", "expected": ["a"], **fields}
    return {"id": "neg", "questions": [question]}


def test_a_set_without_the_field_keeps_the_digest_it_had_before(tmp_path: Path) -> None:
    assert label_digest(load_golden_set(SAMPLE_SET)) == SAMPLE_DIGEST
    path = tmp_path / "graded.yaml"
    path.write_text(GRADED_YAML, encoding="utf-8")
    assert label_digest(load_golden_set(path)) == GRADED_DIGEST


def test_judged_negatives_change_the_digest_and_their_order_does_not(tmp_path: Path) -> None:
    plain = label_digest(load_golden_set(_write(tmp_path, _one_question(), "plain.yaml")))
    one = label_digest(load_golden_set(_write(tmp_path, _one_question(not_relevant=["x", "y"]), "one.yaml")))
    other_order = label_digest(load_golden_set(_write(tmp_path, _one_question(not_relevant=["y", "x"]), "two.yaml")))
    fewer = label_digest(load_golden_set(_write(tmp_path, _one_question(not_relevant=["x"]), "three.yaml")))
    empty = label_digest(load_golden_set(_write(tmp_path, _one_question(not_relevant=[]), "four.yaml")))
    assert one == other_order
    assert len({plain, one, fewer}) == 3
    assert empty == plain  # an empty list records nothing
    # a grade and a judged negative are not confused: the record's length says what it holds
    graded = label_digest(load_golden_set(_write(tmp_path, _one_question(grades={"a": 2}), "five.yaml")))
    both = label_digest(
        load_golden_set(_write(tmp_path, _one_question(grades={"a": 2}, not_relevant=["x"]), "six.yaml"))
    )
    assert len({graded, both, fewer}) == 3


def test_the_digest_of_judged_negatives_is_unicode_normalised(tmp_path: Path) -> None:
    composed = unicodedata.normalize("NFC", "café")
    decomposed = unicodedata.normalize("NFD", "café")
    assert composed != decomposed
    first = load_golden_set(_write(tmp_path, _one_question(not_relevant=[composed]), "nfc.yaml"))
    second = load_golden_set(_write(tmp_path, _one_question(not_relevant=[decomposed]), "nfd.yaml"))
    assert label_digest(first) == label_digest(second)


def test_jsonl_fast_path_reads_judged_negatives_as_the_checked_path(tmp_path: Path) -> None:
    question = {"id": "q1", "text": "t", "form": "GAP", "expected": ["a"], "not_relevant": ["b", "c"]}
    fast = tmp_path / "fast.jsonl"
    fast.write_text(json.dumps(question) + "\n", encoding="utf-8")
    checked = _write(tmp_path, {"id": "fast", "questions": [question]})
    assert load_golden_set(fast) == load_golden_set(checked)
    assert load_golden_set(fast).questions[0].not_relevant == frozenset({"b", "c"})
    assert load_golden_set(fast).questions[0].judged == frozenset({"a", "b", "c"})


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"not_relevant": ["a", "b"]}, "names documents that are also expected: a"),
        ({"not_relevant": ["b", "b"]}, "document ids listed twice: b"),
        ({"not_relevant": [" "]}, "document ids must not be empty"),
        ({"not_relevant": "b"}, "must be a list of document ids"),
    ],
)
def test_bad_judged_negatives_fail_in_one_line_naming_file_question_and_field(
    tmp_path: Path, fields: dict[str, object], problem: str
) -> None:
    path = _write(tmp_path, _one_question(**fields))
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)
    message = str(caught.value)
    assert "\n" not in message
    assert str(path) in message and "'q1'" in message and "not_relevant" in message
    assert problem in message


def test_bad_judged_negatives_exit_3_through_the_cli(tmp_path: Path) -> None:
    path = _write(tmp_path, _one_question(not_relevant=["a"]))
    result = CliRunner().invoke(main, ["export-qrels", "--set", str(path), "--out", str(tmp_path / "q.txt")])
    assert result.exit_code == 3
    assert "not_relevant" in result.output and "also expected" in result.output
    assert "Traceback" not in result.output


def test_the_json_schema_describes_the_field() -> None:
    schema = golden_set_json_schema()
    question = schema["$defs"]["GoldenQuestion"]["properties"]["not_relevant"]
    assert question["type"] == "array" and question["uniqueItems"] is True
    jsonschema.validate(_one_question(not_relevant=["b"]), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_one_question(not_relevant=[1]), schema)


def test_trec_qrels_export_writes_judged_negatives_with_grade_0(tmp_path: Path) -> None:
    document = {
        "id": "neg",
        "questions": [
            {
                "id": "q1",
                "text": "t",
                "form": "MATCH",
                "expected": ["b"],
                "grades": {"b": 2},
                "not_relevant": ["c", "a"],
            },
            {"id": "q2", "text": "u", "form": "GAP", "expected": [], "not_relevant": ["z"]},
            {"id": "q3", "text": "v", "form": "GAP", "expected": []},
        ],
    }
    path = _write(tmp_path, document)
    assert qrels_lines(load_golden_set(path)) == ["q1 0 a 0", "q1 0 b 2", "q1 0 c 0", "q2 0 z 0"]
    out = tmp_path / "qrels.txt"
    result = CliRunner().invoke(main, ["export-qrels", "--set", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_text(encoding="utf-8").splitlines() == ["q1 0 a 0", "q1 0 b 2", "q1 0 c 0", "q2 0 z 0"]


def test_to_set_keeps_the_documents_judged_not_relevant(tmp_path: Path) -> None:
    path, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    pooled = [("q-001", "fares/day-ticket"), ("q-001", "fares/refunds"), ("q-001", "fares/annual-pass")]
    pooled += [("q-002", "fares/refunds")]
    append_lines(path, [JudgmentLine(question=q, document=d) for q, d in pooled])
    grades = {"fares/day-ticket": 2, "fares/refunds": 0, "fares/annual-pass": 0}
    append_lines(path, [JudgmentLine(question="q-001", document=d, grade=g, assessor="ann") for d, g in grades.items()])
    append_lines(path, [JudgmentLine(question="q-002", document="fares/refunds", grade=0, assessor="ann")])
    result = CliRunner().invoke(
        main,
        [
            "judgments",
            "to-set",
            str(path),
            "--out",
            str(out),
            "--set",
            str(SAMPLE_SET),
            "--no-answer-when-all-negative",
        ],
    )
    assert result.exit_code == 0, result.output
    rebuilt = {q.id: q for q in load_golden_set(out).questions}
    assert rebuilt["q-001"].expected == {"fares/day-ticket"}
    assert rebuilt["q-001"].not_relevant == {"fares/refunds", "fares/annual-pass"}
    assert rebuilt["q-002"].expected == frozenset() and rebuilt["q-002"].not_relevant == {"fares/refunds"}
    written = yaml.safe_load(out.read_text(encoding="utf-8"))["questions"][0]
    assert written["not_relevant"] == ["fares/annual-pass", "fares/refunds"]


def test_the_fast_encoding_equals_the_string_by_string_one_with_judged_negatives() -> None:
    questions = [
        GoldenQuestion(id="q1", text="café", form="MATCH", expected={"b", "a"}, not_relevant={"é", "z"}),
        GoldenQuestion(id="q0", text="x", form="GAP", expected=frozenset()),
        GoldenQuestion(id="q2", text="y", form="GAP", expected={"a"}, grades={"a": 3}, not_relevant={"n"}),
    ]
    records = sorted((_question_record(q) for q in questions), key=lambda record: record[0])
    slow = canonical_json({"version": LABEL_DIGEST_VERSION, "questions": records})
    assert canonical_label_encoding(questions) == slow
    assert json.loads(slow)["questions"][1] == ["q1", "café", "MATCH", None, ["a", "b"], {}, ["z", "é"]]
