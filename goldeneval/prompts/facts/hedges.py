"""Hedges: an answer that offers another value or name beside the reference's.

An answer that says "7.80 or 7.20" contains the right value, so a rule that only asks whether
the reference's facts are present would pass it; a reader cannot act on it.  An answer that
offers an alternative of the same kind, a range around the value or "A or B" of names does not
state the fact (docs/guide/answers.md, "Reference grading: the facts decide", rule 3 and
rounds 4 and 5).
"""

from __future__ import annotations

import re
from itertools import pairwise

from goldeneval.prompts.facts.entities import answer_entity_keys, entity_key, opening_word
from goldeneval.prompts.facts.equality import same_value
from goldeneval.prompts.facts.model import Fact, values_of
from goldeneval.prompts.facts.text import SENTENCES, prepare
from goldeneval.prompts.facts.values import value_facts
from goldeneval.prompts.facts.vocabulary import UNIT

__all__ = ["offered_alternative"]

_ALTERNATIVE = re.compile(r"\b(?:or|either|maybe|perhaps|possibly)\b", re.IGNORECASE)
_RANGE_GAP = re.compile(r"\s*(?:-|\u2013|\u2014|to|and)\s*", re.IGNORECASE)
_BOUND = re.compile(
    r"\b(?:under|up\s+to|at\s+(?:most|least)|over|(?:more|less|fewer)\s+than|below|above|max(?:imum)?|min(?:imum)?"
    r"|until|between|from)\b",
    re.IGNORECASE,
)
"""A reference that bounds its value ("Children under 6") is met by a range ("aged 0 to 6")."""
_BETWEEN = re.compile(r"\b(?:between|from)\s+$", re.IGNORECASE)
_ENTITY_OR = re.compile(
    r"\b(?P<a>[A-Z][\w'\u2019-]*)\s*,?\s+or\s+(?:the\s+|on\s+|at\s+|in\s+|a\s+|an\s+)?(?P<b>[A-Z][\w'\u2019-]*)"
)
_OR_CURRENCY = re.compile(r"(?P<cur>[€£$])(?P<a>\d[\d.,]*)\s+or\s+(?P<b>\d[\d.,]*)(?![\d:])")
_OR_UNIT = re.compile(
    r"(?<![\d.,:€£$])(?P<a>\d[\d.,]*)\s+or\s+(?P<b>\d[\d.,]*)(?P<unit>\s*(?:working\s+|business\s+)?(?:"
    + UNIT
    + r"))(?![a-z])",
    re.IGNORECASE,
)


def offered_alternative(answer: str, reference: str, wanted_values: list[Fact]) -> Fact | None:
    """The value or name the answer offers beside the reference's: an alternative value
    (:func:`_hedged`), the other end of a range (:func:`_ranged`, unless the reference bounds
    its value), or an alternative name (:func:`_entity_hedge`); None when the answer commits."""
    ranged = None if _BOUND.search(reference) else _ranged(prepare(answer), wanted_values)
    return _hedged(answer, wanted_values) or ranged or _entity_hedge(answer, reference)


def _ranged(answer: str, wanted: list[Fact]) -> Fact | None:
    """A number the answer gives as the other end of a range around the reference's number
    ("between 300 and 320 metres", "30-35%") when the reference states no such range."""
    values = [f for f in value_facts(answer) if f.kind == "number"]
    cursor, spans = 0, []
    for fact in values:
        start = answer.find(fact.text, cursor)
        if start < 0:
            return None
        spans.append((start, start + len(fact.text), fact))
        cursor = start + len(fact.text)
    for (_, end, first), (start, _, second) in pairwise(spans):
        gap = answer[end:start]
        if not _RANGE_GAP.fullmatch(gap):
            continue
        if gap.strip().lower() == "and" and not _BETWEEN.search(answer[: end - len(first.text)]):
            continue  # "€5 and 10 minutes": two values, not a range
        hits = [any(same_value(w, f) for w in wanted) for f in (first, second)]
        if hits == [True, False]:
            return second
        if hits == [False, True]:
            return first
    return None


