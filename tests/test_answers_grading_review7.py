"""Issue 42, seventh round: the defect themes an independent reviewer's 200 fresh cases found in
the fact grader (``facts/v6``) and the abstention rules (``abstention/v7``), fixed in
``facts/v7`` and ``abstention/v8``, each driven here through the default grader with cases of
our own (docs/guide/answers.md says the same in prose).

A. A unit written on the number ("50MB", "45p") is a value, not a name; data sizes compare in bytes.
B. A number inside a hyphenated word ("under-18s") is read.
D. A rate's period is compared with the thing counted between ("20 hours of training per year"),
   and "per semester" is a period of its own.
E. A negated obligation ("don't have to pay") says no to "must pay".
F. A guessed rival with a period ("£120 or possibly £150 a year") is a hedge.
G. An abstention names its source with any noun phrase ("the timetable doesn't say", "the
   provided leaflet"); "The policy does not cover dental work" still answers.
"""

from __future__ import annotations

import pytest

from goldeneval.prompts.abstention import AbstentionRules
from tests.grading_helpers import GRADER, outcome, passes


def test_round7_a_unit_written_on_the_number_is_a_value() -> None:
    question = "How big can an attachment be?"
    assert passes(question, "Attachments may be up to 25 MB.", "The limit is 25MB per attachment.")
    assert passes(question, "Attachments may be up to 25MB.", "You can attach up to 25 megabytes.")
    assert passes(question, "Attachments may be up to 2 GB.", "Up to 2000 MB.")
    assert not passes(question, "Attachments may be up to 25 MB.", "The limit is 25GB per attachment.")
    fare = "How much is a first-class stamp?"
    assert passes(fare, "A stamp costs 85p.", "It is 85 pence.")
    assert not passes(fare, "A stamp costs 85p.", "It is 95 pence.")


def test_round7_a_number_in_a_hyphenated_word_is_read() -> None:
    question = "Do children travel free?"
    assert passes(question, "Yes, children under 12 travel free.", "Yes, under-12s ride for free.")
    assert not passes(question, "Yes, children under 12 travel free.", "Yes, under-16s ride for free.")
    assert passes("Who gets the discount?", "Anyone over 65 gets 20% off.", "Over-65s get 20% off.")


def test_round7_the_period_of_a_rate_is_compared() -> None:
    question = "How much volunteering leave is there?"
    reference = "Staff get 16 hours of volunteering leave per year."
    assert passes(question, reference, "You get 16 hours of volunteering leave a year.")
    assert not passes(question, reference, "You get 16 hours of volunteering leave per month.")
    tuition = "What does the evening course cost?"
    assert passes(tuition, "The evening course costs $900 per term.", "It's $900 a term.")
    assert not passes(tuition, "The evening course costs $900 per term.", "It's $900 per year.")
    assert not passes(tuition, "The evening course costs $900 per semester.", "It's $900 per month.")


def test_round7_a_negated_obligation_says_no_to_must() -> None:
    question = "What about the cleaning fee for guests?"
    reference = "Guests must pay the cleaning fee."
    assert not passes(question, reference, "Guests don't have to pay the cleaning fee.")
    assert not passes(question, reference, "Guests needn't pay the cleaning fee.")
    assert not passes(question, reference, "Guests are not required to pay the cleaning fee.")
    assert passes(question, reference, "Guests have to pay the cleaning fee.")
    fine = "What happens if a library fine is unpaid?"
    assert passes(fine, "The fine doubles to £20 if not paid within 14 days.", "If you don't pay in 14 days it's £20.")


def test_round7_a_guessed_rival_with_a_period_is_a_hedge() -> None:
    question = "How much is the resident parking permit?"
    reference = "The resident parking permit costs £80."
    assert not passes(question, reference, "It's £80 or possibly £95 a year.")
    assert not passes(question, reference, "Maybe £80, perhaps £8 a month.")
    assert passes(question, reference, "It costs £80 for the year.")


@pytest.mark.parametrize(
    "answer",
    [
        "The timetable doesn't say when the Sunday ferries start.",
        "The menu does not mention gluten-free options.",
        "Sorry, the course outline says nothing about exam resits.",
        "That isn't something the provided brochure addresses.",
        "The price list provided does not list a family ticket.",
        "That's not covered in the HR onboarding notes I have.",
        "These meeting minutes don't specify who chairs the committee.",
    ],
)
def test_round7_an_abstention_may_name_any_source(answer: str) -> None:
    assert outcome("What time does the first ferry leave on Sundays?", answer) == "abstained"
    assert AbstentionRules().match(answer) is not None


@pytest.mark.parametrize(
    "answer",
    [
        "The policy does not cover dental work.",
        "The bus doesn't give change, so bring the exact fare.",
        "The landlord's deposit does not include the first month's rent.",
    ],
)
def test_round7_a_thing_named_without_saying_still_answers(answer: str) -> None:
    assert AbstentionRules().match(answer) is None


def test_round7_a_general_source_on_an_answerable_question_is_an_over_abstention() -> None:
    question = "When does the museum open on Mondays?"
    assert outcome(question, "The visitor guide doesn't say when it opens on Mondays.", "10:00.") == ("over_abstention")


def test_round7_identities_are_new() -> None:
    assert AbstentionRules().identity == "abstention/v12(default;max_words=50)"
    assert "reference=facts/v11(" in GRADER.identity and GRADER.identity.startswith("deterministic/v11(")
