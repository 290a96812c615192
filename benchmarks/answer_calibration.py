"""Answer graders against a labelled calibration set (issue 42).

The set, ``benchmarks/answer_calibration.yaml``, holds (question, reference, answer, correct?,
case class) cases over the bundled transit sample (``goldeneval/sample/transit/golden.yaml``):
each reference is a question's ``answer_gist``, and each answer is one a RAG system might give.
It is written here, from the templates and hand-written answers below, by
``--write-set``; a person reads it, it is committed, and the benchmark reads the file.

Case classes (and their label):

* correct: ``concise`` (the gist without its parenthesised note), ``sentence`` (the gist in a
  full sentence, framed as a chat model frames it), ``paraphrase`` (hand-written: the facts
  in other words), ``chat-style`` (hand-written: as a chat model answers, with a preamble,
  markdown, citation markers and caveats), ``abstained`` (a phrasing that abstains, on a
  question no document answers);
* incorrect: ``wrong-number`` (the gist with its first number, time or date changed),
  ``swapped-entity`` (a place, line, office or person swapped for another of the corpus),
  ``negation`` (hand-written: the gist's yes or no turned round), ``partial`` (hand-written: one of two
  things the question asks left out), ``regurgitation`` (the question and the expected
  document pasted), ``over-abstention`` (an abstention on an answerable question),
  ``missed-abstention`` (a made-up answer to a question no document answers).

The 48 pairs of the semantic grader's labelled sample (``semantic-transit-v1``, written for
issue 24 before this grader) join the set with their labels: its paraphrases, concise answers
and regurgitations as those classes, its wrong answers as ``contradiction``, its off-topic
answers as ``off-topic`` (both incorrect); ``source`` says where a case comes from.

Each grader (the default ``deterministic``; ``token-f1``, the SQuAD token F1 of the previous
default at 0.5; and ``semantic`` when the ``dense`` extra is installed) grades every case as
the answers flow does — abstention first, with answerability from the golden set — and its
verdict "passes" is compared with the label "correct": accuracy, and the precision and recall
of "correct", overall and per case class.

    .venv/bin/python -m benchmarks.answer_calibration [--graders deterministic,token-f1] [--json out.json]
    .venv/bin/python -m benchmarks.answer_calibration --write-set     # rewrite the set from this module

The ``answer_calibration`` section of ``benchmarks.run`` runs the same and writes its table to
``RESULTS.md``.  Target (issue 42): the default grader at least 0.95 accuracy, no class below
0.9; ``tests/test_answers_calibration.py`` asserts it.

**Held out** (``benchmarks/answer_calibration_heldout.yaml``): cases written by hand, not by
this module, before the grader was changed for them (round 3 of issue 42: sentence-initial
names, yes/no polarity, units and number formats, fresh abstention phrasings, redirects and
hedges; ``source`` names the theme).  They are measured apart, with the accuracy the grader
had on them before (:data:`HELDOUT_BEFORE`); target 0.95.

**Review rounds** (``benchmarks/answer_calibration_review4.yaml`` to ``..._review11.yaml``): cases
independent reviewers wrote, each round's copied in before the grader was changed for it, each
measured apart with the figure the grader had on it before.  :data:`HELDOUT_SETS` is the one table
of these sets (the held-out set first): its path, before figure, heading and ``--<key>`` option;
the section, the rendering and the command line loop over it.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

__all__ = [
    "CALIBRATION_SET",
    "HELDOUT_SET",
    "HELDOUT_SETS",
    "REVIEW4_SET",
    "REVIEW5_SET",
    "REVIEW6_SET",
    "REVIEW7_SET",
    "REVIEW8_SET",
    "REVIEW9_SET",
    "REVIEW10_SET",
    "REVIEW11_SET",
    "TARGET_ACCURACY",
    "TARGET_CLASS_ACCURACY",
    "Case",
    "HeldOutSet",
    "build_cases",
    "evaluate",
    "load_cases",
    "render_answer_calibration",
    "section_answer_calibration",
]

_HERE = Path(__file__).resolve().parent
CALIBRATION_SET = _HERE / "answer_calibration.yaml"
HELDOUT_SET = _HERE / "answer_calibration_heldout.yaml"
REVIEW4_SET = _HERE / "answer_calibration_review4.yaml"
REVIEW5_SET = _HERE / "answer_calibration_review5.yaml"
REVIEW6_SET = _HERE / "answer_calibration_review6.yaml"
REVIEW7_SET = _HERE / "answer_calibration_review7.yaml"
REVIEW8_SET = _HERE / "answer_calibration_review8.yaml"
REVIEW9_SET = _HERE / "answer_calibration_review9.yaml"
REVIEW10_SET = _HERE / "answer_calibration_review10.yaml"
REVIEW11_SET = _HERE / "answer_calibration_review11.yaml"


@dataclass(frozen=True)
class HeldOutSet:
    """One set of cases measured apart from the calibration set, with the figure it had before."""

    key: str
    """The section's key, the option ``<key>_set`` and the flag ``--<key>``."""
    path: Path
    before: dict[str, Any]
    """The default grader's agreement with the cases when they were copied in, before the changes
    they led to: grader identity, commit, cases graded right of all, and right per theme."""
    title: str
    what: str
    """What the cases are, as the rendered heading says it."""
    flag_help: str


_HELDOUT_WHAT = (
    "cases written by hand before the grader was changed for them: sentence-initial names, yes/no polarity, units "
    "and number formats, fresh abstention phrasings, redirects and hedges"
)