def _entity_hedge(answer: str, reference: str) -> Fact | None:
    """A name the answer offers as an alternative to a name of the reference ("the CFO or the
    CEO", "Saturday or Sunday") that the reference does not name."""
    known = answer_entity_keys(prepare(reference))
    for match in _ENTITY_OR.finditer(prepare(answer)):
        first, second = (entity_key(match.group(g)) for g in ("a", "b"))
        if first is None or second is None or opening_word(match.group("a").lower()):
            continue
        if (first in known) != (second in known):
            other = match.group("b") if first in known else match.group("a")
            return Fact("entity", other, (second if first in known else first,))
    return None


_BARE_RIVAL = re.compile(
    r"\b(?P<guess>or|maybe|perhaps|possibly)\s+(?P<b>\d[\d.,]*?)(?=\s*(?:[.!?;,)]|$))", re.IGNORECASE
)
_UNIT_VALUE = re.compile(
    r"(?<![\d.,:\u20ac\u00a3$])\d[\d.,]*(?P<unit>\s*(?:working\s+|business\s+)?(?:" + UNIT + r"))(?![a-z])",
    re.IGNORECASE,
)


def _bare_rival(match: re.Match[str]) -> str:
    """ "probably 24 months, maybe 36": a bare number offered after "or", "maybe", "perhaps" or
    "possibly" takes the unit of the last value before it that has one (round 8)."""
    before = list(_UNIT_VALUE.finditer(match.string[: match.start()]))
    if not before:
        return match.group(0)
    return f"{match['guess']} {match['b']}{before[-1]['unit']}"


def _shared_unit(sentence: str) -> str:
    """Two values joined by "or" share the unit or currency written once: "3 or 5 working days"
    reads "3 working days or 5 working days", "£10 or 12" reads "£10 or £12"; a bare number
    offered at the end of a clause ("24 months, maybe 36") shares the unit before it."""
    sentence = _OR_CURRENCY.sub(lambda m: f"{m['cur']}{m['a']} or {m['cur']}{m['b']}", sentence)
    sentence = _OR_UNIT.sub(lambda m: f"{m['a']}{m['unit']} or {m['b']}{m['unit']}", sentence)
    return _BARE_RIVAL.sub(_bare_rival, sentence)


_GUESS = re.compile(r"\b(?:maybe|perhaps|possibly)\b", re.IGNORECASE)


def _guessed_rate(sentence: str, matched: Fact, got: Fact) -> bool:
    """A guessed rival with a period attached ("£120 or possibly £150 a year", round 7): in a
    sentence that guesses ("maybe", "perhaps", "possibly"), a value in the same currency whose
    unit is the matched value's per some period is a rival too."""
    dimension, currency = matched.key[1], matched.key[2]
    return (
        _GUESS.search(sentence) is not None
        and got.key[2] == currency
        and str(got.key[1] or "").startswith(f"{dimension or 'count'}/")
    )


def _hedged(answer: str, wanted: list[Fact]) -> Fact | None:
    """A value the answer offers as an alternative to a value of the reference: in a sentence
    that says "or" (or "either"), another value of the same kind and, for a number, the same
    unit and currency, beside the one the reference has ("7.80 or 7.20", "08:00 or 08:30";
    not "2.40 euros, or 24.00 for a ten-trip card"); None when the answer commits to its values."""
    for sentence in SENTENCES.split(answer):
        if not _ALTERNATIVE.search(sentence):
            continue
        prepared = _shared_unit(prepare(sentence))
        values = values_of(value_facts(prepared))
        for fact in wanted:
            matched = next((got for got in values if same_value(fact, got)), None)
            if matched is None:
                continue
            for got in values:
                alike = got.kind == matched.kind and (
                    got.kind != "number" or got.key[1:3] == matched.key[1:3] or _guessed_rate(sentence, matched, got)
                )
                if alike and not any(same_value(w, got) for w in wanted):
                    return got
    return None
