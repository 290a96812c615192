"""Abstention is an outcome (issue 24): on a question no document answers (ADR-072's empty
``expected``) an abstention is the right answer; on one a document answers it is an
``over_abstention``, a failure counted apart from wrong answers in the details, the table and
``--format json``.  Before, "The context does not answer the question." scored 0 of 5 on the
transit sample's unanswerable questions."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.core.errors import InputError
from goldeneval.prompts.abstention import DEFAULT_ABSTENTION_PHRASES, AbstentionRules
from goldeneval.prompts.graders import DeterministicGrader, GradingItem, GradingService
from goldeneval.sample import __file__ as sample_init
from tests.chat_server import answer, chat_server

TRANSIT = Path(sample_init).parent / "transit" / "golden.yaml"
ABSTAIN = "The context does not answer the question."


def _unanswerable() -> set[str]:
    return {q["id"] for q in yaml.safe_load(TRANSIT.read_text())["questions"] if not q["expected"]}


def _abstaining_run(tmp_path: Path, *extra: str) -> tuple[Result, int]:
    with chat_server(default=lambda body: answer(ABSTAIN)) as server:
        args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical"]
        args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
        args += ["--model-option", "model=abstainer", "--store", str(tmp_path / "s.duckdb")]
        args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra]
        result = CliRunner().invoke(main, args)
    return result, len(server.requests)


@pytest.mark.parametrize(
    "text",
    [
        ABSTAIN,
        "The context doesn't answer that.",
        "I don't know.",
        "I can\u2019t answer that from these documents.",
        "Sorry, the provided context does not contain information about Wi-Fi passwords.",
        "not covered by the corpus",
        "This is not covered by the documents.",
    ],
)
def test_default_phrases_detect_an_abstention(text: str) -> None:
    assert AbstentionRules().match(text) is not None


@pytest.mark.parametrize(
    "text",
    [
        "Bus services are not covered because they depend on road traffic.",  # a real answer
        "A day ticket costs 7.80.",
        "",
        "Answer the question from the context. If the context does not answer it, say that it does not. "
        + "Context: "
        + "fares and zones " * 20,  # an echo of the prompt is no abstention
    ],
)
def test_answers_and_long_texts_are_not_abstentions(text: str) -> None:
    assert AbstentionRules().match(text) is None


def test_phrases_are_configurable_and_their_identity_changes_the_grader_identity() -> None:
    rules = AbstentionRules(phrases=("no idea",), max_words=5)
    assert rules.match("No idea, sorry!") == "no idea"
    assert rules.match(ABSTAIN) is None
    assert rules.match("I have no idea at all, really, truly.") is None  # 8 words > 5
    assert AbstentionRules().identity == "abstention/v12(default;max_words=50)"
    assert rules.identity.startswith("abstention/v12(phrases=sha256:") and rules.identity.endswith(";max_words=5)")
    default, custom = DeterministicGrader(), GradingService(abstention=rules).select("deterministic").grader
    assert default.identity != custom.identity
    assert "does not answer" in DEFAULT_ABSTENTION_PHRASES


def test_a_phrase_with_nothing_left_after_normalisation_is_one_line_of_invalid_input() -> None:
    with pytest.raises(InputError, match=r"^abstention phrase #2 'the \.\.\.': nothing is left after normalisation"):
        AbstentionRules(phrases=("no idea", "the ..."))


@pytest.mark.parametrize(
    ("answerable", "text", "outcome", "passed", "score"),
    [
        (False, ABSTAIN, "abstained", True, 1.0),
        (False, "Yes, the password is tram123.", "missed_abstention", False, 0.0),
        (True, ABSTAIN, "over_abstention", False, 0.0),
        (True, "7.80", "pass", True, 1.0),
        (True, "9.99 or so", "fail", False, 0.0),
        (None, ABSTAIN, "fail", False, 0.0),  # a prompt run: abstention is no outcome of its own
    ],
)
def test_the_deterministic_grader_grades_abstention_by_answerability(
    answerable: bool | None, text: str, outcome: str, passed: bool, score: float
) -> None:
    item = GradingItem("q", "What does a day ticket cost?", (), "7.80", answerable=answerable)
    grading = DeterministicGrader().grade(item, text)
    found: tuple[object, ...] = (grading.outcome, grading.passed, grading.score)
    assert found == (outcome, passed, pytest.approx(score))


@pytest.mark.slow
def test_an_always_abstaining_model_passes_the_unanswerable_questions_and_over_abstains_on_the_rest(
    tmp_path: Path,
) -> None:
    result, calls = _abstaining_run(tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    assert calls == 81
    answers = json.loads(result.stdout)["answers"]
    unanswerable = _unanswerable()
    assert len(unanswerable) == 5
    by_id = {p["id"]: p for p in answers["prompts"]}
    assert {i for i, p in by_id.items() if p["passed"]} == unanswerable
    assert {by_id[i]["outcome"] for i in unanswerable} == {"abstained"}
    assert {p["outcome"] for i, p in by_id.items() if i not in unanswerable} == {"over_abstention"}
    overall = answers["aggregates"]["overall"]
    assert (overall["passed"], overall["over_abstentions"], overall["failed"], overall["errors"]) == (5, 76, 0, 0)
    assert answers["run"]["over_abstentions"] == 76 and answers["run"]["failed"] == 0
    assert sum(r["over_abstentions"] for r in answers["aggregates"]["by_form"].values()) == 76


@pytest.mark.slow
def test_the_table_counts_over_abstentions_apart_and_metadata_only_keeps_no_answer_text(tmp_path: Path) -> None:
    result, _ = _abstaining_run(tmp_path, "--privacy", "metadata_only")
    assert result.exit_code == 0, result.output
    assert "OVER-ABSTAINED" in result.output and "pass (abstained)" in result.output
    assert "Over-abstained (said it cannot answer a question a document answers): 76" in result.output
    lines = result.output.splitlines()
    start = len(lines) - lines[::-1].index("Overall:")  # the answer run's, after the retrieval run's
    overall = lines[start : start + 3]
    assert overall[0].split() == [
        "questions", "graded", "errors", "passed", "pass", "rate", "mean", "failed", "over-abstained",
        "under-abstained", "unstable"
    ]  # fmt: skip
    assert overall[2].split() == ["all", "81", "81", "0", "5", "0.062", "0.062", "0", "76", "0", "0"]
    with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
        dumped = "\n".join(str(row) for row in con.execute("SELECT * FROM runs").fetchall())
    assert "over_abstention" in dumped and "abstained" in dumped
    assert "does not answer" not in dumped.lower()
    assert "no document answers" not in dumped