HELDOUT_SETS: tuple[HeldOutSet, ...] = (
    HeldOutSet(
        "heldout",
        HELDOUT_SET,
        {
            "grader": "deterministic/v3(facts/v2; abstention/v3)",
            "commit": "d6f904a",
            "right": 35,
            "cases": 83,
            "by_theme": {"abstention": 14, "names": 10, "polarity": 4, "units": 7},
        },
        "Held out",
        _HELDOUT_WHAT,
        "the held-out cases (YAML)",
    ),
    HeldOutSet(
        "review4",
        REVIEW4_SET,
        {
            "grader": "deterministic/v3(facts/v3; abstention/v4)",
            "commit": "0056785",
            "right": 96,
            "cases": 119,
            "by_theme": {
                "para": 20,
                "wrong": 18,
                "yesno": 14,
                "hedge": 3,
                "abst": 20,
                "missab": 5,
                "nonabst": 6,
                "overab": 2,
                "multi": 8,
            },
        },
        "Review 4",
        "cases an independent reviewer wrote, copied in before the grader was changed for them: paraphrases, "
        "wrong facts, polarity, hedges, abstentions, multi-sentence references; round 4 was then tuned on them, "
        "so the after figure is no held-out measure",
        "the review4 held-out cases (YAML)",
    ),
    HeldOutSet(
        "review5",
        REVIEW5_SET,
        {
            "grader": "deterministic/v4(facts/v4; abstention/v5)",
            "commit": "8b51248",
            "right": 78,
            "cases": 107,
            "by_theme": {
                "para": 8,
                "wrongnum": 10,
                "wrongname": 10,
                "polarity": 9,
                "hedge": 8,
                "abstain": 10,
                "hedgeok": 9,
                "multi": 8,
                "probe": 6,
            },
        },
        "Review 5",
        "cases an independent reviewer wrote (80, plus 27 probe pairs), copied in before the grader was changed "
        "for them: paraphrases, wrong numbers and names, polarity, hedges, abstentions, multi-sentence references; "
        "round 5 was then tuned on them, so the after figure is no held-out measure",
        "the review5 held-out cases (YAML)",
    ),
    # Review 6: the reviewer, who also counts an over-abstention graded as a plain failure as a
    # miss, measured 255 of 298 (0.856); by verdict 258 of 298 (0.866).
    HeldOutSet(
        "review6",
        REVIEW6_SET,
        {
            "grader": "deterministic/v5(facts/v5; abstention/v6)",
            "commit": "c6cd318",
            "right": 258,
            "cases": 298,
            "by_theme": {
                "abst": 44,
                "hedge": 6,
                "missab": 12,
                "multi": 19,
                "neg": 17,
                "negok": 11,
                "nofact": 8,
                "nonabst": 5,
                "overab": 11,
                "para": 73,
                "regurg": 4,
                "swap": 13,
                "wrong": 35,
            },
        },
        "Review 6",
        "cases an independent reviewer wrote (244 blind, 54 after a first run), copied in before the grader was "
        "changed for them: paraphrases, wrong facts, swapped names and roles, polarity, references without facts, "
        "hedges, abstentions, multi-sentence references; round 6 was then tuned on them, so the after figure is "
        "no held-out measure",
        "the review6 held-out cases (YAML)",
    ),
    # Review 7 (all written before a blind run): by verdict 185 of 200 (0.925); the reviewer, who
    # also counts an over-abstention graded as a plain failure as a miss, measured 184 of 200.
    HeldOutSet(
        "review7",
        REVIEW7_SET,
        {
            "grader": "deterministic/v6(facts/v6; abstention/v7)",
            "commit": "c511f27",
            "right": 185,
            "cases": 200,
            "by_theme": {
                "abst": 22,
                "hedge": 5,
                "missab": 6,
                "neg": 6,
                "nonabst": 2,
                "overab": 6,
                "para": 77,
                "partial": 8,
                "regurg": 6,
                "swap": 10,
                "wrong": 24,
                "yesno": 13,
            },
        },
        "Review 7",
        "cases an independent reviewer wrote, all before a blind first run, copied in before the grader was "
        "changed for them: paraphrases, yes/no, wrong values and periods, swapped names, polarity, partial "
        "answers, regurgitation, hedges, abstentions; round 7 was then tuned on them, so the after figure is no "
        "held-out measure",
        "the review7 held-out cases (YAML)",
    ),
    # Review 8 (all written before a blind run): 198 of 211 (0.938), by verdict and outcome alike.
    HeldOutSet(
        "review8",
        REVIEW8_SET,
        {
            "grader": "deterministic/v7(facts/v7; abstention/v8)",
            "commit": "b227d4b",
            "right": 198,
            "cases": 211,
            "by_theme": {
                "abst": 28,
                "hedge": 6,
                "missab": 9,
                "multi": 7,
                "neg": 12,
                "nonabst": 5,
                "overab": 8,
                "para": 57,
                "partial": 10,
                "regurg": 6,
                "short": 7,
                "wrong": 32,
                "yesno": 11,
            },
        },
        "Review 8",
        "cases an independent reviewer wrote, all before a blind first run, copied in before the grader was "
        "changed for them: paraphrases, yes/no, multi-fact references, wrong values and names, polarity, "
        "partial answers, regurgitation, hedges, abstentions; round 8 was then tuned on them, so the after "
        "figure is no held-out measure",
        "the review8 held-out cases (YAML)",
    ),
    # Review 9 (all written before a blind run): 193 of 207 (0.932), by verdict and outcome alike.
    HeldOutSet(
        "review9",
        REVIEW9_SET,
        {
            "grader": "deterministic/v8(facts/v8; abstention/v9)",
            "commit": "bf82f2f",
            "right": 193,
            "cases": 207,
            "by_theme": {
                "abst": 23,
                "missab": 10,
                "multi": 14,
                "nonabst": 10,
                "overab": 10,
                "para": 48,
                "partial": 11,
                "regurg": 10,
                "wrong": 42,
                "yesno": 15,
            },
        },
        "Review 9",
        "cases an independent reviewer wrote, all before a blind first run, copied in before the grader was "
        "changed for them: paraphrases, yes/no, multi-fact references, wrong values and names, partial answers, "
        "regurgitation, caveats, abstentions; round 9 was then tuned on them, so the after figure is no held-out "
        "measure",
        "the review9 held-out cases (YAML)",
    ),
    # Review 10 (all written before a blind run): 159 of 178 (0.893), by verdict and outcome alike.
    HeldOutSet(
        "review10",
        REVIEW10_SET,
        {
            "grader": "deterministic/v9(facts/v9; abstention/v10)",
            "commit": "6112276",
            "right": 159,
            "cases": 178,
            "by_theme": {
                "abst": 21,
                "missab": 10,
                "multi": 11,
                "nonabst": 8,
                "overab": 10,
                "para": 36,
                "partial": 8,
                "regurg": 8,
                "wrong": 33,
                "yesno": 14,
            },
        },
        "Review 10",
        "cases an independent reviewer wrote, all before a blind first run, copied in before the grader was "
        "changed for them: paraphrases in new domains, yes/no, multi-fact references, wrong values, names and "
        "codes, partial lists, regurgitation, caveats, abstentions; round 10 was then tuned on them, so the after "
        "figure is no held-out measure",
        "the review10 held-out cases (YAML)",
    ),
    # Review 11 (all written before a blind run): 148 of 150 (0.987), by verdict and outcome alike.
    HeldOutSet(
        "review11",
        REVIEW11_SET,
        {
            "grader": "deterministic/v10(facts/v10; abstention/v11)",
            "commit": "e26b509",
            "right": 148,
            "cases": 150,
            "by_theme": {
                "abst": 18,
                "missab": 8,
                "multi": 12,
                "nonabst": 6,
                "overab": 8,
                "para": 38,
                "partial": 10,
                "regurg": 6,
                "wrong": 30,
                "yesno": 12,
            },
        },
        "Review 11",
        "cases an independent reviewer wrote, all before a blind first run, copied in before the grader was "
        "changed for them: paraphrases, yes/no, multi-fact references, wrong values, units and currencies, "
        "partial lists, regurgitation, caveats, abstentions; round 11 was then tuned on them, so the after "
        "figure is no held-out measure",
        "the review11 held-out cases (YAML)",
    ),
)
"""The sets measured apart, in the order the section holds and renders them."""
HELDOUT_BEFORE: dict[str, Any] = HELDOUT_SETS[0].before
"""The default grader's agreement with the held-out cases when they were written, before the
changes they test (measured at that commit with this module)."""
TARGET_ACCURACY = 0.95
TARGET_CLASS_ACCURACY = 0.9
CORRECT_CLASSES = ("concise", "sentence", "paraphrase", "chat-style", "abstained")
CLASSES = (
    *CORRECT_CLASSES,
    "wrong-number",
    "swapped-entity",
    "negation",
    "contradiction",
    "off-topic",
    "partial",
    "regurgitation",
    "over-abstention",
    "missed-abstention",
)

