"""Reference grading rewards correct answers and never a paste (issues 24 and 42): SQuAD's token
F1 on normalised tokens is still the measure where the reference has no facts (see
tests/test_answers_grading_facts.py for the facts).  Before issue 24, a model that repeated its
whole prompt passed 19 of the transit sample's 81 questions: the prompt holds the context, and
the context the gist."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.prompts.assertions import normalise_answer, reference_contained, token_f1
from goldeneval.prompts.evaluation import prompt_benchmark_fingerprint
from goldeneval.prompts.graders import DeterministicGrader, GradingItem
from goldeneval.sample import __file__ as sample_init
from tests.chat_server import Reply, answer, chat_server

TRANSIT = Path(sample_init).parent / "transit" / "golden.yaml"


def _unanswerable() -> set[str]:
    questions = yaml.safe_load(TRANSIT.read_text())["questions"]
    return {q["id"] for q in questions if not q["expected"]}


def _answers(tmp_path: Path, *extra: str) -> Result:
    args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--format", "json"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra]
    return CliRunner().invoke(main, args)


def _served(tmp_path: Path, base_url: str, name: str) -> dict[str, Any]:
    result = _answers(
        tmp_path, "--model", "goldeneval.openai", "--model-option", f"base_url={base_url}",
        "--model-option", f"model={name}", "--name", name,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    return dict(json.loads(result.stdout)["answers"])


def _echo(body: dict[str, Any]) -> Reply:
    """A model that repeats its whole prompt, system message and context included."""
    return answer("\n\n".join(str(m["content"]) for m in body["messages"]))


@pytest.mark.parametrize(
    ("text", "normalised"),
    [
        ("The Fare is 7.80!", "fare is 780"),
        ("  an apple,   a pear and THE plum ", "apple pear and plum"),
        ("Theatre (a) - there", "theatre there"),
        ("¿Qué?", "¿qué"),  # SQuAD strips ASCII punctuation only
    ],
)
def test_answers_are_normalised_as_the_squad_script_does(text: str, normalised: str) -> None:
    assert normalise_answer(text) == normalised


def test_token_f1_counts_tokens_as_a_multiset_and_precision_matters() -> None:
    assert token_f1("zone zone zone A", "zone B") == pytest.approx(2 * (1 / 3) * (1 / 2) / (1 / 3 + 1 / 2))
    assert token_f1("7.80", "7.80") == 1.0
    assert token_f1("", "") == 1.0 and token_f1("...", "7.80") == 0.0
    long = "7.80 " + " ".join(f"word{i}" for i in range(98))
    assert token_f1(long, "7.80") == pytest.approx(2 / 100)


def test_a_fact_buried_in_extra_words_passes_but_a_paste_of_the_context_does_not() -> None:
    # issue 42 changed this deliberately: under token F1 (deterministic/v2) the buried answer
    # failed with a score under 0.1; the facts of the reference now decide, and extra words do
    # not hurt — but an answer over 100 words, or one listing many other values, is a paste.
    item = GradingItem("p", "What does a day ticket cost?", (), "7.80")
    buried = DeterministicGrader().grade(item, "Fares: " + "lots of text " * 20 + "and a day ticket is 7.80.")
    assert (buried.passed, buried.score) == (True, 1.0)
    pasted = DeterministicGrader().grade(item, "Fares: " + "lots of text " * 40 + "and a day ticket is 7.80.")
    assert (pasted.passed, pasted.score) == (False, 0.0)
    assert pasted.reason is not None and pasted.reason.startswith("not an answer: 127 words (over 100)")
    listed = DeterministicGrader().grade(item, "Single 2.40, 3.60, 4.80; day 6.00, 7.80, 9.60; week 25.00.")
    assert (listed.passed, listed.score) == (False, 0.0)
    assert listed.reason is not None and "it states 6 values the reference does not" in listed.reason
    concise = DeterministicGrader().grade(item, "7.80")
    assert (concise.passed, concise.score, concise.outcome) == (True, 1.0, "pass")
    assert reference_contained("it is 7.80 today", "7.80") and not reference_contained("it is 17.80", "7.80")


def test_the_deterministic_grader_identity_changed_so_old_runs_compare_as_a_mismatch() -> None:
    identity = DeterministicGrader().identity
    assert identity.startswith(
        "deterministic/v11(assertions;reference=facts/v11(max_words=100)|best-sentences-recall>=0.667"
        "|beyond-question-recall>=0.5|token-f1>=0.5;abstention/v12("
    )
    digest = "prompts-v1:sha256:" + "0" * 64
    for old in (
        "deterministic/v1(assertions;reference=contains-or-token-f1>=0.5)",
        "deterministic/v2(assertions;reference=squad-token-f1>=0.5;abstention/v2(default;max_words=50))",
        "deterministic/v5(assertions;reference=facts/v5(max_words=100)|best-sentences-token-f1>=0.5;"
        "abstention/v6(default;max_words=50))",
        "deterministic/v6(assertions;reference=facts/v6(max_words=100)|best-sentences-token-f1>=0.5;"
        "abstention/v7(default;max_words=50))",
        "deterministic/v7(assertions;reference=facts/v7(max_words=100)|best-sentences-token-f1>=0.5;"
        "abstention/v8(default;max_words=50))",
        "deterministic/v9(assertions;reference=facts/v9(max_words=100)|best-sentences-token-f1>=0.5;"
        "abstention/v10(default;max_words=50))",
    ):
        assert prompt_benchmark_fingerprint(digest, f"prompt-grading/v1[{identity}]") != (
            prompt_benchmark_fingerprint(digest, f"prompt-grading/v1[{old}]")
        )


@pytest.mark.slow
def test_a_model_echoing_its_prompt_passes_at_most_5_percent_of_the_answerable_questions(tmp_path: Path) -> None:
    with chat_server(default=_echo) as server:
        answers = _served(tmp_path, server.base_url, "echo")
    assert len(server.requests) == 81
    unanswerable = _unanswerable()
    answerable = [p for p in answers["prompts"] if p["id"] not in unanswerable]
    assert len(answerable) == 76
    assert all(p["answer"].startswith("Answer the question from the context documents only") for p in answerable)
    passed = [p["id"] for p in answerable if p["passed"]]
    assert len(passed) <= 0.05 * len(answerable), passed
    # the echo is long, so its "does not answer" (from the system prompt) is no abstention either
    assert not any(p["passed"] for p in answers["prompts"] if p["id"] in unanswerable)
    assert answers["aggregates"]["overall"]["over_abstentions"] == 0


@pytest.mark.slow
def test_the_extractive_model_still_grades_better_on_retrieval_hits_and_beats_the_echo(tmp_path: Path) -> None:
    result = _answers(tmp_path, "--model", "goldeneval.extractive")
    assert result.exit_code == 0, result.output
    aggregates = json.loads(result.stdout)["answers"]["aggregates"]
    hit, miss = aggregates["by_retrieval"]["hit"], aggregates["by_retrieval"]["miss"]
    assert hit["mean_score"] > miss["mean_score"]
    assert hit["pass_rate"] >= miss["pass_rate"]
    with chat_server(default=_echo) as server:
        echo = _served(tmp_path / "echo", server.base_url, "echo")
    assert aggregates["overall"]["mean_score"] > echo["aggregates"]["overall"]["mean_score"]
