"""Fact-aware reference grading (issue 42): the facts of the reference decide.

Before, under SQuAD token F1 alone, swapped prices scored 1.000, a yes-to-no flip scored
higher than the correct answer, "7.80" and "7.20" scored the same, "It leaves at 08:00."
scored 0.400 against "08:00", and an echo of the whole prompt outscored a correct sentence.
These tests go through the CLI with a scripted model, then pin each rule of
:mod:`goldeneval.prompts.facts` on its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.prompts.facts.extraction import extract_facts
from goldeneval.prompts.facts.grading import MAX_ANSWER_WORDS, grade_reference
from goldeneval.prompts.facts.support import unsupported_facts
from goldeneval.prompts.graders import DeterministicGrader, GradingItem
from goldeneval.sample import __file__ as sample_init
from tests.chat_server import Reply, answer, chat_server, last_user_message

CORPUS = Path(sample_init).parent / "transit" / "corpus"
SINGLE_TICKET = (CORPUS / "fares" / "single-ticket.md").read_text(encoding="utf-8")
FERRY = (CORPUS / "timetables" / "ferry-f1-weekends.md").read_text(encoding="utf-8")

# (prompt id, question, reference, scripted answer, passes?)
CASES: list[tuple[str, str, str, str, bool]] = [
    ("ferry-sentence", "When does the first F1 ferry leave on Saturdays?", "08:00", "It leaves at 08:00.", True),
    ("ferry-am", "When does the first F1 ferry leave on Sundays?", "08:00", "At 8 am, from Harbour Front.", True),
    (
        "fare-sentence",
        "What does a single ride in zone A cost?",
        "€2.40",
        "It costs 2.40 euros for a single ride.",
        True,
    ),
    ("fare-comma", "What does a single in zone A cost, in euros?", "€2.40", "2,40 EUR", True),
    ("wrong-number", "What does a day ticket for zones A and B cost?", "7.80", "A day ticket costs 7.20.", False),
    ("wrong-time", "When does the last N2 night bus leave?", "04:45", "The last N2 leaves at 4:15 am.", False),
    (
        "swapped-entity",
        "Where can I park and ride on the east side?",
        "Eastgate P+R: 12 charging points, 0.39 per kWh plus parking",
        "Westfield P+R: 12 charging points, 0.39 per kWh plus parking",
        False,
    ),
    (
        "flipped-polarity",
        "Can I still ride at 03:30 on a day ticket bought this afternoon?",
        "Yes: valid until 04:00 the next morning (the archived 2025 page says 03:00)",
        "No: valid until 04:00 the next morning.",
        False,
    ),
    (
        "right-polarity",
        "Is a day ticket bought this afternoon still valid at half past three tonight?",
        "Yes: valid until 04:00 the next morning (the archived 2025 page says 03:00)",
        "Yes, the day ticket stays valid until 4 a.m. the next morning.",
        True,
    ),
    (
        "echo-fare",
        f"Context:\n{SINGLE_TICKET}\n\nQuestion: What does a single ride in zone A cost?",
        "€2.40",
        "ECHO",
        False,
    ),
    (
        "echo-ferry",
        f"Context:\n{FERRY}\n\nQuestion: When does the first F1 ferry leave on Saturdays?",
        "08:00",
        "ECHO",
        False,
    ),
]


def _prompt_run(tmp_path: Path) -> dict[str, dict[str, Any]]:
    prompts = [{"id": pid, "prompt": question, "reference": reference} for pid, question, reference, _, _ in CASES]
    path = tmp_path / "facts.yaml"
    path.write_text(yaml.safe_dump({"id": "facts-check", "prompts": prompts}), encoding="utf-8")
    scripted = {question: text for _, question, _, text, _ in CASES}

    def reply(body: dict[str, Any]) -> Reply:
        question = last_user_message(body)
        text = scripted[question]
        if text == "ECHO":  # the whole prompt, system message and context included
            text = "\n\n".join(str(m["content"]) for m in body["messages"])
        return answer(text)

    with chat_server(default=reply) as server:
        args = ["prompts", "--set", str(path), "--model", "goldeneval.openai"]
        args += ["--model-option", f"base_url={server.base_url}", "--model-option", "model=scripted"]
        args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return {p["id"]: p for p in json.loads(result.stdout)["prompts"]}


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_through_the_cli_facts_decide_and_sentences_pass_and_echoes_fail(tmp_path: Path) -> None:
    graded = _prompt_run(tmp_path)
    verdicts = {pid: graded[pid]["passed"] for pid in graded}
    assert verdicts == {pid: passes for pid, _, _, _, passes in CASES}
    # the echo holds the right value, but it is no answer and scores below the correct sentence
    assert graded["echo-fare"]["score"] == 0.0 < graded["fare-sentence"]["score"] == 1.0
    assert graded["wrong-number"]["score"] == 0.0
    assert graded["flipped-polarity"]["score"] == 0.5  # the time is right, the polarity is not


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        ("08:00", "08:00"),
        ("08:00", "It leaves at 8:00 a.m. from Harbour Front."),
        ("08:00", "eight o'clock"),
        ("09:00", "Only from nine in the morning."),
        ("20:00", "At 8 pm."),
        ("00:00", "At midnight."),
        ("€2.40", "2.4"),
        ("€2.40", "EUR 2.40"),
        ("2.40 EUR", "€2.40"),
        ("35% off", "You get 35 percent off."),
        ("No, the maximum width is 80 cm", "No - anything wider than 0.8 m does not fit."),
        ("At least 24 hours", "At least one day ahead."),
        ("Every 30 minutes from 00:30 to 04:30", "Every half an hour, from 00:30 until 04:30."),
        ("1 January 2026", "Since 2026-01-01."),
        ("30 June 2026, at the Customer Centre", "Until June 30th at the Customer Centre."),
        (
            "Harbourside Transport Ombudsman, within 8 weeks",
            "Within eight weeks, to the Harbourside Transport Ombudsman.",
        ),
        ("Dr Helena Marsh", "The Managing Director is Helena Marsh."),
        ("Yes, Fishermen's Bay is in zone C", "Yes. Fishermen's Bay lies in zone C, the outer ring."),
        ("No, assistance dogs travel free", "Assistance dogs do not need a ticket."),
        ("Mon-Fri 09:00-17:00", "Monday to Friday, 9 am to 5 pm."),
        ("Eastgate P+R (M3) or Westfield P+R (M2)", "Eastgate Park and Ride or Westfield Park & Ride."),
        ("The service updates index", "All disruptions are listed on the service updates index page. Check it daily."),
    ],
)
def test_a_correct_answer_in_other_words_or_a_sentence_passes(reference: str, answer: str) -> None:
    graded = grade_reference(answer, reference, 0.5)
    assert graded.passed, graded.reason


@pytest.mark.parametrize(
    ("reference", "answer", "why"),
    [
        ("08:00", "It leaves at 09:00.", "time '08:00'"),
        ("08:00", "At 8 pm.", "time '08:00'"),
        ("€2.40", "$2.40", "number '€2.40'"),
        ("€2.40", "It costs 2.60 euros.", "number '€2.40'"),
        ("7.80 under the 2026 tariff (the archived 2025 page says 7.20)", "7.20", "number '7.80'"),
        ("Harbourside Transport Ombudsman, within 8 weeks", "Within 8 days, to the Ombudsman.", "number '8 weeks'"),
        ("1 January 2026", "Since 1 February 2026.", "date '1 January 2026'"),
        ("1 January 2026", "Since 1 January 2025.", "date '1 January 2026'"),
        ("Dr Helena Marsh", "Dr Helen March.", "entity 'Dr Helena Marsh'"),
        ("Yes, Fishermen's Bay is in zone C", "Yes, Fishermen's Bay is in zone B.", "entity 'C'"),
        ("No, the maximum width is 80 cm", "Yes, up to 80 cm.", "polarity 'no'"),
        ("No, assistance dogs travel free", "Assistance dogs travel free.", "polarity 'no'"),
        ("Pier 1 Ferry Office for 7 days, then the central Lost Property Office", "The Pier 1 Ferry Office.", "7 days"),
    ],
)
def test_a_wrong_or_missing_fact_fails_whatever_the_overlap(reference: str, answer: str, why: str) -> None:
    graded = grade_reference(answer, reference, 0.5)
    assert not graded.passed
    assert why in graded.reason


def test_notes_in_parentheses_and_bare_years_are_not_required() -> None:
    facts = extract_facts("7.80 under the 2026 tariff (the archived 2025 page says 7.20)")
    assert [(f.kind, f.text) for f in facts] == [("number", "7.80"), ("year", "2026")]
    assert grade_reference("7.80", "7.80 under the 2026 tariff (the archived 2025 page says 7.20)", 0.5).passed


def test_without_facts_the_best_sentence_is_measured_so_a_paste_never_pays() -> None:
    reference = "The service updates index"
    sentence = "See the service updates index."
    padded = "Thanks for asking about the network today. " * 3 + sentence
    alone, among = grade_reference(sentence, reference, 0.5), grade_reference(padded, reference, 0.5)
    assert alone.passed and among.passed and among.score <= alone.score  # round 10: padding never raises it
    long = sentence + " Lorem ipsum dolor." * MAX_ANSWER_WORDS
    assert (grade_reference(long, reference, 0.5).passed, grade_reference(long, reference, 0.5).score) == (False, 0.0)


def test_the_grader_reports_the_missing_fact_and_keeps_assertions_first() -> None:
    item = GradingItem("q", "What does a day ticket cost?", (), "7.80 for zones A and B")
    graded = DeterministicGrader().grade(item, "7.20 for zones A and B")
    assert (graded.passed, graded.outcome) == (False, "fail")
    assert graded.reason == "1 of 2 reference facts missing or wrong: number '7.80'"


def test_faithfulness_without_a_judge_lists_the_unsupported_number() -> None:
    supported, unsupported = unsupported_facts(
        "A single in zone A costs 2.40 and is valid for 75 minutes; a Short Hop costs 1.70.", [SINGLE_TICKET]
    )
    assert [f.text for f in supported if f.kind == "number"] == ["2.40", "1.70"]
    assert [f.text for f in unsupported] == ["75 minutes"]


def _answers_run(tmp_path: Path, *extra: str) -> dict[str, dict[str, Any]]:
    def reply(body: dict[str, Any]) -> Reply:
        if "How many parking spaces does Park and Ride Westfield have?" in last_user_message(body):
            return answer("Westfield Park and Ride has 420 spaces; 36 of them have chargers.")
        return answer("The documents do not say.")

    with chat_server(default=reply) as server:
        args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--model"]
        args += ["goldeneval.openai", "--model-option", f"base_url={server.base_url}", "--model-option", "model=m"]
        args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        result = CliRunner().invoke(main, [*args, "--format", "json", *extra])
    assert result.exit_code == 0, result.output
    return {p["id"]: p for p in json.loads(result.stdout)["answers"]["prompts"]}


@pytest.mark.slow  # two answers runs over the transit sample
def test_an_answers_run_lists_the_unsupported_number_per_question(tmp_path: Path) -> None:
    prompts = _answers_run(tmp_path / "full")
    westfield = prompts["q-009"]
    assert westfield["retrieval_hit"] is True
    assert westfield["passed"] is True  # the gist's fact is there; the extra value does not fail it
    assert westfield["unsupported_facts"] == ["36"]
    # 420 and "Westfield Park and Ride" are in the retrieved page, 36 is not
    assert westfield["supported_share"] == pytest.approx(2 / 3)
    assert prompts["q-077"]["supported_share"] is None  # an abstention states no fact
    private = _answers_run(tmp_path / "private", "--privacy", "metadata_only")["q-009"]
    assert "unsupported_facts" not in private and private["supported_share"] == pytest.approx(2 / 3)


@pytest.mark.slow  # 100,000-character answers: over 2 s on a loaded 2-core machine
def test_hostile_answers_are_read_without_error_and_in_bounded_time() -> None:
    """Answers built to be slow are read without error, in bounded work: the bound is on this
    thread's processor time (which a loaded machine does not stretch, unlike the wall clock),
    60 s against the minutes a quadratic e-mail pattern or a 100,000-digit int took."""
    import time

    started = time.thread_time()
    for text in ("1" * 100_000, "x@" * 50_000, "a" * 100_000, "1,5" * 30_000):
        extract_facts(text, notes=True)
        unsupported_facts(text, [text[:4000]])
        assert grade_reference(text, "08:00", 0.5).passed is False
    assert time.thread_time() - started < 60  # processor time, not wall-clock time


def test_a_part_of_the_day_after_a_clock_time_is_read() -> None:
    from goldeneval.prompts.facts.grading import grade_reference

    assert not grade_reference("It leaves at 8 o'clock in the evening.", "08:00", 0.5).passed
    assert not grade_reference("It is open until 4:00 in the afternoon.", "04:00", 0.5).passed
    assert grade_reference("It leaves at 6:10 in the evening.", "18:10", 0.5).passed
    assert grade_reference("It leaves at 8 o'clock in the morning.", "08:00", 0.5).passed
    assert grade_reference("The last one is at 20:00 in the evening.", "8 pm", 0.5).passed


def test_an_answer_that_restates_a_several_sentence_reference_without_facts_passes() -> None:
    from goldeneval.prompts.facts.grading import grade_reference

    reference = "Adults pay by zone. Children ride free with an adult. Dogs need a child ticket."
    assert grade_reference(reference, reference, 0.5).score == 1.0
    assert (
        grade_reference("Children ride free; adults pay by zone.", "Children ride free; adults pay by zone.", 0.5).score
        == 1.0
    )
    # one sentence against a one-sentence reference: a paste of the context still does not pay
    pasted = "The ferry runs hourly. " * 5 + "Children ride free with an adult."
    assert grade_reference(pasted, "Children ride free with an adult.", 0.5).score == 1.0
    assert grade_reference(pasted, "Bicycles need a bike ticket.", 0.5).score < 0.5


def test_an_answer_that_hedges_between_values_fails() -> None:
    from goldeneval.prompts.facts.grading import grade_reference

    assert not grade_reference("It costs 7.80 or 7.20.", "7.80", 0.5).passed
    assert not grade_reference("It is either 6.50, 7.20, 7.80 or 9.80 depending on zones.", "7.80", 0.5).passed
    assert not grade_reference("It leaves at 08:00 or 08:30.", "08:00", 0.5).passed
    # committing to the value, with other values said apart, still passes
    assert grade_reference("It costs 7.80 for zones A and B; the 2025 page said 7.20.", "7.80", 0.5).passed
    assert grade_reference("It costs 2.40 euros, or 24.00 for a ten-trip card.", "€2.40", 0.5).passed
