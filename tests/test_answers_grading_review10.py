"""Issue 42, tenth round: the defects an independent reviewer's 178 fresh cases found in the
fact grader (``facts/v9``) and the abstention rules (``abstention/v10``), fixed in ``facts/v10``
and ``abstention/v11``, each driven here through the default grader with the reviewer's
sentence and a variant of our own (docs/guide/answers.md, "Round 10", says the same in prose).

A. Number words: "one" is 1 before a counted thing, a unit or a currency ("one tablet per
   10 kg", "one 500 mg capsule", "a single cabin bag"), not as a pronoun ("one of them", "the
   one"); a rate may be "for each month" ("five percent of the unpaid tax for each month").
B. An answer's negation contradicts only a reference clause that says something: a bare value
   ("12 hours") is decided by its value, and "outside" as a place ("move them outside once ...")
   says no no.
C. A reference without facts is met when the answer's best-matching sentence holds two thirds of
   its content words (hyphens split, British spellings read as American, clipped words, hedges
   and citations ignored) that hold a third of the answer's content words or more (a paste of the
   context around the right sentence still fails; a compound with one part changed,
   "high-nitrogen" for "high-potassium", fails), and a list reference ("A, B and C") needs each
   of its items.
D. Currencies: ISO 4217 codes and names ("CHF 200" = "200 Swiss francs" = "200 CHF"; a name with
   its country is read as its code); dotted abbreviations are undotted ("U.S." = "US").
E. An identifier (letters and digits joined by hyphens, opening with a letter: "eu-north-1",
   "SKU-4411") is one fact matched whole, case-insensitive and without its hyphens, never a number.
F. Abstention: a subject the sources do not treat, said in the passive ("rabbit vaccination isn't
   discussed", "... is not addressed"), abstains like "is not mentioned".
G. Cents are hundredths of the currency beside them ("9 cents per gigabyte" = "$0.09 per GB"; a
   unit after "per" is no name); an ordinal day ("the 8th") in a sentence naming one month, and
   only one, is a date of that month.
"""

from __future__ import annotations

from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.facts.extraction import extract_facts
from goldeneval.prompts.facts.overlap import content_words, list_items
from goldeneval.prompts.facts.text import prepare
from tests.grading_helpers import GRADER, outcome, passes


def test_round10_a_one_before_a_counted_thing_is_the_number_1() -> None:
    question = "What is the dose of the dewormer?"
    reference = "1 tablet per 10 kg body weight, repeated after 14 days"
    answer = "Give one tablet for every 10 kg of body weight and repeat the dose two weeks later."
    assert passes(question, reference, answer)
    assert not passes(question, reference, "Give two tablets for every 10 kg of body weight, repeated after 14 days.")
    assert passes("How many bags?", "One 8 kg cabin bag.", "You get a single cabin bag of up to 8 kg.")
    assert passes("How often?", "One capsule three times a day.", "Take one 500 mg capsule three times daily.")
    assert not passes("How often?", "One capsule three times a day.", "Take two capsules three times daily.")
    assert [f.key[0] for f in extract_facts("one euro")] == [(1,)]
    for pronoun in (
        "one of them",
        "the one on the left",
        "at one point",
        "a one-way ticket",
        "a single ticket",
        "one way or another",
    ):
        assert extract_facts(pronoun) == [], pronoun


def test_round10_a_a_percentage_in_words_for_each_month_is_a_rate() -> None:
    question = "What is the late filing penalty rate?"
    answer = "The penalty is five percent of the unpaid tax for each month the return is late."
    assert passes(question, "5% per month", answer)
    assert passes(question, "5% per month", "It is 5 per cent for every month of delay.")
    assert not passes(question, "5% per month", "The penalty is fifteen percent of the unpaid tax for each month.")


def test_round10_b_a_negation_does_not_contradict_a_bare_value() -> None:
    question = "How long should a cat fast before surgery?"
    assert passes(question, "12 hours", "Cats should not be fed for twelve hours before the operation.")
    assert passes(question, "12 hours", "Do not feed the cat for 12 hours before surgery.")
    assert not passes(question, "12 hours", "Do not feed the cat for 8 hours before surgery.")
    fee = "Is there a fee to cancel?"
    assert not passes(fee, "Yes, a fee applies.", "No, there is no fee to cancel.")


def test_round10_b_outside_as_a_place_says_no_no() -> None:
    question = "When should tomatoes be transplanted outdoors?"
    reference = "after the last frost, usually mid-May"
    answer = "Move tomato seedlings outside once the last frost has passed \u2014 typically around the middle of May."
    assert passes(question, reference, answer)
    assert passes(question, reference, "Plant them outside after the last frost, usually in mid-May.")
    hours = "When can I call the helpline?"
    assert not passes(hours, "During office hours.", "You can call outside office hours.")


