"""``goldeneval lint`` (issue 40): what a golden set gets wrong that loading it does not catch."""

from __future__ import annotations

import itertools
import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.core.corpus import load_corpus
from goldeneval.judgments.judgments import JudgmentLine, Source, append_lines
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm, load_golden_set
from goldeneval.retrieval.lint import LINT_RULES, NEAR_DUPLICATE_QUESTION, lint_set
from goldeneval.retrieval.overlap import OVERLAP_RULE, measured_form
from goldeneval.sample import SAMPLE_DIR

SAMPLE_SET = SAMPLE_DIR / "golden.yaml"
CORPUS = SAMPLE_DIR / "corpus"


def _planted(tmp_path: Path) -> Path:
    """The bundled set with one GAP question that repeats its target's title, and one expected
    id that is not in the corpus."""
    document: dict[str, Any] = yaml.safe_load(SAMPLE_SET.read_text(encoding="utf-8"))
    document["corpus"] = str(CORPUS)
    title = next(doc.title for doc in load_corpus(CORPUS) if doc.id == "fares/day-ticket")
    document["questions"].append({"id": "q-planted", "text": title, "form": "GAP", "expected": ["fares/day-ticket"]})
    second = document["questions"][1]
    second["expected"] = [*second["expected"], "fares/no-such-page"]
    path = tmp_path / "planted.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False), encoding="utf-8")
    return path


