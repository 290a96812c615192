"""Issue 42, ninth round: the defects an independent reviewer's 207 fresh cases found in the
fact grader (``facts/v8``) and the abstention rules (``abstention/v9``), fixed in ``facts/v9``
and ``abstention/v10``, each driven here through the default grader with the reviewer's
sentence and a variant of our own (docs/guide/answers.md, "Round 9", says the same in prose).

A. Each reference value needs an answer value of its own: "6 hours" is not met by the "6" of
   "aged 6" that already answers the reference's own "6"; "8 passengers and 8 suitcases" are two
   facts, and one "eight passengers" does not state both.
B. An answer that, in a clause of its own, also says no to what a reference clause negates
   agrees with it ("never take a double dose" and "don't double up").
C. Abstentions: "said nothing about"; a clause naming someone else who can help ("the
   registrar's office should be able to help", "the best place to check") neither abstains nor
   answers; "the HR policy only covers employees" says what a source (named by its kind) holds.
D. Diacritics are folded before names and words are compared ("L\u00f3pez" = "Lopez").
E. "complimentary" (and "gratis", "at no cost", "free of cost") says free.
F. A name of several words is met by its distinctive word ("Heathrow" for "London Heathrow"),
   the last of its words that is no generic word of places, organisations and roles, in a name
   of the answer with no word the reference and the question lack ("London Gatwick" fails).
"""

from __future__ import annotations

from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.facts.text import fold
from goldeneval.prompts.graders import GradingItem
from tests.grading_helpers import GRADER, outcome, passes


def test_round9_a_unit_value_is_not_met_by_a_bare_number_another_fact_uses() -> None:
    question = "What is the dose for children?"
    reference = "Children aged 6 to 12: 250 mg every 6 hours."
    assert not passes(question, reference, "Children aged 6 to 12 should take 250 mg.")
    assert passes(question, reference, "Children aged 6 to 12 should take 250 mg every six hours.")
    assert passes(question, reference, "For kids between 6 and 12, give 250 mg every 6 hours.")
    adults = "Adults aged 18 to 65: 2 tablets every 4 hours."
    assert not passes("What is the dose for adults?", adults, "Adults 18-65: two tablets.")
    assert passes("What is the dose for adults?", adults, "Adults aged 18 to 65 take 2 tablets every 4 hours.")


def test_round9_equal_numbers_counting_different_things_are_two_facts() -> None:
    question = "How many people and bags does the shuttle take?"
    reference = "Up to 8 passengers and 8 suitcases."
    assert not passes(question, reference, "The shuttle seats up to eight passengers.")
    assert not passes(question, reference, "It holds 8 suitcases.")
    assert passes(question, reference, "Up to 8 passengers and 8 suitcases.")
    assert passes(question, reference, "It takes eight passengers plus eight suitcases.")
    assert passes(question, reference, "The shuttle carries a maximum of 8 people and 8 pieces of luggage.")
    rooms = "How many rooms are there?"
    assert not passes(rooms, "4 bedrooms and 4 bathrooms.", "The house has four bedrooms.")
    assert passes(rooms, "4 bedrooms and 4 bathrooms.", "The house has four bedrooms and four bathrooms.")
    graded = GRADER.grade(GradingItem("q", rooms, (), "4 bedrooms and 4 bathrooms."), "The house has four bedrooms.")
    assert graded.reason is not None and graded.reason.endswith("number '4' (bathroom)")


def test_round9_a_value_written_twice_in_the_reference_is_one_fact() -> None:
    question = "When is the office open?"
    reference = "08:00 to 18:00 on weekdays, 08:00 to 12:00 on Saturdays."
    assert passes(question, reference, "Weekdays 8 am to 6 pm; Saturdays 8 am until noon.")


def test_round9_an_answer_that_negates_the_same_thing_agrees() -> None:
    question = "What should I do if I miss a dose?"
    reference = "Take it as soon as you remember unless it is almost time for the next dose; never take a double dose."
    assert passes(
        question,
        reference,
        "Take the missed dose as soon as you remember. If your next dose is nearly due, skip the missed one "
        "\u2014 don't double up.",
    )
    assert passes(
        question, reference, "Take it as soon as you remember, unless the next dose is almost due; never double up."
    )
    for flipped in (
        "Take the missed dose as soon as you remember. If your next dose is nearly due, take a double dose.",
        "Take a double dose; do not take it with food.",
    ):
        assert not passes(question, reference, flipped), flipped


def test_round9_more_abstentions_are_read() -> None:
    rules = AbstentionRules()
    question = "When are the summer school dates?"
    for answer in (
        # the reviewer's
        "I'm unable to answer this from the provided material. It doesn't list summer school dates; the "
        "registrar's office should be able to help.",
        "Based on the documents provided, I cannot determine how to appeal a parking ticket. The council's "
        "website would be the best place to check.",
        "The HR policy only covers employees; it says nothing about paternity leave for contractors.",
        # variants of our own
        "Unable to answer that from the documents.",
        "We are unable to answer the question from the material provided.",
        "I couldn't determine the fee from what I was given.",
        "From the context I can't determine the answer.",
        "The handbook said nothing about paternity leave.",
        "They said nothing about parking.",
        "The leaflet mentioned nothing about summer school.",
        "The handbook only applies to employees; it doesn't say anything about contractors.",
        "I can't answer that from the documents. Your manager would be the right person to ask.",
        "I can't answer that from the documents. The IT helpdesk may be able to assist.",
        "The documents don't cover it. Student Services can advise you further.",
    ):
        assert rules.match(answer) is not None, answer
        assert outcome(question, answer) == "abstained", answer