def test_round10_c_a_short_reference_inside_a_full_sentence_passes() -> None:
    supervisor = "Who must sign off before the fume hood is used after hours?"
    long = "You need approval from the lab supervisor before using the fume hood after hours."
    assert passes(supervisor, "the lab supervisor", long)
    assert not passes(supervisor, "the lab supervisor", "You need approval from the safety officer before using it.")
    vaccine = "Which vaccine is required for pet travel within the EU?"
    assert passes(vaccine, "rabies", "Your pet needs a valid rabies vaccination to travel within the EU.")
    assert not passes(vaccine, "rabies", "Your pet needs a valid distemper vaccination to travel within the EU.")


def test_round10_c_a_paste_of_the_context_around_the_right_sentence_still_fails() -> None:
    question = "Who must sign off before the fume hood is used after hours?"
    paste = (
        "Lab safety rules. The fume hood must be inspected monthly by facilities staff. After hours, use of the "
        "fume hood requires sign-off by the lab supervisor. Spill kits are stored under the sink in every room. "
        "Eye wash stations are checked weekly."
    )
    assert not passes(question, "the lab supervisor", paste)
    chat = "You need the lab supervisor's sign-off for after-hours use. Let me know if you need anything else!"
    assert passes(question, "the lab supervisor", chat)


def test_round10_c_spelling_hyphens_and_clipped_words_are_read_alike() -> None:
    question = "What should tomatoes be fed?"
    assert passes(question, "a high-potassium fertiliser", "Use a fertilizer that is rich in potassium.")
    assert passes(question, "a high-potassium fertiliser", "Feed them a high potassium fertilizer.")
    assert not passes(question, "a high-potassium fertiliser", "Use a compost that is rich in nitrogen.")
    assert content_words("colour centre travelled") == content_words("color center traveled")


def test_round10_c_a_compound_with_one_part_changed_is_another_thing() -> None:
    question = "What should tomatoes be fed?"
    reference = "a high-potassium fertiliser"
    assert not passes(question, reference, "Use a high-nitrogen fertiliser.")
    assert not passes(question, reference, "Use a low-potassium fertiliser.")
    assert passes(question, reference, "Use a potassium-rich fertilizer.")
    assert not passes("Which diet?", "a low-sodium diet", "Keep to a low-fat diet.")


def test_round10_c_a_list_reference_needs_each_item() -> None:
    kittens = "Which vaccinations do kittens need?"
    reference = "feline herpesvirus, calicivirus and panleukopenia"
    full = (
        "Kittens should be vaccinated against feline herpesvirus (FHV-1), feline calicivirus (FCV) and feline "
        "panleukopenia (FPV) [2][3]."
    )
    assert passes(kittens, reference, full)
    assert not passes(kittens, reference, "Kittens need vaccination against calicivirus and panleukopenia.")
    bag = "Which items go in the yellow bag?"
    items = "plastic packaging, cans and drink cartons"
    assert not passes(bag, items, "Plastic packaging and cans go into the yellow bag.")
    assert passes(bag, items, "The yellow bag is for:\n- plastic packaging\n- cans\n- drink cartons")
    claim = "What documents are needed to file an insurance claim?"
    papers = "the claim form, a police report and photos of the damage"
    assert not passes(claim, papers, "You need to submit the claim form and photos of the damage.")
    assert passes(
        claim,
        papers,
        "To file a claim, submit (1) the completed claim form, (2) a copy of the police report, and (3) "
        "photographs showing the damage.",
    )
    lab = "What protective equipment is required in the lab?"
    assert not passes(lab, "safety goggles, a lab coat and nitrile gloves", "Wear safety goggles and a lab coat.")
    assert len(list_items("safety goggles, a lab coat and nitrile gloves")) == 3


def test_round10_c_two_clauses_joined_by_and_are_no_list() -> None:
    assert list_items("Open the rear tray and remove the stuck paper.") == []
    question = "What should I do if the printer shows a paper jam?"
    reference = "Open the rear tray and remove the stuck paper."
    assert passes(question, reference, "Open the back tray and pull out the jammed paper.")


def test_round10_d_a_currency_by_its_code_or_its_name_is_the_same_currency() -> None:
    question = "What is the deductible for glass damage?"
    assert passes(question, "CHF 200", "For glass damage the deductible is 200 Swiss francs.")
    assert passes(question, "CHF 200", "The deductible is 200 CHF.")
    assert passes(question, "200 Swiss francs", "It is CHF 200.")
    assert not passes(question, "CHF 200", "For glass damage the deductible is 200 euros.")
    assert not passes(question, "CHF 200", "For glass damage the deductible is 300 Swiss francs.")
    assert passes("How much?", "50 Canadian dollars", "It costs CAD 50.")
    assert not passes("How much?", "50 Canadian dollars", "It costs 50 AUD.")
    assert [f.key[2] for f in extract_facts("\u00a5500")] == ["JPY"]
    for text, code in (("500 yen", "JPY"), ("200 francs", "CHF"), ("100 rupees", "INR"), ("30 zloty", "PLN"),
                       ("\u20b9100", "INR"), ("SEK 90", "SEK"), ("10 rand", "ZAR")):  # fmt: skip
        assert [(f.kind, f.key[2]) for f in extract_facts(text)] == [("number", code)], text


