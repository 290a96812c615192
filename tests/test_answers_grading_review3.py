"""Issue 42, third round: the defects an independent review found in the fact grader
(``facts/v3``) and the abstention rules (``abstention/v4``), each driven here.

1. A sentence-initial name is a fact ("Paris is the capital of France" against "Lyon is ..."),
   in grading and in faithfulness; an ordinary opening word is not required.
2. Yes/no is read from the clause about the question: "There is no charge" is a yes to "Can I
   bring my kitten?" and a no to "Does my dog need a fare?"; "banned" and "prohibited" say no.
3. Units that change the meaning: rates, working days, miles, number words, European formats.
4. Fresh abstention phrasings, an abstention followed by a redirect, a hedge followed by an answer.
5. Under-abstention (answered a question no document answers) counted apart in the answers run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.prompts.abstention import ABSTENTION_EXAMPLES, AbstentionRules
from goldeneval.prompts.facts.extraction import extract_facts
from goldeneval.prompts.facts.grading import grade_reference
from goldeneval.prompts.facts.support import unsupported_facts
from goldeneval.prompts.graders import DeterministicGrader, GradingItem
from tests.chat_server import Reply, answer, chat_server, last_user_message
from tests.test_answers_abstention_phrases import UNLISTED_VARIANTS

# (prompt id, question, reference, scripted answer, passes?)
CASES: list[tuple[str, str, str, str, bool]] = [
    (
        "name-swapped",
        "What is the capital of France?",
        "Paris is the capital of France.",
        "Lyon is the capital of France.",
        False,
    ),
    (
        "name-kept",
        "What is the capital of France?",
        "Paris is the capital of France.",
        "The capital of France is Paris.",
        True,
    ),
    ("name-alone", "What is the capital of France?", "Paris is the capital of France.", "Paris.", True),
    (
        "opening-word",
        "Where can I buy a Visitor Card?",
        "Tickets are sold at the Customer Centre.",
        "At the Customer Centre.",
        True,
    ),
    (
        "no-charge-yes",
        "Can I bring my kitten along on the bus?",
        "Yes, free in a closed carrier",
        "There is no charge for a kitten in a closed carrier.",
        True,
    ),
    (
        "no-charge-no",
        "Does my seeing-eye dog need a fare?",
        "No, assistance dogs travel free",
        "There is no charge for assistance dogs.",
        True,
    ),
    (
        "banned",
        "Can I take an e-scooter on the tram?",
        "No, e-scooters are not allowed, folded or not",
        "E-scooters are banned on trams, even folded.",
        True,
    ),
    ("per-month", "How much is a resident parking permit?", "95.00 per year", "95.00 per month", False),
    ("per-annum", "How much is a resident parking permit?", "95.00 per year", "It costs 95.00 annually.", True),
    ("miles", "How long is the coastal cycle route?", "12 km", "The route is 12 miles long.", False),
]


def _prompt_run(tmp_path: Path) -> dict[str, dict[str, Any]]:
    # a case number makes each prompt distinct (several cases share a question)
    prompts = [
        {"id": pid, "prompt": f"{question} (case {n})", "reference": reference}
        for n, (pid, question, reference, _, _) in enumerate(CASES)
    ]
    path = tmp_path / "review3.yaml"
    path.write_text(yaml.safe_dump({"id": "review3", "prompts": prompts}), encoding="utf-8")
    scripted = {f"{question} (case {n})": text for n, (_, question, _, text, _) in enumerate(CASES)}

    def reply(body: dict[str, Any]) -> Reply:
        return answer(scripted[last_user_message(body)])

    with chat_server(default=reply) as server:
        args = ["prompts", "--set", str(path), "--model", "goldeneval.openai"]
        args += ["--model-option", f"base_url={server.base_url}", "--model-option", "model=scripted"]
        args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    return {p["id"]: p for p in json.loads(result.stdout)["prompts"]}


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_through_the_cli_names_polarity_and_units_decide(tmp_path: Path) -> None:
    graded = _prompt_run(tmp_path)
    answered = {pid: p["answer"] for pid, p in graded.items()}
    assert answered == {pid: text for pid, _, _, text, _ in CASES}  # each prompt got its scripted answer
    assert {pid: p["passed"] for pid, p in graded.items()} == {pid: passes for pid, _, _, _, passes in CASES}
    assert "entity 'Paris'" in graded["name-swapped"]["reason"]


@pytest.mark.parametrize(
    ("question", "reference", "text", "passes"),
    [
        ("What is the capital of France?", "Paris is the capital of France.", "Lyon is the capital of France.", False),
        ("Who won?", "Okafor won the 2026 staff award.", "Lindqvist won the 2026 staff award.", False),
        ("Who won?", "Okafor won the 2026 staff award.", "The 2026 staff award went to Okafor.", True),
        ("Where is it?", "Northgate, next to the Travel Shop.", "Southgate, next to the Travel Shop.", False),
        ("How often do trams run?", "Trams run every 10 minutes on T3.", "Every ten minutes on T3.", True),
        # a name the question gives is no fact to restate
        ("What is the capital of France?", "Paris is the capital of France.", "It is Paris.", True),
    ],
)
def test_a_sentence_initial_name_is_a_fact_and_an_opening_word_is_not_required(
    question: str, reference: str, text: str, passes: bool
) -> None:
    assert grade_reference(text, reference, 0.5, question).passed is passes


def test_opening_words_are_read_by_the_stop_word_list_and_names_are_not() -> None:
    entities = {
        f.text
        for f in extract_facts(
            "Paris is big. The fare is low. According to HMT it is. Unfortunately not. Currently open."
        )
    }
    assert "Paris" in entities and "HMT" in entities
    assert not entities & {"The", "According", "Unfortunately", "Currently"}


def test_faithfulness_reads_a_sentence_initial_name() -> None:
    supported, unsupported = unsupported_facts("Lyon is the capital of France.", ["Paris is the capital of France."])
    assert [f.text for f in unsupported] == ["Lyon"] and [f.text for f in supported] == ["France"]
    supported, unsupported = unsupported_facts("Trams run every 10 minutes.", ["Our trams run every 10 minutes."])
    assert unsupported == []


@pytest.mark.parametrize(
    ("question", "reference", "text", "passes"),
    [
        (
            "Can I bring my kitten along on the bus?",
            "Yes, free in a closed carrier",
            "There is no charge for it.",
            True,
        ),
        (
            "Does my seeing-eye dog need a fare?",
            "No, assistance dogs travel free",
            "Assistance dogs travel free.",
            True,
        ),
        ("Does my seeing-eye dog need a fare?", "No, dogs travel free", "You don't have to pay for them.", True),
        (
            "Is it free to take a folded bike?",
            "Yes, folded bikes travel free",
            "There's no fee for folded bikes.",
            True,
        ),
        (
            "Is it free to take a folded bike?",
            "Yes, folded bikes travel free",
            "Folded bikes are charged a fare.",
            False,
        ),
        ("Can I take an e-scooter on the tram?", "No, not allowed", "E-scooters are prohibited on trams.", True),
        ("Can I take an e-scooter on the tram?", "No, not allowed", "Taking one on the tram is forbidden.", True),
        ("Can I take a folding bike on the bus?", "Yes, if folded", "Folding bikes are not banned on buses.", True),
        ("Can I smoke at tram stops?", "No, smoking is prohibited", "Smoking is permitted at open-air stops.", False),
        # the negation concerns something else: Sundays, a time limit, a deadline
        (
            "Does the F1 ferry run on Saturdays?",
            "Yes, from 08:00",
            "It doesn't run on Sundays, but on Saturdays it leaves at 08:00.",
            True,
        ),
        ("Does the F1 ferry run on Saturdays?", "Yes, from 08:00", "The F1 ferry does not run on Saturdays.", False),
        (
            "Is the Senior Pass valid before 09:00 on weekdays?",
            "No, only from 09:00 on weekdays",
            "The Senior Pass can be used before 09:00 on weekdays, there is no time limit.",
            False,
        ),
        ("Can I apply online?", "Yes, apply online by 31 May", "You can apply online, no later than 31 May.", True),
        # words that say no by themselves, unless the question asks about them or they describe a thing
        ("Is the museum open on Mondays?", "No, closed on Mondays", "The museum is closed on Mondays.", True),
        ("Is the museum closed on Mondays?", "Yes, closed on Mondays", "The museum is closed on Mondays.", True),
        ("Can I take the boat in December?", "No, suspended in winter", "The F2 is suspended in winter.", True),
        ("Can I bring my kitten?", "Yes, free in a closed carrier", "Kittens ride free in a closed carrier.", True),
        # a yes after a preamble
        (
            "Can I bring my kitten?",
            "Yes, in a carrier",
            "Based on the context, the answer is: Yes, in a carrier.",
            True,
        ),
        ("Can I bring my kitten?", "Yes, in a carrier", "Based on the context, the answer is: No.", False),
    ],
)
def test_polarity_is_read_from_the_clause_about_the_question(
    question: str, reference: str, text: str, passes: bool
) -> None:
    assert grade_reference(text, reference, 0.5, question).passed is passes


@pytest.mark.parametrize(
    ("reference", "text", "passes"),
    [
        ("95.00 per year", "95.00 per month", False),
        ("95.00 per year", "95.00 a year", True),
        ("95.00 per year", "95.00 annually", True),
        ("95.00 per year", "about 7.92 per month", True),  # converted equal (within 1%)
        ("65.00 per hour", "65.00/h", True),
        ("65.00 per hour", "65.00 per day", False),
        ("0.39 per kWh", "0.39 per minute", False),
        ("95.00 per year", "95.00", True),  # a bare value accepts any unit, as before
        ("Apply 15 working days ahead", "15 business days ahead", True),
        ("Apply 15 working days ahead", "15 calendar days ahead", False),
        ("claim within 30 days", "claim within 30 working days", False),
        ("12 km", "12 miles", False),
        ("12 km", "about 7.46 miles", True),
        ("420", "four hundred and twenty", True),
        ("420", "four hundred and sixty", False),
        ("12 charging points", "a dozen charging points", True),
        ("6 seats", "half a dozen seats", True),
        ("25.00 per quarter", "twenty-five per quarter", True),
        ("7.80", "7,80 €", True),
        ("1,200 bikes", "1.200 bikes", True),
        ("1,200 bikes", "1.500 bikes", False),
        ("1200.50 EUR", "1.200,50 €", True),
        ("1234567 passengers", "1.234.567 passengers", True),
        ("50% of the ticket price", "half the ticket price", True),
        ("a day ticket costs 7.80", "a day ticket: 7.80", True),  # "a day ticket" is no rate
        ("30 km/h", "30 mph", False),
        ("30 km/h", "30 kilometres per hour", True),
        ("2.5 km", "2,500 m", True),
    ],
)
def test_units_that_change_the_meaning_are_facts(reference: str, text: str, passes: bool) -> None:
    assert grade_reference(text, reference, 0.5).passed is passes


FRESH_PHRASINGS = (
    "That isn't something the documents cover.",
    "I'm unable to find any details about that.",
    "No information is available on this topic.",
    "The sources don't say.",
    "I have no way of knowing that from these documents.",
    "Nothing I was given mentions this.",
    "The documents make no mention of it.",
    "There's nothing about that in the material I have.",
    "Sorry, that's outside what the documents cover.",
    "None of the passages mention it.",
    "The provided text gives no answer to this.",
    "I'm afraid I don't have that information.",
    "This information isn't included in what I was given.",
    "I wasn't able to locate anything on that.",
    "The documents say nothing about this.",
    "That detail is missing from the documents.",
    "I lack the information to answer that.",
    "The question isn't answered by the passages.",
    "I don't see anything about that in the documents.",
    "That's not in my sources.",
    "I couldn't locate any reference to that in the files.",
    "The material provided doesn't touch on this.",
    "The context doesn't appear to include that.",
    "Sadly, I have nothing on that.",
    "That's not covered anywhere in what I was given.",
    "I don't have any data on that.",
    "There is no record of this in the documents.",
    "I can't give you an answer based on this context.",
    "The documents are unclear on this point.",
    "I'm unsure.",
    "The retrieved context lacks this information.",
    "I haven't found anything about this.",
    "The information you asked for isn't available to me.",
    "I am not in a position to answer that.",
    "The docs don't say.",
    "That's beyond the scope of the provided information.",
    "I'm afraid that's not something I can help with.",
    "None of the search results talk about it.",
    "The pages I have don't go into that.",
    "No relevant passage addresses this question.",
    "This question falls outside the provided documents.",
    "I am not aware of this from the documents.",
    "The context provided is insufficient to answer.",
    "It isn't possible to tell from the context.",
)
"""Phrasings written for the third round, none from the earlier lists."""

REDIRECTS = (
    "I can't find that; please contact customer service.",
    "The documents don't say. You may want to call the City Council on 0800 123 4567.",
    "I don't have that information - please check the HMT website or ask at the Customer Centre.",
    "I couldn't find that. I'd recommend calling HMT Customer Service.",
)
HEDGED_ANSWERS = (
    "I'm not certain, but it costs 7.80.",
    "Not 100% sure, but 08:00.",
    "I'm not sure, though it's 9.50.",
    "Not certain, maybe 350.00.",
    "I'm not sure, probably Eastgate.",
)


def test_the_fresh_phrasings_are_new_and_at_least_thirty() -> None:
    assert len(set(FRESH_PHRASINGS)) == len(FRESH_PHRASINGS) >= 30
    assert not set(FRESH_PHRASINGS) & set(ABSTENTION_EXAMPLES + UNLISTED_VARIANTS)


@pytest.mark.parametrize("text", FRESH_PHRASINGS + REDIRECTS)
def test_fresh_phrasings_and_an_abstention_with_a_redirect_abstain(text: str) -> None:
    assert AbstentionRules().match(text) is not None
    item = GradingItem("u", "Is there Wi-Fi on trams?", (), "not covered by the corpus", answerable=False)
    assert DeterministicGrader().grade(item, text).outcome == "abstained"


@pytest.mark.parametrize("text", HEDGED_ANSWERS)
def test_a_short_hedge_and_then_an_answer_is_no_abstention(text: str) -> None:
    assert AbstentionRules().match(text) is None


def test_a_hedged_right_answer_passes_and_a_hedged_guess_to_a_no_answer_question_is_under_abstention() -> None:
    grader = DeterministicGrader()
    answerable = GradingItem("a", "What does a day ticket cost?", (), "7.80", answerable=True)
    unanswerable = GradingItem("u", "How much is a taxi licence?", (), "not covered by the corpus", answerable=False)
    assert grader.grade(answerable, "I'm not certain, but it costs 7.80.").outcome == "pass"
    assert grader.grade(unanswerable, "Not certain, maybe 350.00.").outcome == "missed_abstention"
    assert AbstentionRules().identity == "abstention/v12(default;max_words=50)"
    assert "reference=facts/v11(" in grader.identity


@pytest.mark.slow  # an answers run over the transit sample
def test_an_answers_run_counts_under_abstention_apart_in_json_and_table(tmp_path: Path) -> None:
    """A model that answers everything: the five questions no document answers are
    under-abstentions, in the aggregates, the run's JSON and the table (and still failures)."""

    def run(*extra: str) -> Any:
        with chat_server(default=lambda body: answer("Yes, it costs 7.80.")) as server:
            args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical"]
            args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
            args += ["--model-option", "model=answerer", "--store", str(tmp_path / "s.duckdb")]
            args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra]
            return CliRunner().invoke(main, args)

    result = run("--format", "json")
    assert result.exit_code == 0, result.output
    answers = json.loads(result.stdout)["answers"]
    overall = answers["aggregates"]["overall"]
    assert (overall["under_abstentions"], overall["over_abstentions"]) == (5, 0)
    assert overall["failed"] >= 5 and answers["run"]["under_abstentions"] == 5
    missed = {p["id"] for p in answers["prompts"] if p["outcome"] == "missed_abstention"}
    assert missed == {"q-077", "q-078", "q-079", "q-080", "q-081"}
    table = run()
    assert table.exit_code == 0, table.output
    assert "Under-abstained (answered a question no document answers; counted in failed): 5" in table.output
    lines = table.output.splitlines()
    start = len(lines) - lines[::-1].index("Overall:")
    header, row = lines[start].split(), lines[start + 2].split()
    assert header[-3:] == ["over-abstained", "under-abstained", "unstable"] and row[-3:] == ["0", "5", "0"]