def _lint(*args: str) -> Result:
    return CliRunner().invoke(main, ["lint", *args])


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_lint_on_the_bundled_set_reports_the_planted_gap_question_and_the_missing_id(tmp_path: Path) -> None:
    path = _planted(tmp_path)
    result = _lint("--set", str(path))
    assert result.exit_code == 0, result.output  # findings are not an error without --strict
    lines = result.output.splitlines()
    planted = [line for line in lines if "'q-planted'" in line]
    assert len(planted) == 1
    assert planted[0].startswith("form: question #")
    assert "declared GAP but measured MATCH: overlap 1.00" in planted[0]
    [missing] = [line for line in lines if line.startswith("missing-document:")]
    assert "(id 'q-002')" in missing and "field 'expected': not in the corpus: fares/no-such-page" in missing
    # besides them only the two hand-labelled MATCH questions the rule measures as GAP (overlap 0.43)
    found = [re.match(r"([a-z-]+): question #\d+ \(id '([^']+)'\)", line) for line in lines[:-1]]
    assert [m.groups() if m else None for m in found] == [
        ("form", "q-001"),
        ("form", "q-038"),
        ("form", "q-planted"),
        ("missing-document", "q-002"),
    ]
    assert lines[-1] == "4 finding(s) in set 'transit-sample': form 3, missing-document 1"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_lint_json_and_strict(tmp_path: Path) -> None:
    path = _planted(tmp_path)
    result = _lint("--set", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    kinds = {(f["kind"], f["question"]) for f in document["findings"]}
    assert ("form", "q-planted") in kinds and ("missing-document", "q-002") in kinds
    [planted] = [f for f in document["findings"] if f["question"] == "q-planted" and f["kind"] == "form"]
    assert planted["rule"] == OVERLAP_RULE == "vocabulary-overlap/v1"
    assert planted["details"] == {"declared": "GAP", "measured": "MATCH", "overlap": 1.0}
    assert document["rules"] == dict(LINT_RULES)
    strict = _lint("--set", str(path), "--strict")
    assert strict.exit_code == 3
    clean = tmp_path / "clean.yaml"
    clean.write_text(
        yaml.safe_dump(
            {
                "id": "clean",
                "corpus": str(CORPUS),
                "questions": [
                    {"id": "q", "text": "Day Ticket prices", "form": "MATCH", "expected": ["fares/day-ticket"]}
                ],
            }
        ),
        encoding="utf-8",
    )
    assert _lint("--set", str(clean), "--strict").exit_code == 0


def _question(qid: str, text: str, form: str = "GAP", expected: tuple[str, ...] = ()) -> GoldenQuestion:
    return GoldenQuestion(id=qid, text=text, form=QuestionForm(form), expected=frozenset(expected))


def test_duplicate_and_near_duplicate_questions_are_found() -> None:
    golden_set = GoldenQuestionSet(
        id="dups",
        questions=(
            _question("a", "How do I renew my monthly pass online?"),
            _question("b", "how do i renew my  monthly pass online"),
            _question("c", "Please, how do I renew my monthly pass online?"),
            _question("d", "Where can I park my bike?"),
        ),
    )
    findings = lint_set(golden_set, None)
    assert [(f.kind, f.question, f.details.get("other")) for f in findings] == [
        ("duplicate-question", "b", "a"),
        ("near-duplicate-question", "c", "a"),
        ("near-duplicate-question", "c", "b"),
    ]


def test_near_duplicate_targets_are_a_candidate_for_the_hard_class() -> None:
    corpus = load_corpus(CORPUS)
    pair = ("service/park-and-ride-eastgate", "service/park-and-ride-westfield")
    golden_set = GoldenQuestionSet(
        id="targets",
        questions=(
            _question("untagged", "Where can I leave my car and take the tram?", expected=pair),
            GoldenQuestion(
                id="tagged",
                text="Park and ride",
                form=QuestionForm.MATCH,
                expected=frozenset(pair),
                hard_class="near-duplicate",
            ),
        ),
    )
    findings = [f for f in lint_set(golden_set, corpus) if f.kind == "near-duplicate-targets"]
    assert [(f.question, f.details["documents"]) for f in findings] == [("untagged", list(pair))]
    assert "a candidate for hard_class near-duplicate" in findings[0].message


def test_a_question_whose_targets_no_pooled_source_found_is_reported_with_judgments(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    found = Source(source="goldeneval.lexical", rank=1)
    append_lines(path, [JudgmentLine(question="q-001", document="fares/day-ticket", sources=(found,))])
    append_lines(path, [JudgmentLine(question="q-002", document="fares/monthly-pass", sources=(found,))])
    searched = Source(source="search:ann", rank=1)  # a person found q-003's target, no retriever did
    append_lines(path, [JudgmentLine(question="q-003", document="fares/day-ticket-2025-archived", sources=(searched,))])
    result = _lint("--set", str(SAMPLE_SET), "--judgments", str(path), "--format", "json")
    assert result.exit_code == 0, result.output
    unfound = {f["question"] for f in json.loads(result.output)["findings"] if f["kind"] == "unfound-target"}
    assert "q-001" not in unfound and "q-002" in unfound and "q-003" in unfound


@pytest.mark.parametrize("form", ["MATCH", "GAP"])
def test_the_bundled_sets_forms_mostly_agree_with_the_overlap_rule(form: str) -> None:
    golden_set = load_golden_set(SAMPLE_SET)
    documents = {doc.id: doc for doc in load_corpus(CORPUS)}
    declared = [q for q in golden_set.questions if q.form.value == form and q.expected]
    agree = sum(
        measured_form(q.text, [f"{documents[d].title}\n{documents[d].text}" for d in q.expected]).value == form
        for q in declared
    )
    assert agree / len(declared) >= 0.9


def test_without_a_corpus_only_the_duplicate_checks_run_and_a_notice_says_so(tmp_path: Path) -> None:
    path = tmp_path / "no-corpus.yaml"
    questions = [
        {"id": "a", "text": "Day ticket", "form": "GAP", "expected": ["fares/day-ticket"]},
        {"id": "b", "text": "day ticket.", "form": "GAP", "expected": ["nowhere"]},
    ]
    path.write_text(yaml.safe_dump({"id": "no-corpus", "questions": questions}), encoding="utf-8")
    result = CliRunner().invoke(main, ["lint", "--set", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "duplicate-question: question #2 (id 'b'): the same text as question 'a'",
        "1 finding(s) in set 'no-corpus': duplicate-question 1",
    ]
    assert "the set names no corpus: forms, missing ids and near-duplicate targets were not checked" in result.stderr


def test_near_duplicate_questions_are_exactly_the_pairs_at_or_above_the_threshold() -> None:
    generator = random.Random(40)
    vocabulary = [f"w{i}" for i in range(12)]
    texts = [" ".join(generator.sample(vocabulary, generator.randint(1, 8))) for _ in range(300)]
    questions = tuple(_question(f"q{i}", text) for i, text in enumerate(texts))
    found = {
        (f.question, f.details["other"])
        for f in lint_set(GoldenQuestionSet(id="random", questions=questions), None)
        if f.kind == "near-duplicate-question"
    }
    expected = set()
    for i, j in itertools.combinations(range(len(texts)), 2):
        a, b = set(texts[i].split()), set(texts[j].split())
        if texts[i] != texts[j] and len(a & b) / len(a | b) >= NEAR_DUPLICATE_QUESTION:
            expected.add((f"q{j}", f"q{i}"))
    assert found == expected and len(expected) > 10


def test_a_drafts_own_source_is_no_retriever_and_a_drafted_set_is_linted(tmp_path: Path) -> None:
    document: dict[str, Any] = yaml.safe_load(SAMPLE_SET.read_text(encoding="utf-8"))
    drafted = {
        "id": "draft-00001",
        "text": "Day Ticket",  # the target's title, drafted as GAP: the rule measures MATCH
        "form": "GAP",
        "expected": ["fares/day-ticket"],
        "draft": {
            "source": "fares/day-ticket",
            "claimed_form": "GAP",
            "overlap": 1.0,
            "rule": OVERLAP_RULE,
            "model": "m",
            "prompt": "p",
        },
    }
    path = tmp_path / "drafts.yaml"
    content = {"id": "drafts", "corpus": str(CORPUS), "questions": [*document["questions"][:3], drafted]}
    path.write_text(yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    judgments = tmp_path / "j.jsonl"
    own = Source(source="draft", rank=1)  # pooled because it is the draft's source, not because anything found it
    append_lines(judgments, [JudgmentLine(question="draft-00001", document="fares/day-ticket", sources=(own,))])
    result = _lint("--set", str(path), "--judgments", str(judgments), "--format", "json")
    assert result.exit_code == 0, result.output
    findings = {(f["kind"], f["question"]) for f in json.loads(result.output)["findings"]}
    assert ("unfound-target", "draft-00001") in findings
    assert ("form", "draft-00001") in findings


def test_questions_that_differ_in_their_content_words_are_no_near_duplicates() -> None:
    golden_set = GoldenQuestionSet(
        id="distinct",
        questions=(
            _question("sat", "When is the first F1 ferry departure from Harbour Front on Saturdays?"),
            _question("wkd", "When is the first F1 ferry departure from Harbour Front on weekdays?"),
            _question("bus", "How do I get a refund for a bus ticket?"),
            _question("tram", "How do I get a refund for a tram ticket?"),
        ),
    )
    assert [f for f in lint_set(golden_set, None) if f.kind == "near-duplicate-question"] == []
