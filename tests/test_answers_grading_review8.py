"""Issue 42, eighth round: the defect themes an independent reviewer's 211 fresh cases found in
the fact grader (``facts/v7``) and the abstention rules (``abstention/v8``), fixed in
``facts/v8`` and ``abstention/v9``, each driven here through the default grader with cases of
our own (docs/guide/answers.md, "Round 8", says the same in prose).

A. A limit worded with a negation ("must not exceed 10 kg", "no more than 3 nights", "no
   module below 40") states the value; it says no to nothing. A dash between words ends a clause.
B. A short reference whose only facts are possible names is met by one sentence holding all
   of its words ("Smart casual." in "The dress code is smart casual on Fridays.").
C. Watts are a unit ("45W" = "45 W"); "24/7" reads "24 hours a day, 7 days a week"; an hour
   range writes its am or pm once ("8-10 pm"); pence are hundredths of a pound ("40p" = "£0.40").
D. A bare number offered after "maybe" ("12 months, maybe 18") takes the unit before it: a hedge.
E. An abstention: "found nothing about ..." after a search clause, a source that doesn't list
   or gives no datum ("The brochure doesn't list the opening hours"), "not covered here".
"""

from __future__ import annotations

from goldeneval.prompts.abstention import AbstentionRules
from tests.grading_helpers import GRADER, outcome, passes


def test_round8_a_limit_worded_with_a_negation_states_the_value() -> None:
    question = "How heavy may a checked bag be?"
    assert passes(question, "23 kg", "A checked bag must not exceed 23 kg.")
    assert passes(question, "23 kg", "Your bag mustn't be more than 23 kg.")
    assert passes(question, "23 kg", "Checked bags can be no heavier than 23 kg.")
    assert not passes(question, "23 kg", "A checked bag must not exceed 20 kg.")
    stay = "How long can I stay in the guest room?"
    assert passes(stay, "Up to 3 nights.", "You can book it for no more than 3 nights.")
    grades = "What marks do I need?"
    reference = "An average of 60 with no module below 40."
    assert passes(grades, reference, "You need a 60 average, and no single module under 40.")
    assert not passes(grades, reference, "You need a 60 average, and no single module under 50.")


def test_round8_a_limit_does_not_read_past_a_real_no() -> None:
    question = "Are dogs allowed on the train?"
    reference = "Dogs are allowed if they weigh under 10 kg."
    assert not passes(question, reference, "Dogs are not allowed under 10 kg.")
    assert passes(question, reference, "Yes, dogs under 10 kg are allowed.")


def test_round8_a_dash_between_words_ends_a_clause() -> None:
    question = "What does the basic fare include?"
    reference = "One 10 kg carry-on bag; no checked bag included."
    assert passes(
        question,
        reference,
        "The basic fare includes one carry-on bag of up to 10 kg \u2014 checked bags aren't included.",
    )
    assert not passes(
        question,
        reference,
        "The basic fare includes one carry-on bag of up to 10 kg \u2014 and a checked bag is included.",
    )


def test_round8_a_short_name_reference_is_met_by_a_sentence_holding_its_words() -> None:
    question = "What is the dress code on Fridays?"
    assert passes(question, "Smart casual.", "On Fridays the dress code at the office is smart casual for everyone.")
    assert not passes(
        question, "Smart casual.", "On Fridays the dress code at the office is business formal for everyone."
    )
    region = "Where is the data of Irish customers stored?"
    assert passes(region, "Dublin (eu-west-1).", "Irish customer data is kept in eu-west-1, which is Dublin.")
    assert not passes(region, "Dublin (eu-west-1).", "Irish customer data is kept in eu-central-1, which is Frankfurt.")


def test_round8_watts_pence_24_7_and_hour_ranges() -> None:
    assert passes("How fast can it charge?", "Up to 45 W charging.", "It charges at up to 45W.")
    assert not passes("How fast can it charge?", "Up to 45 W charging.", "It charges at up to 65W.")
    assert passes("How much is a reply card?", "40p each.", "Each reply card costs \u00a30.40.")
    assert not passes("How much is a reply card?", "40p each.", "Each reply card costs \u00a340.")
    assert passes(
        "When is support open?", "Support is available 24/7.", "Support is open 24 hours a day, 7 days a week."
    )
    hours = "When is the pool reserved for lanes?"
    assert passes(hours, "Every Friday from 20:00 to 22:00.", "Lanes are reserved on Fridays, 8-10 pm.")
    assert not passes(hours, "Every Friday from 20:00 to 22:00.", "Lanes are reserved on Fridays, 8-10 am.")


def test_round8_a_bare_rival_number_after_maybe_is_a_hedge() -> None:
    question = "How long is the guarantee?"
    assert not passes(question, "12 months from delivery.", "The guarantee is probably 12 months, maybe 18.")
    assert not passes(question, "12 months from delivery.", "It is 12 months, or perhaps 24.")
    assert passes(question, "12 months from delivery.", "The guarantee runs for 12 months from delivery.")


def test_round8_more_abstentions_are_read() -> None:
    rules = AbstentionRules()
    for answer in (
        "I went through the timetable documents but found nothing about bike spaces.",
        "The brochure doesn't list the opening hours.",
        "The handout gives no cancellation deadline.",
        "Parking permits aren't covered here, sorry.",
        "Pet policies are not mentioned here.",
    ):
        assert rules.match(answer) is not None, answer
        assert outcome("Can I bring a bike on the train?", answer) == "abstained", answer
    for answer in (
        "The ticket machine doesn't give change.",
        "The policy gives no refunds after 14 days.",
        "Dental work is not covered by the plan.",
    ):
        assert rules.match(answer) is None, answer


def test_round8_identities_are_new() -> None:
    assert AbstentionRules().identity == "abstention/v12(default;max_words=50)"
    assert "reference=facts/v11(" in GRADER.identity and GRADER.identity.startswith("deterministic/v11(")
