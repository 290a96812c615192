"""The decision: does an answer state the reference's facts, and only those, without hedging?

Token overlap alone could not be trusted (swapped prices scored 1.000, a yes-to-no flip
scored higher than the right answer), so the reference's facts decide: every one must be in the
answer, equal; a paste of the context fails; where the reference has no facts, token F1 of the
answer's best-matching sentences decides (docs/guide/answers.md, "Reference grading: the facts
decide", rules 1 to 5).  The readers it uses live in the sibling modules; this module only
combines them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.prompts.assertions import normalise_answer, token_f1
from goldeneval.prompts.facts.entities import acronyms, answer_entity_keys, foreign_names, named_by_part
from goldeneval.prompts.facts.equality import same_value
from goldeneval.prompts.facts.extraction import extract_facts
from goldeneval.prompts.facts.hedges import offered_alternative
from goldeneval.prompts.facts.model import Fact, values_of
from goldeneval.prompts.facts.overlap import (
    MIN_ANSWER_SHARE,
    MIN_BEYOND_RECALL,
    MIN_RECALL,
    reference_overlap,
    rival_compound,
)
from goldeneval.prompts.facts.polarity import answer_polarity, dropped_condition, flipped_clause
from goldeneval.prompts.facts.roles import swapped_roles
from goldeneval.prompts.facts.text import NOTE, SENTENCES, fold, prepare, stem
from goldeneval.prompts.facts.values import EVERY, value_facts

__all__ = [
    "FACTS_VERSION",
    "MAX_ANSWER_WORDS",
    "MIN_EXTRA_VALUES",
    "FactGrade",
    "best_sentence_f1",
    "grade_reference",
]

FACTS_VERSION = "facts/v11"
"""The rules' version, part of the grader's identity: a change of verdicts bumps it, so runs
graded before and after compare as a mismatch."""
MAX_ANSWER_WORDS = 100
"""An answer longer than this is a paste of the context, not an answer."""
MIN_EXTRA_VALUES = 3
"""An answer may state this many values the reference lacks (or as many as the reference has)."""
MAX_FRAGMENT_WORDS = 3
"""A reference of at most this many words whose only facts are possible names ("Business
casual.") also needs the best sentence's token F1: a capitalised opening word proves little."""


@dataclass(frozen=True)
class FactGrade:
    """How an answer fares against a reference: the verdict, a score in [0, 1] and why."""

    passed: bool
    score: float
    reason: str
    missing: tuple[str, ...] = ()


def _rival(fact: Fact, got: list[Fact], wanted: list[Fact]) -> bool:
    """Whether the answer states a value of the fact's kind (and, for a number, dimension) that
    no reference fact has: "109 hours" where the reference says "72 hours"."""
    return any(
        g.kind == fact.kind
        and (g.kind != "number" or g.key[1] == fact.key[1])
        and not any(same_value(w, g) for w in wanted)
        for g in got
    )


def matched_values(wanted: list[Fact], got: list[Fact], asked: list[Fact]) -> set[tuple[object, ...]]:
    """The reference's values (by :attr:`~.model.Fact.identity`) that the answer states, each
    by a value of its own (round 9): "aged 6 to 12 ... every 6 hours" needs two sixes in the
    answer, "8 passengers and 8 suitcases" two eights; a value written twice in the reference
    ("08:00 ... 08:00") is one fact.  A maximum matching of reference values to answer values,
    the values the question states (which the answer need not repeat) matched last."""
    distinct = list({f.identity: f for f in wanted if f.kind in ("number", "time", "date")}.values())
    distinct.sort(key=lambda f: any(same_value(f, q) for q in asked))
    candidates = [[j for j, g in enumerate(got) if same_value(f, g)] for f in distinct]
    counting = [
        [j for j in js if distinct[i].counted and got[j].counted == distinct[i].counted]
        for i, js in enumerate(candidates)
    ]
    owner: dict[int, int] = {}

    def assign(i: int, edges: list[list[int]], seen: set[int]) -> bool:
        for j in edges[i]:
            if j not in seen:
                seen.add(j)
                if j not in owner or assign(owner[j], edges, seen):
                    owner[j] = i
                    return True
        return False

    for edges in (counting, candidates):  # a value counting the same thing first ("8 suitcases")
        for i in range(len(distinct)):
            if i not in owner.values():
                assign(i, edges, set())
    return {distinct[i].identity for i in owner.values()}


def _years(facts: Iterable[Fact]) -> set[object]:
    """The years that facts state: bare years and the years of dates."""
    return {f.key[0] for f in facts if f.kind == "year"} | {
        f.key[2] for f in facts if f.kind == "date" and f.key[2] is not None
    }


def _restates(answer: str, question: str) -> bool:
    """Whether a sentence of the answer is the question word for word (an echo of the prompt)."""
    asked = normalise_answer(question).split()
    return any(normalise_answer(s).split() == asked for s in SENTENCES.split(answer) if s.strip()) and bool(asked)


def _initials(fact: Fact) -> str:
    """The acronym of a name of several words ("Chief Financial Officer": "cfo")."""
    return "".join(str(key)[0] for key in fact.key)


def best_sentence_f1(answer: str, reference: str) -> float:
    """SQuAD token F1 against the reference of the answer's best-matching run of sentences, of
    at most as many sentences as the reference has: one sentence for a one-sentence reference
    (pasting the context never pays), and an answer that restates a several-sentence
    reference whole is measured whole; diacritics folded (:func:`~.text.fold`) on both sides."""
    answer, reference = fold(answer), fold(reference)
    sentences = [s for s in SENTENCES.split(answer) if s.strip()] or [answer]
    width = min(len(sentences), max(1, len([s for s in SENTENCES.split(reference) if s.strip()])))
    runs = (" ".join(sentences[i : i + w]) for w in range(1, width + 1) for i in range(len(sentences) - w + 1))
    return max(token_f1(run, reference) for run in runs)


def _sentence_holds(answer: str, reference: str) -> bool:
    """Whether one sentence of the answer holds every content word of a short reference (round 8):
    "Business casual." is held by "The dress code is business casual for all staff.", "Frankfurt
    (eu-central-1)." by "EU data is stored in eu-central-1, which is Frankfurt."."""
    answer, reference = fold(answer), fold(reference)
    wanted = {stem(t) for t in normalise_answer(NOTE.sub("", reference)).split() if t not in ENGLISH_STOPWORDS}
    if not wanted:
        return False
    return any(
        wanted <= {stem(t) for t in normalise_answer(sentence).split()}
        for sentence in SENTENCES.split(answer)
        if sentence.strip()
    )


def grade_reference(answer: str, reference: str, pass_threshold: float, question: str = "") -> FactGrade:
    """Grade ``answer`` to ``question`` against ``reference`` by the rules of the answers guide."""
    words = len(answer.split())
    if words > MAX_ANSWER_WORDS:
        return FactGrade(False, 0.0, f"not an answer: {words} words (over {MAX_ANSWER_WORDS}), a paste of the context")
    if question and _restates(answer, question):
        return FactGrade(False, 0.0, "not an answer: it restates the question, an echo of the prompt")
    question_text = prepare(question) if question else ""
    asked_values = value_facts(question_text) if question else []
    asked_years = _years(asked_values)
    wanted = [f for f in extract_facts(reference) if f.kind != "year" or f.key[0] not in asked_years]
    if not wanted:
        score = best_sentence_f1(answer, reference)
        flipped = flipped_clause(reference, answer, question) or dropped_condition(reference, answer)
        if flipped is not None:
            return FactGrade(False, 0.0, f"it says the opposite of the reference: negation {flipped!r}")
        swapped = swapped_roles(reference, answer)
        if swapped is not None:
            return FactGrade(False, 0.0, f"it swaps the reference's roles: {swapped[0]!r} and {swapped[1]!r}")
        overlap = reference_overlap(answer, reference, question)
        if overlap.missing_items:
            return FactGrade(
                False,
                min(score, overlap.recall),
                f"no facts in the reference; its list's items missing: {'; '.join(overlap.missing_items)}",
                overlap.missing_items,
            )
        rival = rival_compound(answer, reference)
        if rival is not None:
            return FactGrade(False, 0.0, f"it states {rival!r} in place of the reference's compound")
        if not overlap.beyond_recall:  # round 11: the question's words are no evidence
            return FactGrade(
                False,
                0.0,
                "no facts in the reference: the best-matching sentences hold none of its words beyond the question's",
            )
        if (
            overlap.recall >= MIN_RECALL
            and overlap.share_of_answer >= MIN_ANSWER_SHARE
            and overlap.beyond_recall >= MIN_BEYOND_RECALL
        ):
            return FactGrade(
                True,
                max(score, overlap.recall),
                f"no facts in the reference: the best-matching sentences hold {overlap.recall:.0%} of its words",
            )
        return FactGrade(
            score >= pass_threshold,
            score,
            f"no facts in the reference: token F1 {score:.3f} of the best-matching sentences "
            f"(and {overlap.recall:.0%} of its words)",
        )
    prepared = prepare(answer)
    got = value_facts(prepared)
    entity_keys = answer_entity_keys(prepared) | acronyms(prepared)
    asked = answer_entity_keys(prepare(question)) if question else set()
    missing: list[str] = []
    reference_years = _years(extract_facts(reference))
    answer_years = _years(got)
    stated = matched_values(wanted, got, asked_values)
    for fact in wanted:
        if fact.kind == "year":  # a wrong year fails; an answer that names no other year may leave it out
            ok = fact.key[0] in answer_years or not answer_years - reference_years - asked_years
        elif fact.kind == "frequency":  # "once a day" is met by "daily" unless another count is given
            ok = any(same_value(fact, other) for other in got) or (
                fact.key[0] == 1
                and EVERY[str(fact.key[1])].search(prepared) is not None
                and not any(other.kind == "frequency" and other.key[1] == fact.key[1] for other in got)
            )
        elif fact.kind == "polarity":
            ok = answer_polarity(answer, question, str(fact.key[0])) == fact.key[0]
        elif fact.kind == "entity":
            ok = all(key in entity_keys for key in fact.key) or all(key in asked for key in fact.key)
            ok = ok or (len(fact.key) >= 2 and _initials(fact) in answer_entity_keys(prepared))
            ok = ok or named_by_part(fact, prepared, answer_entity_keys(prepare(reference)) | asked)
            if not ok and fact.initial:
                ok = not foreign_names(prepared, answer_entity_keys(prepare(reference)) | asked)
        else:  # a value the question states need not be repeated, unless the answer gives another
            ok = fact.identity in stated or (
                any(same_value(fact, q) for q in asked_values) and not _rival(fact, got, wanted)
            )
        if not ok:
            missing.append(fact.describe())
    if not missing and not any(f.kind == "polarity" for f in wanted):
        flipped = flipped_clause(reference, answer, question) or dropped_condition(reference, answer)
        if flipped is not None:
            missing.append(f"negation {flipped!r}")
    if not missing:
        swapped = swapped_roles(reference, answer)
        if swapped is not None:
            missing.append(f"roles swapped: {swapped[0]!r} and {swapped[1]!r}")
    score = (len(wanted) - len(missing)) / len(wanted)
    wanted_values = values_of(wanted)
    extra = [f for f in values_of(got) if not any(same_value(w, f) for w in wanted_values)]
    allowed = max(MIN_EXTRA_VALUES, len(wanted_values))
    if len(extra) > allowed:
        return FactGrade(
            False,
            0.0,
            f"not an answer: it states {len(extra)} values the reference does not (over {allowed}), "
            "a paste of the context",
            tuple(missing),
        )
    hedged = offered_alternative(answer, reference, wanted_values)
    if hedged and not missing:
        return FactGrade(
            False,
            0.5,
            f"it offers {hedged.text!r} as well as the reference's value: an answer that hedges between values "
            "does not state the fact",
            (hedged.describe(),),
        )
    if missing:
        return FactGrade(
            False,
            score,
            f"{len(missing)} of {len(wanted)} reference facts missing or wrong: {'; '.join(missing)}",
            tuple(missing),
        )
    short = len(reference.split()) <= MAX_FRAGMENT_WORDS  # "Business casual.": a possible name alone is no proof
    if short and all(f.initial and not all(k in asked for k in f.key) for f in wanted):
        f1 = best_sentence_f1(answer, reference)
        if f1 < pass_threshold and not _sentence_holds(answer, reference):
            return FactGrade(
                False,
                f1,
                f"the reference's only facts are possible names ({', '.join(f.text for f in wanted)}): "
                f"token F1 {f1:.3f} of the best-matching sentences",
            )
    return FactGrade(True, 1.0, f"all {len(wanted)} reference facts stated ({', '.join(f.text for f in wanted)})")