# --- hand-written answers ---------------------------------------------------------------------

PARAPHRASES: dict[str, tuple[str, ...]] = {
    "q-001": ("Under the current 2026 fares a day ticket covering zones A and B costs 7.80.",),
    "q-002": ("Yes, a day ticket stays valid until 4 am the following morning, so 03:30 is fine.",),
    "q-003": ("Under the 2025 tariff the A+B+C day ticket was 9.80.",),
    "q-004": ("On Saturdays the first F1 ferry leaves Harbour Front at 8 am.",),
    "q-005": ("The first weekday boat leaves Harbour Front at 06:10.",),
    "q-006": ("A Zone South resident permit for your first car costs 95.00 a year.",),
    "q-007": ("The permit for a second car in the north zone costs 180.00 per year.",),
    "q-008": ("The last N2 night bus leaves Central Station at 4:45 a.m.",),
    "q-009": ("Westfield Park and Ride has 420 spaces.",),
    "q-010": ("Yes: Eastgate Park and Ride has 12 charging points, charged at 0.39 per kWh on top of parking.",),
    "q-011": ("You get a travel voucher worth 50% of what you paid for the ticket.",),
    "q-012": ("Yes. You can claim a voucher worth 50% of the ticket price, within 30 days.",),
    "q-013": ("Yes, you can leave the car at Eastgate Park and Ride or at Westfield Park and Ride.",),
    "q-014": ("You receive a travel voucher worth 1.50.",),
    "q-015": (
        "Yes: for a delay of 20 minutes or more you get 1.50 as a voucher or credit, if you claim within 14 days.",
    ),
    "q-016": (
        "Yes. For an illness of 21 consecutive days or more you get 1/30 of the monthly price back for each day, "
        "if you send a medical certificate.",
    ),
    "q-018": ("They stay at the Pier 1 Ferry Office for seven days and then go to the central Lost Property Office.",),
    "q-020": ("It costs 1.50 for each crossing, or you can use a Bike Day Ticket.",),
    "q-021": ("Unfortunately not: wheelchairs wider than 80 centimetres cannot board the ferry.",),
    "q-022": ("Between Central Station and Westfield from 4 to 19 April 2026, with E2 buses every six minutes.",),
    "q-023": ("A full day of filming costs 450.00, plus a mandatory safety escort charged at 65.00 an hour.",),
    "q-025": ("Yes, you need a busking permit, which costs 25.00 per quarter.",),
    "q-026": ("Students get 35 percent off the Monthly Pass.",),
    "q-028": ("No. On weekdays the Senior Pass can only be used from nine in the morning.",),
    "q-030": ("You need to book at least 24 hours ahead.",),
    "q-032": (
        "Yes, under the Late Night Guarantee HMT pays for a taxi up to 40.00 when the next connection is at least "
        "60 minutes later.",
    ),
    "q-033": ("You can go to the Harbourside Transport Ombudsman within eight weeks of HMT's final answer.",),
    "q-034": ("It costs 45.00 per bay per day plus a 20.00 admin fee, and you must apply 10 working days ahead.",),
    "q-035": ("Every half hour between 00:30 and 04:30.",),
    "q-036": ("Yes. Fishermen's Bay lies in zone C, the outermost ring.", "Fishermen's Bay is in zone C."),
    "q-038": ("A 7-Day Ticket for all three zones costs 41.00.",),
    "q-039": ("Monday to Friday 8 am to 6 pm, and Saturday 9 am to 1 pm.",),
    "q-041": ("School bus S3 leaves Hollow Creek at 7:15 in the morning.",),
    "q-042": ("On Boxing Day the Sunday timetable applies.",),
    "q-043": ("Tram T3 takes 27 minutes from Harbour Front to University Campus.",),
    "q-044": ("The Monthly Pass for zones A and B is 89.00.",),
    "q-045": ("The first X1 leaves Central Station at 4:30 am.",),
    "q-047": ("The Managing Director is Dr Helena Marsh.",),
    "q-049": ("You can reach the data protection officer at dpo@hmt-harbourside.example.",),
    "q-053": ("Call HMT Customer Service on 0800 468 2000.",),
    "q-055": ("Travelling without a valid ticket costs a penalty fare of 60.00.",),
    "q-056": ("No. If you show your pass within 14 days, the penalty is reduced to 7.00.",),
    "q-058": ("Yes, cats travel free on the bus as long as they are in a closed carrier.",),
    "q-059": ("A replacement photo ID costs 10.00.",),
    "q-061": ("You are charged the maximum fare, 4.80, and can have it corrected within seven days.",),
    "q-064": ("You have to apply by 31 May.",),
    "q-065": ("The 48-hour Visitor Card costs 22.00.",),
    "q-067": ("The extension opens on Monday, 7 September 2026.",),
    "q-068": ("No, the F2 ferry is suspended from 1 November 2026 until 28 February 2027; take bus 61 instead.",),
    "q-069": ("You can exchange it at the Customer Centre until June 30, 2026.",),
    "q-070": ("A single ticket on the Airport Express costs 9.50.",),
    "q-071": ("It is open Monday to Friday from 9 am to 5 pm.",),
    "q-073": ("No, assistance dogs ride free of charge.",),
    "q-074": ("No. E-scooters are not allowed on trams, even folded.",),
    "q-075": ("Bus drivers have not accepted cash since January 1, 2026.",),
    "q-076": (
        "Yes, folding bikes travel free on city buses as long as they are folded.",
        "Folding bikes ride free on city buses when folded.",
    ),
    "q-060": ("No. If your phone dies, it counts as travelling without a valid ticket.",),
    "q-031": ("No, not if her disability card carries the letter B: then you travel free as her companion.",),
    "q-062": ("Yes, contactless fares are capped at the Day Ticket price for the zones you travel in.",),
}
"""Correct answers in other words, written for issue 42's calibration set."""