def test_round9_someone_else_who_helps_is_no_answer_but_an_answer_beside_it_is() -> None:
    rules = AbstentionRules()
    for answer in (
        "The documents don't say. The shuttle can help you get to the airport at 08:00.",
        "I can't find that. The front desk can help you book a taxi for 20 euros.",
        "The policy says nothing about contractors, but annual leave is 25 days.",
        "The HR policy only covers employees.",
        "The front desk can help you with that.",
        "I can't answer that from the documents. We can help with that.",
    ):
        assert rules.match(answer) is None, answer
    question = "How many days of annual leave do I get?"
    assert passes(question, "25 days.", "The policy says nothing about contractors, but annual leave is 25 days.")
    assert outcome(question, "The policy says nothing about annual leave.", "25 days.") == "over_abstention"


def test_round9_diacritics_are_folded_in_names_and_words() -> None:
    question = "Who is the data protection officer?"
    assert passes(question, "Maria Lopez", "Our DPO is Maria L\u00f3pez.")
    assert passes(question, "Maria L\u00f3pez", "Our DPO is Mar\u00eda Lopez.")
    assert not passes(question, "Maria Lopez", "Our DPO is Mario L\u00f3pez.")
    lead = "Who leads the project?"
    assert passes(lead, "Zo\u00eb Bront\u00eb", "The project lead is Zoe Bronte.")
    assert not passes(lead, "Zo\u00eb Bront\u00eb", "The project lead is Zoe Smith.")
    assert fold("Caf\u00e9 L\u00f3pez, 45 m\u00b2, \u00bd, \u20ac5") == "Cafe Lopez, 45 m\u00b2, \u00bd, \u20ac5"


def test_round9_complimentary_and_its_kin_say_free() -> None:
    question = "Do I have to pay for the shuttle bus?"
    reference = "No, the shuttle bus is free for hotel guests."
    for answer in (
        "The shuttle is complimentary for all hotel guests.",
        "Hotel guests ride the shuttle at no cost.",
        "Hotel guests can use the shuttle at no charge.",
        "The shuttle bus is free of charge for hotel guests.",
        "There is no charge for hotel guests on the shuttle bus.",
        "Hotel guests ride the shuttle gratis.",
        "The shuttle is free of cost for hotel guests.",
    ):
        assert passes(question, reference, answer), answer
    assert not passes(question, reference, "The shuttle is not complimentary; hotel guests pay for it.")
    assert passes("Is breakfast free?", "Yes, breakfast is free.", "Breakfast is complimentary.")
    assert not passes("Is breakfast complimentary?", "No, breakfast costs extra.", "Breakfast is complimentary.")


def test_round9_a_name_is_met_by_its_distinctive_word() -> None:
    question = "When does flight LH902 depart and arrive?"
    reference = "Flight LH902 departs Frankfurt at 14:25 and arrives in London Heathrow at 15:05."
    assert passes(question, reference, "LH902 leaves Frankfurt at 2:25 pm and lands at Heathrow at 3:05 pm local time.")
    assert not passes(question, reference, "LH902 leaves Frankfurt at 2:25 pm and lands at London Gatwick at 3:05 pm.")
    assert not passes(question, reference, "LH902 leaves Frankfurt at 2:25 pm and lands at Gatwick at 3:05 pm.")
    where = "Where does it land?"
    assert passes(where, "London Heathrow", "It lands at Heathrow Airport.")
    assert not passes(where, "London Heathrow", "It lands in London.")
    assert not passes(where, "London Heathrow", "It lands at Manchester Heathrow.")
    who = "Who is the course coordinator?"
    assert passes(who, "Dr Amelia Grant", "The coordinator is Dr Grant.")
    assert not passes(who, "Dr Amelia Grant", "The coordinator is Dr Peter Grant.")
    assert not passes(who, "Dr Amelia Grant", "The coordinator is Dr Amelia.")


def test_round9_generic_words_of_a_name_do_not_name_it() -> None:
    assert passes("Where is the car park?", "Westfield Park and Ride", "It's at Westfield.")
    assert not passes("Where is the car park?", "Westfield Park and Ride", "It's at Eastgate Park and Ride.")
    assert not passes("Which zone is it in?", "North Zone", "It's in the South Zone.")
    assert not passes("Where does it leave from?", "Central Station", "It leaves from Central.")
    for answer in ("The Director approves it.", "The Managing Director approves it.", "The HR Director approves it."):
        assert not passes("Who approves claims over 500?", "The Finance Director.", answer), answer


def test_round9_identities_are_new() -> None:
    assert AbstentionRules().identity == "abstention/v12(default;max_words=50)"
    assert "reference=facts/v11(" in GRADER.identity and GRADER.identity.startswith("deterministic/v11(")
