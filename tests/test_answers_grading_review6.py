"""Issue 42, sixth round: the defect themes an independent reviewer's 298 fresh cases found in
the fact grader (``facts/v5``) and the abstention rules (``abstention/v6``), fixed in
``facts/v6`` and ``abstention/v7``, each driven here through the default grader with cases of
our own (docs/guide/answers.md says the same in prose).

1. Abstentions without a subject, by a source's kind, after a search report (and the same on an
   answerable question is an over-abstention).
2. Values in other spellings: dates in figures, "half past midnight", "an hour and a half",
   "three quarters of an hour", "the first of each month", a counted rate.
3. Names: number words and ordinals are no names, "HR" is one, a name equals its acronym, a
   sentence-initial verb before its object is no name, a possible name alone is no proof.
4. Polarity: "..., but yes", "should be avoided", "visa-free".
5. Swapped roles, in one sentence and across two.
6. An answer that restates the question is an echo.
"""

from __future__ import annotations

import pytest

from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.graders import GradingItem
from tests.grading_helpers import GRADER, outcome, passes


@pytest.mark.parametrize(
    "answer",
    [
        "Unable to answer from the provided sources.",
        "Unable to determine that from the context.",
        "I have no way to confirm that from these documents.",
        "Information not available.",
        "No answer found in the documents.",
        "There doesn't seem to be anything about parking in these passages.",
        "The passages only cover weekday fares; they say nothing about holidays.",
        "The handbook doesn't mention a dress code.",
        "The FAQ does not address this.",
        "The manual doesn't cover it.",
        "The guidelines I have access to don't discuss that.",
        "I searched the documents but didn't find anything about pet fees.",
        "That hasn't been covered in anything I can see.",
        "That isn't covered by the travel documents I was given.",
    ],
)
def test_round6_abstentions_are_read(answer: str) -> None:
    assert AbstentionRules().match(answer) is not None, answer
    assert outcome("What is the policy on pets?", answer) == "abstained"
    assert outcome("What is the lunch break?", answer, "The lunch break is 30 minutes.") == "over_abstention"


@pytest.mark.parametrize(
    "answer",
    [
        "The policy does not cover dental work.",  # a content noun with a named object answers
        "Dental treatment is not covered by the policy.",
        "I checked the timetable: the last bus leaves at 23:10.",
        "It has been cancelled.",
    ],
)
def test_round6_statements_about_a_document_still_answer(answer: str) -> None:
    assert AbstentionRules().match(answer) is None, answer


@pytest.mark.parametrize(
    ("reference", "right", "wrong"),
    [
        ("The form is due by 30 June 2026.", "Send it by 30/06/2026.", "Send it by 30/07/2026."),
        ("The form is due by 30 June 2026.", "Send it by 06/30/2026.", "Send it by 07/30/2026."),
        ("The last tram leaves at 00:15.", "At quarter past midnight.", "At quarter past noon."),
        ("The film runs 150 minutes.", "Two and a half hours.", "Three and a half hours."),
        ("The walk takes 90 minutes.", "About an hour and a half.", "About two hours and a half."),
        ("The transfer takes 15 minutes.", "A quarter of an hour.", "Three quarters of an hour."),
        ("Invoices are sent on the 2nd of each month.", "On the second of every month.", "On the third of the month."),
        ("60 calls per minute.", "60 calls a minute.", "60 calls per hour."),
    ],
)
def test_round6_values_in_other_spellings(reference: str, right: str, wrong: str) -> None:
    assert passes("When?", reference, right), right
    assert not passes("When?", reference, wrong), wrong


def test_round6_names() -> None:
    # number words and ordinals are no names, "HR" is one
    assert passes("How long is the notice period?", "Three months.", "You must give 3 months of notice.")
    assert passes("Who handles payroll?", "Ana Ruiz in HR handles payroll.", "Payroll is Ana Ruiz, HR.")
    assert not passes("Who handles payroll?", "Ana Ruiz in HR handles payroll.", "Ana Ruiz in Legal handles payroll.")
    # a name equals its acronym, both ways
    assert passes("Who signs off?", "The CTO signs off.", "The Chief Technology Officer signs off.")
    assert passes("Who signs off?", "The Chief Technology Officer signs off.", "The CTO does.")
    assert not passes("Who signs off?", "The CTO signs off.", "The Chief Financial Officer signs off.")
    # a sentence-initial verb before its object is no name
    assert passes("How do I clean it?", "Rinse it under warm water.", "Put it under warm running water and rinse.")
    # a possible name alone is no proof: token F1 decides beside it
    assert not passes("What is the dress code?", "Smart casual.", "Smart formal wear is required.")
    assert passes("What is the dress code?", "Smart casual.", "It's smart casual.")


def test_round6_polarity() -> None:
    assert passes(
        "Is there a fee for paper bills?",
        "Yes, paper bills cost £1 per month.",
        "I couldn't find e-bill fees, but yes, paper bills cost £1 a month.",
    )
    assert passes("Can I take it with alcohol?", "No, avoid alcohol.", "Alcohol should be avoided.")
    assert passes("Is a permit required for cyclists?", "No, cyclists do not need a permit.", "Cycling is permit-free.")
    # a condition the reference sets, waived by the answer
    reference = "Guests may use the spa only with a booking."
    assert not passes("Can guests use the spa?", reference, "Guests may use the spa without a booking.")
    assert passes("Can guests use the spa?", reference, "Yes, but you need to book first.")
    # asked whether it is "-free", a "-free" answer says yes
    assert passes("Is the bread gluten-free?", "Yes, the bread is gluten-free.", "The bread is gluten-free.")


def test_round6_swapped_roles_fail_and_reordered_paraphrases_pass() -> None:
    reference = "Seniors pay €4 and students pay €3."
    assert not passes("What do seniors and students pay?", reference, "Seniors pay €3 and students pay €4.")
    assert passes("What do seniors and students pay?", reference, "Students pay €3 and seniors pay €4.")
    assert passes("What do seniors and students pay?", reference, "€3 for students, €4 for seniors.")
    reference = "The Lite tier is slower than the Max tier."
    assert not passes("Which tier is slower?", reference, "The Max tier is slower than the Lite tier.")
    reference = "The UX lead reports to Omar Haddad."  # both sides facts: "UX" is a code
    assert not passes("Who reports to whom?", reference, "Omar Haddad reports to the UX lead.")
    assert passes("Who reports to whom?", reference, "Omar Haddad manages the UX lead.")
    reference = "Doors open at 18:00, the show starts at 19:30."
    assert not passes("When?", reference, "Doors open at 19:30, the show starts at 18:00.")
    reference = "Sales questions go to Ana Lima. The office manager is Jon Berg."
    assert not passes("Who?", reference, "Sales questions go to Jon Berg; the office manager is Ana Lima.")
    assert passes("Who?", reference, "Jon Berg manages the office and Ana Lima takes sales questions.")
    # a side need not be a fact: the same words, exchanged around one of them
    reference = "The night manager reports to the head of guest services."
    assert not passes("Who reports to whom?", reference, "The head of guest services reports to the night manager.")
    assert passes("Who reports to whom?", reference, "The night manager answers to the head of guest services.")
    assert passes("Who?", reference, "The head of guest services is who the night manager reports to.")


def test_round6_an_answer_that_restates_the_question_is_an_echo() -> None:
    question = "How do I change my PIN?"
    grading = GRADER.grade(
        GradingItem("q", question, (), "Use the 'PIN services' menu at any ATM."),
        ("How do I change my PIN? PIN services. ATM menu. Card settings. Contact us."),
    )
    assert grading.passed is False and "restates the question" in (grading.reason or "")
