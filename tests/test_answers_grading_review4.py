"""Issue 42, fourth round: the defect patterns an independent reviewer's 119 fresh cases found in
the fact grader (``facts/v4``) and the abstention rules (``abstention/v5``), each driven here
through the default grader (docs/guide/answers.md says the same in prose).

1. A bare year or a month of a year is a fact; magnitude words scale numbers.
2. Units: a mass family with conversion, hyphenated units, temperatures; a price is no weight.
3. A reference clause that says no decides beyond Yes/No-led references.
4. Hedges: a range around the value, "X, maybe Y", and "A or B" names fail.
5. An opening stop word is no part of a name; a value the question states need not be repeated;
   spoken times and two-part prices are read.
6. Abstention: a polite follow-up question, a scope clause, "they don't mention", "identify".
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.answer_calibration import (
    REVIEW4_SET,
    TARGET_ACCURACY,
    TARGET_CLASS_ACCURACY,
    evaluate,
    load_cases,
    render_answer_calibration,
    section_answer_calibration,
)
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.facts.extraction import extract_facts
from goldeneval.prompts.graders import DeterministicGrader, GradingItem

GRADER = DeterministicGrader()
NO_ANSWER = "not covered by the corpus"


def passes(question: str, reference: str, answer: str) -> bool:
    return GRADER.grade(GradingItem("q", question, (), reference), answer).passed is True


def outcome(question: str, answer: str) -> str:
    return str(GRADER.grade(GradingItem("q", question, (), NO_ANSWER, answerable=False), answer).outcome)


# (rule, question, reference, answer, passes?)
RULES: list[tuple[str, str, str, str, bool]] = [
    # 1. years, months of a year, magnitudes
    ("year-wrong", "When did the bridge reopen?", "The bridge reopened in 2019.", "It reopened in 2021.", False),
    ("year-kept", "When did the bridge reopen?", "The bridge reopened in 2019.", "In 2019.", True),
    ("year-left-out", "What did the 2025 tariff charge?", "Under the 2025 tariff it was 9.80.", "It was 9.80.", True),
    ("month-year-wrong", "When?", "The bridge reopens in March 2027.", "It reopens in April 2027.", False),
    ("month-year-day", "When?", "The bridge reopens in March 2027.", "On 15 March 2027.", True),
    ("million", "How many visitors?", "The museum had 2.3 million visitors.", "It had 2,300,000 visitors.", True),
    ("billion", "How many visitors?", "The museum had 2.3 million visitors.", "It had 2.3 billion visitors.", False),
    ("k", "How large is the grant?", "The grant is €5k.", "The grant is 5,000 euros.", True),
    ("words", "How many?", "It had 2,300,000 visitors.", "Two million three hundred thousand visitors.", True),
    # 2. units
    ("lb", "How heavy may bags be?", "Bags may weigh up to 23 kg.", "Bags may weigh up to 23 lb.", False),
    ("pounds", "How heavy may bags be?", "Bags may weigh up to 23 kg.", "Up to 23 pounds.", False),
    ("pounds-converted", "How heavy may bags be?", "Bags may weigh up to 23 kg.", "Up to 50.7 pounds.", True),
    ("grams", "How heavy may bags be?", "Bags may weigh up to 23 kg.", "Up to 23 g.", False),
    ("tonnes", "How heavy is it?", "The load limit is 2 tonnes.", "It is 2,000 kg.", True),
    ("ounces", "How heavy is it?", "The bar weighs 100 g.", "About 3.5 oz.", True),
    ("pounds-price", "What is the fee?", "The fee is £23.", "The fee is 23 pounds.", True),
    ("hyphen-wrong", "How long?", "The X200 has a 24-month warranty.", "The X200 has a 24-day warranty.", False),
    ("hyphen-kept", "How long?", "The X200 has a 24-month warranty.", "The X200 is covered for two years.", True),
    ("hyphen-minute", "How often?", "Buses run every 5 minutes.", "Buses come at 5-minute intervals.", True),
    ("celsius", "How warm is it?", "The pool is heated to 28 °C.", "It's kept at 28 degrees Celsius.", True),
    ("fahrenheit-wrong", "How warm is it?", "The pool is heated to 28 °C.", "It is heated to 28 °F.", False),
    ("fahrenheit", "How warm is it?", "The pool is heated to 28 °C.", "It is heated to 82.4 °F.", True),
    # 3. a clause that says no
    ("not", "What is the refund policy?", "Shipping costs are not refunded.", "Shipping costs are refunded.", False),
    (
        "not-kept",
        "What is the refund policy?",
        "Shipping costs are not refunded.",
        "We don't refund shipping costs.",
        True,
    ),
    ("closed", "When is it open?", "The office is closed on Sundays.", "It is also open on Sundays.", False),
    ("closed-kept", "When is it open?", "The office is closed on Sundays.", "It doesn't open on Sundays.", True),
    ("outside", "When?", "Bikes are allowed outside peak hours.", "Bikes are allowed during peak hours.", False),
    ("outside-kept", "When?", "Bikes are allowed outside peak hours.", "Outside rush hour bikes are allowed.", True),
    ("no-longer", "Does it run?", "The 9 bus no longer runs on Sundays.", "The 9 bus runs on Sundays.", False),
    ("non-", "Refunds?", "Shipping costs are not refunded.", "Shipping costs are non-refunded.", True),
    # 4. hedges
    ("range-and", "How tall?", "Harbor Tower is 320 metres tall.", "Between 300 and 320 metres tall.", False),
    ("range-dash", "What share?", "Research receives 35% of the budget.", "Roughly 30-35% of the budget.", False),
    (
        "range-of-a-bound",
        "Who travels free?",
        "Children under 6 travel free.",
        "Children aged 0 to 6 travel free.",
        True,
    ),
    ("range-in-reference", "How long?", "Shipping takes 3 to 5 days.", "It takes 3-5 days.", True),
    ("maybe", "What time is check-out?", "Check-out is at 11:00.", "Probably at 11:00, maybe noon.", False),
    ("name-or", "Who approves?", "The CFO must approve it.", "Either the CFO or the CEO approves it.", False),
    ("day-or", "Which day?", "The market is held every Saturday.", "It is held on Saturday or Sunday.", False),
    ("or-in-reference", "Which day?", "The market is held on Saturday or Sunday.", "Saturday or Sunday.", True),
    # 5. names, values of the question, spoken times and prices
    ("on-saturdays", "When?", "On Saturdays the library opens at 10:00.", "Saturday at 10 am.", True),
    ("from-monday", "When?", "From Monday the library opens at 10:00.", "It opens at 10:00 from Monday.", True),
    ("asked-value", "Who approves reports over $5,000?", "The CFO approves reports over $5,000.", "The CFO.", True),
    (
        "asked-value-rival",
        "Who approves reports over $5,000?",
        "The CFO approves reports over $5,000.",
        "The CFO, for reports over $8,000.",
        False,
    ),
    ("half-past", "When does it leave?", "The first train leaves at 05:30.", "At half past five.", True),
    ("quarter-to", "When does it leave?", "The last train leaves at 17:45.", "At quarter to six in the evening.", True),
    ("quarter-past", "When?", "The last train leaves at 17:45.", "At quarter past six in the evening.", False),
    ("two-part-price", "How much?", "A single ticket costs €2.40.", "It's 2 euros 40.", True),
    ("two-part-price-wrong", "How much?", "A single ticket costs €2.40.", "It's 2 euros 80.", False),
    ("cents", "How much?", "A coffee costs $3.05.", "It costs 3 dollars and 5 cents.", True),
    ("ten-past", "When?", "The bus leaves at 07:10.", "At ten past seven in the morning.", True),
    ("twenty-to", "When?", "The bus leaves at 18:40.", "At twenty to seven in the evening.", True),
    ("bn", "What is the budget?", "The budget is €1.2 billion.", "It is €1.2bn.", True),
    ("mn", "What is the budget?", "The budget is €3 million.", "It is €3 mn.", True),
    ("perhaps", "What time?", "Check-out is at 11:00.", "At 11:00, or perhaps 12:00.", False),
    ("possibly", "How much?", "It costs €5.", "It costs €5, possibly €6.", False),
    ("price-is-no-weight", "How heavy?", "Bags may weigh up to 23 kg.", "Bags cost £23.", False),
]


@pytest.mark.parametrize(("rule", "question", "reference", "answer", "expected"), RULES, ids=[r[0] for r in RULES])
def test_each_round_four_rule(rule: str, question: str, reference: str, answer: str, expected: bool) -> None:
    assert passes(question, reference, answer) is expected, rule


def test_temperature_letters_and_opening_stop_words_are_no_names() -> None:
    entities = [f.text for f in extract_facts("On Saturdays the pool is heated to 28 °C.") if f.kind == "entity"]
    assert entities == ["Saturdays"]
    assert [f.kind for f in extract_facts("It reopened in March 2027.")] == ["date"]


@pytest.mark.parametrize(
    "answer",
    [
        "I can't find that. Could you rephrase the question?",
        "I'm unable to answer. Would you like me to search something else?",
        "Hmm, I'm not able to find that in the materials provided. Could you share more details or another document?",
        "The provided documents don't identify the head of security. You could check the staff directory.",
        "The documents only cover weekday schedules; they don't mention holiday service.",
        "The retrieved passages list the 2024 fares but not the 2026 ones, so I can't tell you the current price.",
        "The sources don't list the fee. Is there anything else I can help with?",
    ],
)
def test_an_abstention_with_a_follow_up_question_or_a_scope_clause_abstains(answer: str) -> None:
    assert AbstentionRules().match(answer) is not None
    assert outcome("Who is the head of security?", answer) == "abstained"


def test_a_scope_clause_alone_answers_and_a_follow_up_does_not_hide_an_answer() -> None:
    assert AbstentionRules().match("The documents list a late fee of $5 per day.") is None
    assert outcome("What is the late fee?", "The documents list a late fee of $5 per day.") == "missed_abstention"
    assert AbstentionRules().match("The fee is $5 per day. Would you like more details?") is None


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_review4_cases_are_apart_and_graded_at_the_target_with_the_before_figure() -> None:
    cases = load_cases(REVIEW4_SET)
    assert len(cases) == 119 and len({c.id for c in cases}) == len(cases)
    results = evaluate(cases, ["deterministic"])["deterministic"]
    assert results["overall"]["accuracy"] >= TARGET_ACCURACY, results["misses"]
    worst = {s: r["accuracy"] for s, r in results["by_source"].items() if r["accuracy"] < TARGET_CLASS_ACCURACY}
    assert worst == {}, results["misses"]
    section = section_answer_calibration({"calibration_graders": ["deterministic"]}, Path("."))
    lines = render_answer_calibration(section)
    assert any(line.startswith("**Review 4**") for line in lines)
    assert any(line.startswith("| all | 119 | 0.807 |") for line in lines)  # before the changes