def test_round10_d_dotted_abbreviations_are_read_without_their_dots() -> None:
    question = "Who must file form W-9?"
    reference = "US persons, including resident aliens, asked to provide their taxpayer identification number"
    answer = "Form W-9 is filed by U.S. persons (resident aliens included) when a requester asks them for their TIN."
    assert passes(question, reference, answer)
    assert passes("Where is it sold?", "In the U.K. only.", "It is only sold in the UK.")
    assert not passes("Where is it sold?", "In the U.K. only.", "It is only sold in the U.S.")
    assert content_words("U.S. persons") == content_words("US persons")
    assert prepare("It is sold in the U.S. The form is W-9.") == "It is sold in the US. The form is W-9."


def test_round10_e_an_identifier_is_one_fact_matched_whole() -> None:
    question = "In which region is the cheapest storage tier available?"
    assert not passes(question, "eu-north-1", "The cheapest storage tier is available in eu-west-1.")
    assert passes(question, "eu-north-1", "The cheapest storage tier is offered in eu-north-1 (Stockholm).")
    assert passes(question, "eu-north-1", "It is offered in EU-NORTH-1.")
    sku = "Which part fits?"
    assert passes(sku, "SKU-4411", "Order part SKU4411.")
    assert not passes(sku, "SKU-4411", "Order part SKU-4412.")
    assert [(f.kind, f.key) for f in extract_facts("eu-north-1")] == [("entity", ("eunorth1",))]
    assert [f.kind for f in extract_facts("a 24-hour service")] == ["number"]  # a value, not a code
    assert [(f.kind, f.key) for f in extract_facts("COVID-19")] == [("entity", ("covid19",))]
    assert [f.kind for f in extract_facts("mid-2025")] == ["year"]


def test_round10_f_a_subject_not_discussed_abstains() -> None:
    question = "Which vaccines do rabbits need?"
    answer = (
        "The leaflet only covers dogs and cats; rabbit vaccination isn't discussed. I cannot answer based on the "
        "given documents."
    )
    assert outcome(question, answer) == "abstained"
    assert outcome(question, "Rabbit vaccination is not addressed in the leaflet.") == "abstained"
    assert outcome(question, "I am unable to answer using the provided context.") == "abstained"
    for verb in ("described", "documented", "explained"):
        assert outcome(question, f"Rabbit vaccination is not {verb} in the leaflet.") == "abstained", verb
    assert outcome(question, "Rabbits need a myxomatosis vaccine; the RHD vaccine is not discussed.") != "abstained"


def test_round10_g_cents_are_hundredths() -> None:
    question = "What is the price per GB of data egress after the free tier?"
    answer = "After the free tier, data egress is billed at 9 cents per gigabyte."
    assert passes(question, "$0.09 per GB", answer)
    assert passes(question, "$0.09 per GB", "It costs 0.09 dollars per GB.")
    assert not passes(question, "$0.09 per GB", "After the free tier, data egress is billed at 19 cents per gigabyte.")
    assert passes("How much is a stamp?", "\u20ac0.50", "A stamp costs 50 cents.")
    assert [f.kind for f in extract_facts("$0.09 per GB")] == ["number"]  # "GB" after "per" is a unit
    assert not passes("How much is a stamp?", "\u20ac0.50", "A stamp costs 50 euros.")


def test_round10_g_an_ordinal_day_takes_the_one_month_of_its_sentence() -> None:
    question = "When are the observing nights in March?"
    answer = "In March there are observing nights on the 8th and the 22nd."
    assert passes(question, "March 8 and March 22", answer)
    assert not passes(question, "March 8 and March 22", "In March there are observing nights on the 8th and the 23rd.")
    assert not passes(question, "March 8 and March 22", "In April there are observing nights on the 8th and the 22nd.")
    assert [f.kind for f in extract_facts("In March the office on the 2nd floor opens.")] == ["number"]
    assert [f.kind for f in extract_facts("In March and April, on the 8th.")] == ["number"]


def test_round10_identities_are_new() -> None:
    assert AbstentionRules().identity == "abstention/v12(default;max_words=50)"
    assert "reference=facts/v11(" in GRADER.identity and GRADER.identity.startswith("deterministic/v11(")
    assert "|best-sentences-recall>=0.667|beyond-question-recall>=0.5|token-f1>=0.5;" in GRADER.identity
