"""Issue 42, fifth round: the defect patterns an independent reviewer's 80 fresh cases (and 27
probe pairs) found in the fact grader (``facts/v5``) and the abstention rules
(``abstention/v6``), each driven here through the default grader (docs/guide/answers.md says
the same in prose).

1. A plain positive reference is contradicted by an answer that says no to it.
2. A sentence-initial imperative verb ("Store", "Call") is no name.
3. Frequencies: "once a day" = "daily" = "once daily"; "4 g in 24 hours" = "4 g per day".
4. "No later than X" / "No more than N" state a limit, not a No.
5. Hedges with a unit or currency written once: "3 or 5 days", "£10 or 12".
6. A scope clause with "only" and an offer to look elsewhere abstains.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.answer_calibration import (
    REVIEW5_SET,
    TARGET_ACCURACY,
    evaluate,
    load_cases,
    render_answer_calibration,
    section_answer_calibration,
)
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.graders import DeterministicGrader, GradingItem

GRADER = DeterministicGrader()
NO_ANSWER = "not covered by the corpus"


def passes(question: str, reference: str, answer: str) -> bool:
    return GRADER.grade(GradingItem("q", question, (), reference), answer).passed is True


def outcome(question: str, answer: str) -> str | None:
    return GRADER.grade(GradingItem("q", question, (), NO_ANSWER, answerable=False), answer).outcome


@pytest.mark.parametrize(
    ("question", "reference", "flipped"),
    [
        ("Can visitors use the gym?", "Visitors can use the gym.", "Visitors cannot use the gym."),
        (
            "Are refunds issued?",
            "Refunds are issued to the original card.",
            "Refunds are not issued to the original card.",
        ),
        (
            "Is breakfast included?",
            "Breakfast is included in the room rate.",
            "Breakfast is not included in the room rate.",
        ),
        ("Does the hotel allow pets?", "Pets are welcome at the hotel.", "Pets are not welcome at the hotel."),
        ("Do I need a prescription?", "You need a prescription for this medicine.", "You don't need a prescription."),
        ("Is the car park open overnight?", "The car park is open overnight.", "The car park is closed overnight."),
        ("Are sale items refundable?", "Sale items are refundable.", "Sale items are non-refundable."),
        (
            "Are sale items refundable?",
            "Sale items are refundable within 14 days.",
            "Sale items are non-refundable, though they can be exchanged within 14 days.",
        ),
    ],
)
def test_an_answer_that_says_no_to_a_plain_positive_reference_fails(
    question: str, reference: str, flipped: str
) -> None:
    assert not passes(question, reference, flipped)
    assert passes(question, reference, reference)


def test_correct_paraphrases_of_a_positive_reference_still_pass() -> None:
    assert passes("Can visitors use the gym?", "Visitors can use the gym.", "Yes, visitors are allowed to use the gym.")
    assert passes(
        "Is breakfast included?", "Breakfast is included in the room rate.", "The room rate includes breakfast."
    )
    assert passes(
        "Is the car park open overnight?", "The car park is open overnight.", "Yes, the car park stays open overnight."
    )


def test_a_sentence_initial_imperative_verb_is_no_name() -> None:
    assert passes("How should it be stored?", "Store it in a fridge.", "Keep it in a fridge.")
    assert passes("How should it be stored?", "Keep it in a fridge.", "Store it in a fridge.")
    assert passes(
        "What is the sick leave reporting procedure?",
        "Call your line manager before 09:30 on the first day of absence.",
        "Phone your line manager by 9:30 am on the first day you're off.",
    )
    assert not passes("Who approves claims?", "Maria Lopez approves claims.", "James Chen approves claims.")


@pytest.mark.parametrize("answer", ["One tablet daily.", "Take one tablet once daily.", "One tablet every day."])
def test_once_a_day_is_daily(answer: str) -> None:
    assert passes("How often do I take it?", "Take one tablet once a day.", answer)


def test_frequencies_compare_by_count_and_a_daily_amount_over_24_hours_is_per_day() -> None:
    assert passes("How often?", "Use the inhaler twice a day.", "Take it two times daily.")
    assert passes("How often?", "Take it twice daily.", "Take it 2 times a day.")
    assert not passes("How often?", "Take one tablet once a day.", "Take one tablet twice a day.")
    assert not passes("How often?", "Take it twice a day.", "Take it three times a day.")
    reference = "Adults should take no more than 4 g of paracetamol in 24 hours."
    for answer in ("The maximum is 4 g per day.", "The maximum for an adult is 4,000 mg per day.", "4 g in a day."):
        assert passes("What is the maximum daily dose?", reference, answer), answer
    assert not passes("What is the maximum daily dose?", reference, "The maximum is 3 g per day.")
    # only an amount over 24 hours is per day: a delivery time stays a duration
    assert not passes("How fast?", "Refunds are processed within 24 hours.", "Refunds are processed within 48 hours.")
    assert passes("How fast?", "Delivery takes 24 hours.", "Delivery takes one day.")


def test_no_later_than_and_no_more_than_are_limits_not_a_no() -> None:
    assert passes("When must claims be submitted?", "No later than 31 May.", "By 31 May.")
    assert passes("How many bags?", "No more than 2 bags per passenger.", "You may bring up to 2 bags.")
    assert passes("How many bags?", "No more than two bags per passenger.", "Up to two bags per passenger.")
    assert not passes("How many bags?", "No more than 2 bags per passenger.", "You may bring up to 3 bags.")


@pytest.mark.parametrize(
    ("reference", "answer"),
    [
        ("Shipping takes 3 working days.", "Shipping takes 3 or 5 working days."),
        ("Shipping takes 3 days.", "Shipping takes 3 or 5 days."),
        ("The limit is 20 kg.", "The limit is 20 or 23 kg."),
        ("It costs £10.", "It costs £10 or 12."),
    ],
)
def test_a_hedge_with_the_unit_written_once_fails(reference: str, answer: str) -> None:
    assert not passes("What is it?", reference, answer)
    assert passes("What is it?", reference, reference)


def test_a_scope_clause_with_only_and_an_offer_to_look_elsewhere_abstains() -> None:
    answer = (
        "The policy documents only describe parental leave for permanent employees. "
        "Would you like me to look for something else?"
    )
    assert AbstentionRules().match(answer) is not None
    assert outcome("What is the parental leave policy for contractors?", answer) == "abstained"
    # without the offer, or with a value, it answers
    assert AbstentionRules().match("The policy documents only describe parental leave for permanent employees.") is None
    assert AbstentionRules().match("The documents only list a fee of $5. Would you like more details?") is None


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_review5_cases_are_apart_and_graded_at_the_target_with_the_before_figure() -> None:
    cases = load_cases(REVIEW5_SET)
    assert len(cases) == 107 and len({c.id for c in cases}) == len(cases)
    results = evaluate(cases, ["deterministic"])["deterministic"]
    assert results["overall"]["accuracy"] >= TARGET_ACCURACY, results["misses"]
    section = section_answer_calibration({"calibration_graders": ["deterministic"]}, Path("."))
    lines = render_answer_calibration(section)
    assert any(line.startswith("**Review 5**") for line in lines)
    assert any(line.startswith("| all | 107 | 0.729 |") for line in lines)  # before the changes