CHAT_STYLE: dict[str, str] = {
    "q-001": "Based on the provided documents, a Day Ticket for zones A and B costs **€7.80** under the 2026 "
    "tariff [1]. Note that an older, archived page lists 7.20, but that price is no longer valid.",
    "q-002": "Yes! Your day ticket remains valid until 04:00 the following morning [1], so a ride home at "
    "3:30 am is covered.",
    "q-004": "According to the weekend timetable, the first F1 ferry departs from Harbour Front at 08:00 on "
    "Saturdays [1].",
    "q-006": "The resident parking permit for Zone South costs 95.00 per year for the first vehicle.",
    "q-008": "The last departure of night bus N2 from Central Station is at 04:45 [2].",
    "q-009": "Park and Ride Westfield offers a total of 420 parking spaces.",
    "q-011": "If your ferry arrives 30 minutes late, you are entitled to 50% of your single ticket price, "
    "paid as a travel voucher.",
    "q-014": "With a single ticket and a metro delay of at least 20 minutes, you get a travel voucher worth 1.50 EUR.",
    "q-020": "Yes - bikes on the ferry cost 1.50 per crossing. Alternatively, a Bike Day Ticket is also "
    "valid on the ferry.",
    "q-021": "Unfortunately, no. The maximum wheelchair width on HMT ferries is 80 cm, and your chair is 85 cm wide.",
    "q-026": "Students receive a 35% discount on the Monthly Pass.",
    "q-028": "No. On weekdays, the Senior Pass is only valid from 09:00 onwards.",
    "q-030": "Travel assistance must be booked at least 24 hours in advance.",
    "q-033": "You can contact the Harbourside Transport Ombudsman. You must do so within 8 weeks of "
    "receiving HMT's final answer to your complaint.",
    "q-036": "Yes, Fishermen's Bay is located in zone C, which is the outermost fare zone.",
    "q-038": "A 7-Day Ticket covering zones A+B+C costs 41.00.",
    "q-041": "School bus S3 departs from Hollow Creek at 07:15 in the morning.",
    "q-042": "On Boxing Day, services run according to the Sunday timetable.",
    "q-043": "Tram T3 takes approximately 27 minutes from Harbour Front to University Campus.",
    "q-044": "The Monthly Pass for zones A+B costs 89.00 [1].",
    "q-045": "The first Airport Express (X1) leaves Central Station at 04:30.",
    "q-047": "The Managing Director of Harbourside Metropolitan Transit is **Dr Helena Marsh**.",
    "q-049": "The data protection officer can be reached at dpo@hmt-harbourside.example.",
    "q-053": "You can call HMT Customer Service at 0800 468 2000.",
    "q-055": "The penalty fare for travelling without a valid ticket is 60.00.",
    "q-058": "Yes, you can! Small pets such as kittens travel free of charge, provided they are kept in a "
    "closed carrier.",
    "q-065": "The 48-hour Harbourside Visitor Card costs 22.00 [3].",
    "q-070": "A single ticket on the Airport Express costs 9.50.",
    "q-073": "No, assistance dogs such as seeing-eye dogs travel free of charge.",
    "q-075": "Bus drivers stopped accepting cash payments on 1 January 2026.",
}
"""Correct answers as a chat model writes them: a preamble, markdown, citation markers, a caveat."""

