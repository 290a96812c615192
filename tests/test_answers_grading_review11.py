"""Issue 42, eleventh round: the two defects an independent reviewer's 150 fresh cases found in
the fact grader (``facts/v10``) and the abstention rules (``abstention/v11``), fixed in
``facts/v11`` and ``abstention/v12``, each driven here through the default grader with the
reviewer's sentence and variants of our own (docs/guide/answers.md, "Round 11", says the same in
prose).

A. A reference without facts: its content words that the question already holds are no evidence
   of an answer.  The answer's best-matching sentences must hold one of the reference's other
   words at least (or fail, whatever recall or token F1 say), and half or more of them beside two
   thirds of all its words for the recall to pass them; a reference with no word beyond the
   question's is decided as before.
B. Abstention: a sentence's concessive opening ("While ...", "Although ...", "Though ...",
   "Even though ...", "Whereas ...") that abstains about a neighbouring detail is a clause of its
   own, so a main clause after it that says something answers, as after "but".
"""

from __future__ import annotations

from goldeneval.prompts.facts.overlap import beyond_question, content_words, reference_overlap
from tests.grading_helpers import outcome, passes

POOL = "How should swimmers prepare before entering the pool?"
SHOWER = "shower before entering the pool"


def test_round11_a_the_questions_words_are_no_evidence_of_an_answer() -> None:
    # the reviewer's case r11-082: it repeats the question around "in accordance with the pool rules"
    echo = "Swimmers should prepare before entering the pool in accordance with the pool rules."
    assert not passes(POOL, SHOWER, echo)
    assert passes(POOL, SHOWER, "Take a shower before entering the pool.")
    assert passes(POOL, SHOWER, "Swimmers must shower before they go into the pool.")
    # token F1 (0.75 here) is no way round it
    assert not passes(POOL, SHOWER, "Prepare before entering the pool.")
    assert not passes(POOL, SHOWER, "Before entering the pool, swimmers should follow the posted rules.")
    # with one word beyond the question's, token F1 decides as before
    printer = "What should I do if the printer shows a paper jam?"
    tray = "Open the rear tray and remove the stuck paper."
    assert passes(printer, tray, "Open the back tray and pull out the jammed paper.")
    assert not passes(printer, tray, "If the printer shows a paper jam, fix the paper jam.")


def test_round11_a_half_of_the_words_beyond_the_question_suffice_beside_two_thirds_of_all() -> None:
    question = "Which fertiliser is recommended for roses?"
    reference = "a high-potassium fertiliser"
    assert passes(question, reference, "Use a fertilizer that is rich in potassium.")
    assert not passes(question, reference, "Use a fertiliser recommended for roses.")
    # the words beyond the question are measured in the best-matching sentences
    overlap = reference_overlap("Use a fertilizer that is rich in potassium.", reference, question)
    assert overlap.recall == 2 / 3 and overlap.beyond_recall == 1 / 2
    echo = "Swimmers should prepare before entering the pool in accordance with the pool rules."
    overlap = reference_overlap(echo, SHOWER, POOL)
    assert overlap.recall == 2 / 3 and overlap.beyond_recall == 0.0


def test_round11_a_a_reference_with_no_word_beyond_the_questions_is_decided_as_before() -> None:
    words = content_words("the green bin")
    assert beyond_question(words, "Is it the green bin?") == words
    assert beyond_question(words, "") == words
    assert beyond_question(words, "Which bin is used for garden waste?") == content_words("green")
    assert passes("Is garden waste collected in the green bin?", "the green bin", "It goes in the green bin.")
    assert passes("", "the lab supervisor", "You need approval from the lab supervisor.")


def test_round11_b_a_concessive_abstention_about_a_neighbouring_detail_then_an_answer() -> None:
    question = "What is the standard warranty period for the phone?"
    # the reviewer's case r11-113
    assert passes(
        question,
        "24 months",
        "While the context does not mention extended warranties, the standard warranty lasts 24 months.",
    )
    for answer in (
        "Although the documents do not mention extended warranties, the standard warranty lasts 24 months.",
        "Though the context doesn't say anything about extended warranties, the warranty is 24 months.",
        "Even though the context does not mention extended warranties, the standard warranty lasts 24 months.",
        "The phone is covered. While the sources do not mention accessories, the warranty lasts 24 months.",
    ):
        assert outcome(question, answer, "24 months") == "pass", answer
    # a wrong value after the concession is graded as a wrong value, not as an abstention
    wrong = "While the context does not mention extended warranties, the standard warranty lasts 12 months."
    assert outcome(question, wrong, "24 months") == "fail"


def test_round11_b_abstentions_stay_abstentions() -> None:
    question = "What is the standard warranty period for the phone?"
    for answer in (
        "The context does not mention the warranty.",
        "While the context does not mention the warranty, I cannot say.",
        "While the context does not mention extended warranties, it does not mention the standard one either.",
    ):
        assert outcome(question, answer, "24 months") == "over_abstention", answer
    for answer in (
        "The context does not mention the warranty.",
        "While I checked the documents, they do not mention the warranty.",
        "While the documents cover returns, they do not mention the warranty.",
        "Although I looked through the documents, I couldn't find the warranty period.",
    ):
        assert outcome(question, answer) == "abstained", answer


def test_round11_b_a_guess_after_a_concessive_abstention_is_a_missed_abstention() -> None:
    question = "What is the extended warranty period for the phone?"
    for answer in (
        "While the context does not mention extended warranties, I believe it is 24 months.",
        "While the context does not mention the warranty, it is probably 24 months.",
        "The context does not mention extended warranties, but I believe it is 24 months.",
    ):
        assert outcome(question, answer) == "missed_abstention", answer
