"""Abstention read broadly (issue 42): before, the default phrases recognised 8 of 24 common
phrasings ("The documents do not say", "I could not find that", ... were ordinary answers), so
a missed one on an answerable question was counted as a wrong answer, not an over-abstention.

Every collected phrasing (:data:`~goldeneval.prompts.abstention.ABSTENTION_EXAMPLES`) and
variants not in that list are read as abstentions, through the CLI on a no-answer prompt and
an answerable one; answers that merely contain a negation are not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.prompts.abstention import ABSTENTION_EXAMPLES, DEFAULT_ABSTENTION_PHRASES, AbstentionRules
from goldeneval.prompts.graders import DeterministicGrader, GradingItem
from tests.chat_server import answer, chat_server, last_user_message

UNLISTED_VARIANTS = (
    "Sorry, the retrieved passages do not mention Wi-Fi passwords.",
    "I was not able to locate this information in the sources provided.",
    "The knowledge base does not specify a kayak policy.",
    "Unfortunately I couldn't find anything on water taxis.",
    "Rental e-bikes are not mentioned anywhere in the context.",
    "There's no information on taxi licences here.",
    "I'm unable to determine that from the given text.",
    "We could not find this in the documents you gave us.",
    "The given excerpts don't say anything about cable cars.",
    "That information is not provided in the supplied documents.",
    "Not stated in the documents.",
    "I do not have any information about a water taxi.",
    "The passages provided do not address the Wi-Fi password.",
    "It is not possible to answer this from the context.",
    "THE CONTEXT DOES NOT SAY.",
    "I can\u2019t tell from these documents.",
)
NOT_ABSTENTIONS = (
    "No, e-scooters are not allowed on trams, folded or not.",
    "No, it counts as travelling without a valid ticket.",
    "Bus services are not covered because they depend on road traffic.",
    "The F2 ferry is not running from 1 November; take bus 61 instead.",
    "Yes, capped at the Day Ticket price for the zones travelled.",
    "The documents do not mention the 2025 price, but a day ticket costs 7.80 under the 2026 tariff.",
)


def test_the_collected_list_has_at_least_24_distinct_phrasings() -> None:
    assert len(set(ABSTENTION_EXAMPLES)) == len(ABSTENTION_EXAMPLES) >= 24
    assert len(DEFAULT_ABSTENTION_PHRASES) == len(set(DEFAULT_ABSTENTION_PHRASES))


@pytest.mark.parametrize("text", ABSTENTION_EXAMPLES + UNLISTED_VARIANTS)
def test_every_collected_phrasing_and_unlisted_variants_abstain(text: str) -> None:
    assert AbstentionRules().match(text) is not None


@pytest.mark.parametrize("text", NOT_ABSTENTIONS)
def test_a_negation_or_a_hedge_before_an_answer_is_no_abstention(text: str) -> None:
    assert AbstentionRules().match(text) is None


def test_over_and_under_abstention_are_counted_apart() -> None:
    grader = DeterministicGrader()
    answerable = GradingItem("a", "What does a day ticket cost?", (), "7.80", answerable=True)
    unanswerable = GradingItem("u", "Is there Wi-Fi on trams?", (), "not covered by the corpus", answerable=False)
    assert grader.grade(answerable, "The documents do not say.").outcome == "over_abstention"
    assert grader.grade(unanswerable, "The documents do not say.").outcome == "abstained"
    assert grader.grade(unanswerable, "Yes, the password is tram123.").outcome == "missed_abstention"
    assert grader.grade(answerable, "It costs 7.80.").outcome == "pass"


@pytest.mark.slow  # an answers run over the transit sample: over 2 s on a loaded 2-core machine
def test_through_the_cli_every_phrasing_abstains_on_a_no_answer_question(tmp_path: Path) -> None:
    """An answers run over the transit sample: each unanswerable question is answered with one
    phrasing, each answerable one with another; all unanswerable pass as ``abstained`` and all
    answerable are ``over_abstention``, not ``fail``."""
    phrasings = list(ABSTENTION_EXAMPLES + UNLISTED_VARIANTS)
    asked: dict[str, str] = {}

    def reply(body: dict[str, Any]) -> Any:
        question = last_user_message(body)
        asked.setdefault(question, phrasings[len(asked) % len(phrasings)])
        return answer(asked[question])

    with chat_server(default=reply) as server:
        args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical"]
        args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
        args += ["--model-option", "model=abstainer", "--store", str(tmp_path / "s.duckdb")]
        args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", "--format", "json", "--workers", "1"]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    answers = json.loads(result.stdout)["answers"]
    outcomes = {p["outcome"] for p in answers["prompts"]}
    assert outcomes == {"abstained", "over_abstention"}
    overall = answers["aggregates"]["overall"]
    assert (overall["passed"], overall["over_abstentions"], overall["failed"]) == (5, 76, 0)
    assert set(asked.values()) == set(phrasings)  # 81 questions: every phrasing was used