PARTIALS: dict[str, tuple[str, ...]] = {
    "q-018": ("Lost property from ferries is kept at the Pier 1 Ferry Office.",),
    "q-019": ("You collect it at the Pier 1 waiting hall.",),
    "q-022": ("The section between Central Station and Westfield is closed.",),
    "q-023": ("A full filming day costs 450.00.",),
    "q-033": ("You can turn to the Harbourside Transport Ombudsman.",),
    "q-034": ("It costs 45.00 per bay per day.",),
    "q-035": ("Night bus N1 leaves Central Station every 30 minutes from 00:30.",),
    "q-039": ("The Northgate Travel Shop is open Monday to Friday, 08:00 to 18:00.",),
    "q-040": ("Old Market and Castle Hill have no step-free access.",),
    "q-048": ("Contact the press office at press@hmt-harbourside.example.",),
    "q-054": ("Harbourside City Council oversees HMT.",),
    "q-061": ("You are charged the maximum fare of 4.80.",),
    "q-063": ("HMT confirms receipt within 5 working days.",),
    "q-066": ("Yes, the 72-hour Visitor Card costs 29.00.",),
    "q-068": ("No, the F2 ferry is suspended in winter; take bus 61 instead.",),
    "q-010": ("Yes, Eastgate Park and Ride has charging points for electric cars.",),
    "q-037": ("The last M1 train leaves at 00:40.",),
    "q-012": ("Yes, you get a voucher.",),
    "q-015": ("Yes, you can claim compensation for the delay.",),
    "q-020": ("Yes, there is a supplement for bikes on the ferry.",),
}
"""Answers that leave out something the question asks (incorrect)."""

NEGATIONS: dict[str, tuple[str, ...]] = {
    "q-002": ("No, the day ticket runs out at midnight, so it won't cover a 03:30 trip.",),
    "q-012": ("No, ferry compensation only starts at a delay of 60 minutes.",),
    "q-015": ("No, there is no compensation for metro delays.",),
    "q-016": ("No, monthly passes cannot be refunded because of illness.",),
    "q-017": ("No, season ticket money is not returned for illness.",),
    "q-021": ("Yes, it will fit: the ferry ramps take any wheelchair.",),
    "q-025": ("No, busking in the underground is free and needs no permit.",),
    "q-028": (
        "Yes, the Senior Pass is valid all day on weekdays, including before 09:00.",
        "The Senior Pass can be used at any time on weekdays.",
    ),
    "q-029": ("Yes, your Senior Pass is valid on the 8 o'clock train.",),
    "q-031": ("Yes, you need to buy your own ticket.",),
    "q-036": ("No, Fishermen's Bay is not in zone C.",),
    "q-056": ("Yes, you have to pay the full penalty fare.",),
    "q-058": ("No, pets are not allowed on buses.", "Pets are not allowed on buses."),
    "q-060": ("Yes, the ticket you bought on your phone still counts.",),
    "q-062": ("No, there is no daily cap on contactless payments.",),
    "q-068": ("Yes, the F2 ferry runs all year round.",),
    "q-073": ("Yes, an assistance dog needs a child single ticket.", "Assistance dogs need a child single ticket."),
    "q-074": ("Yes, folded e-scooters are allowed on the tram.", "E-scooters may be taken on trams when folded."),
    "q-076": ("No, bikes are not allowed on city buses.", "Bikes cannot be taken on city buses."),
}
"""Answers with the yes/no of the gist turned round (incorrect), with or without an opening yes or no."""

SENTENCE_FRAMES = (
    "According to the documents: {gist}.",
    "Based on the context, the answer is: {gist}.",
    "Here is what I found — {gist}.",
    "{gist}. I hope this helps!",
)

ENTITY_SWAPS: tuple[tuple[str, str], ...] = (
    ("Eastgate", "Westfield"),
    ("Westfield", "Eastgate"),
    ("Harbour Front", "Lighthouse Island"),
    ("Central Station", "Harbour Front"),
    ("Pier 1", "Pier 3"),
    ("Zone South", "Zone North"),
    ("zone C", "zone B"),
    ("Fishermen's Bay", "Lighthouse Island"),
    ("Helena Marsh", "Helen March"),
    ("Harbourside Transport Ombudsman", "Harbourside City Council"),
    ("Harbourside City Council", "Harbourside Transport Ombudsman"),
    ("Sunday", "Saturday"),
    ("Mon-Fri", "Sat-Sun"),
    ("Old Market", "Market Square"),
    ("Senior Pass", "Student Pass"),
    ("Monthly Pass", "Annual Pass"),
    ("Visitor Card", "Group Day Ticket"),
    ("Customer Centre", "Lost Property Office"),
    ("Late Night Guarantee", "Delay Guarantee"),
    ("F2", "F1"),
    ("dpo@", "press@"),
    ("press@", "info@"),
    ("E2", "E5"),
    ("M1", "M3"),
    ("Day Ticket", "Short Hop"),
    ("Park and Ride", "Central Station"),
)
"""An entity of a gist and the other entity of the corpus an answer might put in its place."""

OVER_ABSTENTIONS = (
    "I don't know.",
    "The documents do not say.",
    "I could not find that in the provided documents.",
    "There is no information about this in the context.",
    "That is not mentioned in the passages.",
    "Sorry, I am unable to answer from the given documents.",
)
ABSTENTIONS = (
    *OVER_ABSTENTIONS,
    "The context does not contain that information.",
    "Nothing in the documents addresses this.",
    "I'm not sure; the sources don't cover it.",
    "The retrieved passages don't mention this at all.",
)
MISSED_ABSTENTIONS: dict[str, tuple[str, ...]] = {
    "q-077": ("Yes, all trams have free Wi-Fi; the password is HMT2026.", "Yes, Wi-Fi is free and needs no password."),
    "q-078": ("A taxi licence costs 350.00 a year.", "It costs 120.00, paid at the City Council."),
    "q-079": ("Yes, rental e-bikes are available at every metro station.", "Yes, at Central Station for 2.00."),
    "q-080": ("Yes, kayaks travel free on the cable car.", "No, kayaks are not allowed on the cable car."),
    "q-081": ("Yes, the water taxi leaves Harbour Front every 20 minutes.", "Yes, route W1 runs hourly."),
}
"""Made-up answers to questions no document answers (incorrect: the system should abstain)."""

_PAREN = re.compile(r"\s*\([^()]*\)")
_TIME = re.compile(r"\b(\d{2}):(\d{2})\b")
_NUMBER = re.compile(r"(?<![\w.:/])(\d+)(?:\.(\d+))?(?![\w:])")
_DATE_DAY = re.compile(r"\b(\d{1,2})(?=\s+(?:January|February|March|April|May|June|July|August|September|October|"
                       r"November|December|Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\b)")  # fmt: skip


@dataclass(frozen=True)
class Case:
    id: str
    question_id: str
    question: str
    reference: str
    answer: str
    correct: bool
    case_class: str
    answerable: bool
    source: str
    """``issue-42`` (written for this set) or ``semantic-transit-v1`` (the semantic grader's
    labelled sample of issue 24, written before the fact-aware grader)."""


def _transit() -> list[dict[str, Any]]:
    from goldeneval.sample import __file__ as sample_init

    path = Path(sample_init).parent / "transit" / "golden.yaml"
    questions: list[dict[str, Any]] = yaml.safe_load(path.read_text(encoding="utf-8"))["questions"]
    return questions


def _document(doc_id: str) -> str:
    from goldeneval.sample import __file__ as sample_init

    return (Path(sample_init).parent / "transit" / "corpus" / f"{doc_id}.md").read_text(encoding="utf-8")


def _wrong_value(gist: str) -> str | None:
    """The gist with its first time, date or number changed (None when it has none)."""
    time = _TIME.search(gist)
    day = _DATE_DAY.search(gist)
    number = _NUMBER.search(gist)
    first = min((m for m in (time, day, number) if m is not None), key=lambda m: m.start(), default=None)
    if first is None:
        return None
    if first is time:
        hour = (int(time.group(1)) + 1) % 24
        return gist[: time.start()] + f"{hour:02d}:{time.group(2)}" + gist[time.end() :]
    if first is day:
        value = int(day.group(1))
        return gist[: day.start()] + str(value + 2 if value < 27 else value - 2) + gist[day.end() :]
    whole, fraction = first.group(1), first.group(2)
    if fraction is not None:
        changed = f"{int(whole) + 1}.{fraction}"
    elif len(whole) == 4 and whole.startswith("20"):
        changed = str(int(whole) + 1)
    else:
        changed = str(int(whole) + (2 if int(whole) < 5 else int(whole) // 2 + 1))
    return gist[: first.start()] + changed + gist[first.end() :]


def _swapped(gist: str) -> str | None:
    for old, new in ENTITY_SWAPS:
        if old in gist:
            return gist.replace(old, new, 1)
    return None


def build_cases() -> list[Case]:
    """The calibration set, from the bundled transit sample and this module's answers."""
    cases: list[Case] = []

    def add(question: dict[str, Any], answer: str, correct: bool, case_class: str, source: str = "issue-42") -> None:
        number = sum(1 for c in cases if c.question_id == question["id"]) + 1
        cases.append(
            Case(
                id=f"{question['id']}-{number:02d}",
                question_id=question["id"],
                question=question["text"],
                reference=question["answer_gist"],
                answer=answer,
                correct=correct,
                case_class=case_class,
                answerable=bool(question["expected"]),
                source=source,
            )
        )

    for position, question in enumerate(_transit()):
        gist = question["answer_gist"]
        if not question["expected"]:
            for text in ABSTENTIONS[position % 2 :: 1][:8]:
                add(question, text, True, "abstained")
            for text in MISSED_ABSTENTIONS[question["id"]]:
                add(question, text, False, "missed-abstention")
            continue
        plain = _PAREN.sub("", gist).strip()
        add(question, plain, True, "concise")
        add(question, SENTENCE_FRAMES[position % len(SENTENCE_FRAMES)].format(gist=plain.rstrip(".")), True, "sentence")
        for text in PARAPHRASES.get(question["id"], ()):
            add(question, text, True, "paraphrase")
        if question["id"] in CHAT_STYLE:
            add(question, CHAT_STYLE[question["id"]], True, "chat-style")
        wrong = _wrong_value(plain)
        if wrong is not None and wrong != plain:
            add(question, wrong, False, "wrong-number")
        swapped = _swapped(plain)
        if swapped is not None:
            add(question, swapped, False, "swapped-entity")
        for text in NEGATIONS.get(question["id"], ()):
            add(question, text, False, "negation")
        for text in PARTIALS.get(question["id"], ()):
            add(question, text, False, "partial")
        if position % 2 == 0:
            pasted = f"{question['text']}\n\n{_document(question['expected'][0])}"
            add(question, pasted, False, "regurgitation")
        if position % 3 == 0:
            add(question, OVER_ABSTENTIONS[position % len(OVER_ABSTENTIONS)], False, "over-abstention")
    _add_semantic_sample(add)
    return cases


SEMANTIC_KINDS = {
    "paraphrase": "paraphrase",
    "concise": "concise",
    "wrong": "contradiction",
    "off-topic": "off-topic",
    "regurgitated": "regurgitation",
}
"""The semantic sample's kinds as classes of this set."""


def _add_semantic_sample(add: Callable[..., None]) -> None:
    """The semantic grader's labelled sample (issue 24), its references mapped to their questions."""
    from goldeneval.prompts.semantic import load_calibration_sample

    by_gist = {q["answer_gist"]: q for q in _transit()}
    for pair in load_calibration_sample().pairs:
        add(by_gist[pair.reference], pair.answer, pair.correct, SEMANTIC_KINDS[pair.kind], "semantic-transit-v1")


def write_set(path: Path = CALIBRATION_SET) -> int:
    cases = build_cases()
    header = (
        "# The answer-grader calibration set of issue 42, written by benchmarks/answer_calibration.py\n"
        "# (--write-set) from the bundled transit sample's gists and that module's answers: each case is\n"
        "# a question, its reference (the answer_gist), an answer, whether a careful reader accepts the\n"
        "# answer as correct, and its case class.  Read by `python -m benchmarks.answer_calibration`.\n"
    )
    body = {"id": "answer-calibration-transit-v1", "cases": [vars(c) for c in cases]}
    path.write_text(header + yaml.safe_dump(body, sort_keys=False, allow_unicode=True, width=110), encoding="utf-8")
    return len(cases)


def load_cases(path: Path = CALIBRATION_SET) -> list[Case]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    fields = set(Case.__dataclass_fields__)
    cases: list[Case] = []
    for number, raw in enumerate(document.get("cases") or [], start=1):
        if not isinstance(raw, dict) or set(raw) != fields:
            raise ValueError(f"{path}: case #{number} must have exactly the fields {', '.join(sorted(fields))}")
        case = Case(**raw)
        if case.case_class not in CLASSES or case.correct != (case.case_class in CORRECT_CLASSES):
            raise ValueError(f"{path}: case {case.id}: class {case.case_class!r} does not fit correct={case.correct}")
        cases.append(case)
    return cases


# --- grading and measuring --------------------------------------------------------------------

Verdict = Callable[[Case], bool]


def _graders(names: Sequence[str]) -> dict[str, Verdict]:
    from goldeneval.prompts.abstention import AbstentionRules
    from goldeneval.prompts.assertions import token_f1
    from goldeneval.prompts.graders import DeterministicGrader, Grading, GradingItem, grade_assertions_or_reference

    def item(case: Case) -> GradingItem:
        return GradingItem(case.id, case.question, (), case.reference, answerable=case.answerable)

    def passes(grader: Any) -> Verdict:
        return lambda case: grader.grade(item(case), case.answer).passed is True

    def f1(answer: str, reference: str) -> Grading:
        score = token_f1(answer, reference)
        return Grading(passed=score >= 0.5, score=score)

    def token_f1_passes(case: Case) -> bool:
        return grade_assertions_or_reference(AbstentionRules(), item(case), case.answer, f1).passed is True

    graders: dict[str, Verdict] = {}
    for name in names:
        if name == "deterministic":
            graders[name] = passes(DeterministicGrader())
        elif name == "token-f1":
            graders[name] = token_f1_passes
        elif name == "semantic":
            from goldeneval.answers.semantic import build
            from goldeneval.prompts.grader_plugins import GraderContext

            graders[name] = passes(build(GraderContext(grader_id="semantic")))
        else:
            raise ValueError(f"unknown grader {name!r} (known: deterministic, token-f1, semantic)")
    return graders


def _scores(pairs: Sequence[tuple[bool, bool]]) -> dict[str, Any]:
    """Accuracy, and precision and recall of "correct", of (label, verdict) pairs."""
    right = sum(1 for label, verdict in pairs if label == verdict)
    passed = [label for label, verdict in pairs if verdict]
    correct = [verdict for label, verdict in pairs if label]
    return {
        "cases": len(pairs),
        "right": right,
        "accuracy": right / len(pairs) if pairs else None,
        "precision": sum(passed) / len(passed) if passed else None,
        "recall": sum(correct) / len(correct) if correct else None,
    }


def evaluate(cases: Sequence[Case], grader_names: Sequence[str]) -> dict[str, Any]:
    """Each grader's agreement with the labels: overall and per case class, and its misses."""
    results: dict[str, Any] = {}
    for name, verdict in _graders(grader_names).items():
        graded = [(case, verdict(case)) for case in cases]
        by_class = {
            case_class: _scores([(c.correct, v) for c, v in graded if c.case_class == case_class])
            for case_class in CLASSES
            if any(c.case_class == case_class for c in cases)
        }
        by_source = {
            source: _scores([(c.correct, v) for c, v in graded if c.source == source])
            for source in sorted({c.source for c in cases})
        }
        results[name] = {
            "overall": _scores([(c.correct, v) for c, v in graded]),
            "by_class": by_class,
            "by_source": by_source,
            "misses": [c.id for c, v in graded if v != c.correct],
        }
    return results


def _available_graders() -> list[str]:
    names = ["deterministic", "token-f1"]
    try:
        import sentence_transformers  # noqa: F401
    except ImportError:
        return names
    return [*names, "semantic"]


def section_answer_calibration(options: dict[str, Any], work: Path) -> dict[str, Any]:
    cases = load_cases(Path(options.get("calibration_set") or CALIBRATION_SET))
    names = options.get("calibration_graders") or _available_graders()
    section: dict[str, Any] = {
        "set": CALIBRATION_SET.name,
        "cases": len(cases),
        "classes": {cls: sum(1 for c in cases if c.case_class == cls) for cls in CLASSES},
        "graders": evaluate(cases, names),
    }
    for held in HELDOUT_SETS:
        held_cases = load_cases(Path(options.get(f"{held.key}_set") or held.path))
        section[held.key] = {
            "set": held.path.name,
            "cases": len(held_cases),
            "before": held.before,
            "graders": evaluate(held_cases, names),
        }
    return section


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_answer_calibration(section: dict[str, Any]) -> list[str]:
    graders = section["graders"]
    names = list(graders)
    lines = [
        f"Each grader against `benchmarks/{section['set']}` ({section['cases']} labelled cases over the transit "
        'sample\'s gists; `benchmarks/answer_calibration.py`): accuracy, and precision / recall of "correct". '
        f"Target (issue 42): `deterministic` at least {TARGET_ACCURACY} overall and {TARGET_CLASS_ACCURACY} in "
        "every class. `token-f1` is the previous default (SQuAD token F1 >= 0.5).",
        "",
        "| grader | cases | accuracy | precision | recall | target met |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name in names:
        overall = graders[name]["overall"]
        met = "-"
        if name == "deterministic":
            worst = min(s["accuracy"] for s in graders[name]["by_class"].values())
            met = "yes" if overall["accuracy"] >= TARGET_ACCURACY and worst >= TARGET_CLASS_ACCURACY else "no"
        lines.append(
            f"| {name} | {overall['cases']} | {_fmt(overall['accuracy'])} | {_fmt(overall['precision'])} "
            f"| {_fmt(overall['recall'])} | {met} |"
        )
    lines += [
        "",
        'Accuracy per case class (correct classes first; precision / recall of "correct" are in `results.json`):',
        "",
        "| class | label | cases | " + " | ".join(names) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in names) + " |",
    ]
    for case_class, count in section["classes"].items():
        if not count:
            continue
        label = "correct" if case_class in CORRECT_CLASSES else "incorrect"
        cells = " | ".join(_fmt(graders[n]["by_class"][case_class]["accuracy"]) for n in names)
        lines.append(f"| {case_class} | {label} | {count} | {cells} |")
    sources = sorted({source for g in graders.values() for source in g.get("by_source", {})})
    if sources:
        lines += [
            "",
            "By source: `issue-42` cases were written with the fact-aware grader; `semantic-transit-v1` (48 pairs "
            "of issue 24, written before it) shows how the graders fare on answers written independently of them.",
            "",
            "| source | cases | " + " | ".join(names) + " |",
            "| --- | --- | " + " | ".join("---" for _ in names) + " |",
        ]
        for source in sources:
            cells = " | ".join(_fmt(graders[n]["by_source"][source]["accuracy"]) for n in names)
            lines.append(f"| {source} | {graders[names[0]]['by_source'][source]['cases']} | {cells} |")
    misses = graders.get("deterministic", {}).get("misses", [])
    lines += ["", f"`deterministic` misses ({len(misses)}): " + (", ".join(misses) if misses else "none") + "."]
    for held in HELDOUT_SETS:
        if held.key in section:
            lines += _render_heldout(section[held.key], held.title, held.what)
    return lines


def _render_heldout(heldout: dict[str, Any], title: str = "Held out", what: str = _HELDOUT_WHAT) -> list[str]:
    graders = heldout["graders"]
    names = list(graders)
    before = heldout["before"]
    lines = [
        "",
        f"**{title}** (`benchmarks/{heldout['set']}`, {heldout['cases']} {what}). "
        f"Target: `deterministic` at least {TARGET_ACCURACY}. Before the changes "
        f"(`{before['grader']}`, commit `{before['commit']}`) it graded {before['right']} of {before['cases']} right "
        f"({before['right'] / before['cases']:.3f}).",
        "",
        "| theme | cases | deterministic before | " + " | ".join(names) + " |",
        "| --- | --- | --- | " + " | ".join("---" for _ in names) + " |",
    ]
    overall = " | ".join(_fmt(graders[n]["overall"]["accuracy"]) for n in names)
    lines.append(f"| all | {heldout['cases']} | {_fmt(before['right'] / before['cases'])} | {overall} |")
    for source in graders[names[0]]["by_source"]:
        theme, count = source.split("/")[-1], graders[names[0]]["by_source"][source]["cases"]
        then = before["by_theme"].get(theme)
        cells = " | ".join(_fmt(graders[n]["by_source"][source]["accuracy"]) for n in names)
        lines.append(f"| {theme} | {count} | {_fmt(None if then is None else then / count)} | {cells} |")
    misses = graders.get("deterministic", {}).get("misses", [])
    lines += [
        "",
        f"`deterministic` {'held-out' if title == 'Held out' else title.lower()} misses ({len(misses)}): "
        + (", ".join(misses) or "none")
        + ".",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.answer_calibration", description=__doc__.split("\n")[0])
    parser.add_argument("--graders", help="comma-separated: deterministic, token-f1, semantic (default: available)")
    parser.add_argument("--set", type=Path, default=CALIBRATION_SET, help="the calibration set (YAML)")
    for held in HELDOUT_SETS:
        parser.add_argument(f"--{held.key}", type=Path, default=held.path, help=held.flag_help)
    parser.add_argument("--json", type=Path, help="write the numbers here too")
    parser.add_argument("--write-set", action="store_true", help="rewrite the set from this module, then measure")
    args = parser.parse_args(argv)
    if args.write_set:
        print(f"wrote {write_set(args.set)} cases to {args.set}")
    options = {
        "calibration_set": args.set,
        **{f"{held.key}_set": getattr(args, held.key) for held in HELDOUT_SETS},
        "calibration_graders": args.graders.split(",") if args.graders else None,
    }
    section = section_answer_calibration(options, Path("."))
    if args.json:
        args.json.write_text(json.dumps(section, indent=2), encoding="utf-8")
    print("\n".join(render_answer_calibration(section)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
