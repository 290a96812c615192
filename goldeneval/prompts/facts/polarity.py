"""Yes and no: a reference's opening Yes or No, negation, and the clauses that say no.

A flipped answer ("No, dogs are not allowed" to "Yes, dogs ride free") keeps nearly every word
of the right one, so token overlap scored it higher than the right answer.  What an answer
says is read clause by clause, from the clauses about the question; a reference clause that
says no (or yes) is a fact the answer's clause on the same thing must share
(docs/guide/answers.md, "Reference grading: the facts decide", rule 3 and rounds 4 and 5).
"""

from __future__ import annotations

import re

from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.prompts.assertions import normalise_answer
from goldeneval.prompts.facts.entities import answer_entity_keys, entity_facts
from goldeneval.prompts.facts.model import Fact
from goldeneval.prompts.facts.text import NOTE, prepare, stem
from goldeneval.prompts.facts.vocabulary import CURRENCIES, LEAD_FILLER, NO, NUMBER_WORDS, UNITS, YES

__all__ = ["answer_polarity", "dropped_condition", "flipped_clause", "reference_polarity"]

_NEGATION = re.compile(r"\b(?:no|not|never|none|nor|neither|cannot|nothing)\b|n['\u2019]t\b", re.IGNORECASE)
"""Words that negate a statement: an answer without an opening yes or no says no when the
clause about the question has one (:func:`answer_polarity`)."""
_PROHIBITION = re.compile(
    r"(?<!\ba )(?<!\ban )(?<!\bthe )"
    r"\b(?:banned|prohibited|forbidden|barred|disallowed|illegal|outlawed|closed|shut|suspended|cancelled|canceled"
    r"|discontinued|unavailable|invalid|expired|refused|rejected|excluded|impossible|withdrawn|avoided)\b",
    re.IGNORECASE,
)
"""Words that say no by themselves ("E-scooters are banned", "The office is closed on
Sundays"), unless the question asks about them ("Is the office closed on Sundays?") or they
describe a thing ("a closed carrier"); negated ("not banned") they say yes."""
_NEUTRAL_NEGATION = re.compile(
    r"\b(?:no|not)\s+(?:later|earlier|more|less|fewer|sooner)\s+than\b|\bnot\s+(?:only|just)\b"
    r"|\bno\s+(?:problem|matter|doubt)\b|\b(?:or|if)\s+not\b|\bwhether\s+or\s+not\b"
    r"|(?:\bno(?:\s+[\w-]+){0,2}?|(?:\b(?:not|never)\b|n['\u2019]t\b)(?:\s+be)?)\s+(?:exceed(?:s|ing)?|go\s+(?:over|above|beyond)"
    r"|above|below|under|over|beyond|[a-z]+er\s+than|more\s+than|less\s+than|fewer\s+than)\s+(?=[\u00a3$\u20ac]?\d)",
    re.IGNORECASE,
)
"""Negation words that negate nothing asked: "no later than 31 May", "folded or not", and a
limit on a value (round 8): "must not exceed 8 kg", "no heavier than 8 kg", "no band below 6.0",
"must not be over 55 cm": "no" and at most two words, or "not" (and "be"), then a comparison and
a number; "Dogs are not allowed over 10 kg" still says no."""
_FREE = re.compile(
    r"\bfree(?:\s+of\s+(?:charge|cost))?\b|\bcomplimentary\b|\bgratis\b"
    r"|\bno\s+(?:extra\s+|additional\s+)?(?:charge|fee|cost|fare|payment)s?\b"
    r"|\b(?:at|without)\s+(?:no\s+)?(?:extra\s+|additional\s+)?(?:charge|cost)\b|\bcosts?\s+nothing\b"
    r"|\bnothing\s+to\s+pay\b|\b(?:does|do|did)\s*(?:not|n['\u2019]t)\s+(?:cost\s+anything|(?:have\s+|need\s+)?(?:to\s+)?pay)\b"
    r"|\bnot\s+charged\b",
    re.IGNORECASE,
)
"""Saying that something costs nothing: "no charge", "free of charge", "at no extra cost", "at no
charge", "without charge", "costs nothing", and (round 9) "complimentary", "gratis"."""
_NO_OBLIGATION = re.compile(
    r"\b(?:does|do|did)\s*(?:not|n['\u2019]t)\s+(?:have|need)\s+to\s+pay\b|\bneed\s*(?:not|n['\u2019]t)\s+pay\b"
    r"|\bnot\s+(?:required|obliged)\s+to\s+pay\b",
    re.IGNORECASE,
)
"""An obligation to pay negated ("You don't have to pay", "needn't pay"): a no to "must pay"
whatever the question asks (round 7); a condition ("if you don't pay") is no such no."""
_PAY_QUESTION = re.compile(r"\b(?:pay|paid|charged?|charges|costs?|fees?|fares?|tickets?|price|supplement|buy)\b", re.I)
_FREE_QUESTION = re.compile(r"\bfree\b|\bcomplimentary\b|\bgratis\b", re.IGNORECASE)
_CHARGED = re.compile(r"\b(?:pay|pays|paid|charged?|charges|costs?|fees?|fares?|price|supplement)\b", re.I)
_CLAUSES = re.compile(
    r"[.;:!?]\s+|\n+|,\s*|\s+[\u2013\u2014]\s+|\s+\b(?:but|however|although|though|whereas)\b", re.IGNORECASE
)
"""Where a clause ends: a stop, a comma, a dash between words (round 8: "up to 8 kg \u2014 checked
bags aren't included" is two clauses), "but", "however"."""
_RESTRICTION = re.compile(r"\b(?:only|without|except|unless)\b", re.IGNORECASE)
"""Words that also answer a no ("Only from 09:00 on weekdays"), but do not turn a yes into a no."""
_POLARITY_WORDS = frozenset(
    {"not", "no", "longer", "never", "closed", "open", "opened", "outside", "during", "inside", "within", "non",
     "only", "also", "too", "still", "anymore", "shut"}
)  # fmt: skip
"""Words that say how a clause holds, not what it is about."""
_OUTSIDE = re.compile(
    r"\boutside\b(?!\s*(?:$|[^\w\s]|(?:once|when|whenever|after|before|until|till|as|if|and|or|but|so|then|in|on|at"
    r"|for|from|to|during|now|today|overnight|again|first)\b))|\bnon-(?=[a-z])",
    re.IGNORECASE,
)
"""Beyond :data:`_NEGATION` and :data:`_PROHIBITION`, words that say a clause holds in the
negative: "outside peak hours", "non-refundable"; "outside" as a place with no noun after it
("Move the seedlings outside once the frost has passed", round 10) says nothing negative."""


_VALUE_WORDS = frozenset(
    {stem(u) for u in UNITS} | {stem(c) for c in CURRENCIES} | set(NUMBER_WORDS) | {"one", "per", "every", "each"}
)
_NUMERAL = re.compile(r"\d[\d.,:/]*(?:st|nd|rd|th|am|pm)?")
"""The words of a bare value ("12 hours", "twelve weeks", "$0.09 per GB"): a reference clause of only these
says no yes or no (round 10: "Cats should not be fed for twelve hours" does not contradict
"12 hours")."""


_WITHOUT_ASKED = re.compile(r"\b(?P<thing>[a-z]{3,})-free\b", re.IGNORECASE)
"""A thing "-free" ("visa-free", "smoke-free") says there is none of it: a no to a question
about the thing ("Is a visa required?"), unless the question asks whether it is "-free" too (round 6)."""


def _without(match: re.Match[str], question: str) -> str:
    thing = match.group("thing")
    asked = re.search(rf"\b{re.escape(thing)}s?\b(?!-free)", question, re.IGNORECASE) is not None
    return f"no {thing}" if asked else match.group(0)


def reference_polarity(reference: str) -> Fact | None:
    """A reference that opens with Yes or No; "No later than 31 May", "No more than 2 bags" state
    a limit, not a No (:data:`_NEUTRAL_NEGATION`)."""
    words = normalise_answer(_NEUTRAL_NEGATION.sub(" ", reference)).split()
    if words and words[0] in ("yes", "no"):
        return Fact("polarity", words[0], (words[0],))
    return None


def _opening_polarity(answer: str) -> str | None:
    """The yes or no an answer opens with ("Yes, ...", "Unfortunately not: ..."), or None."""
    for word in normalise_answer(answer).split()[:4]:
        if word in LEAD_FILLER:
            continue
        if word in YES:
            return "yes"
        if word in NO:
            return "no"
        return None
    return None


def _content(text: str) -> set[str]:
    return {stem(t) for t in normalise_answer(text).split() if t not in ENGLISH_STOPWORDS and len(t) > 1}


def _clause_says_no(clause: str, question: str) -> bool:
    """Whether a clause says no to the question: a negation word, a prohibition ("banned"),
    and, on a question about paying, a statement that it is free; a negated prohibition ("not
    banned") says yes; on a question whether something is free, a charge says no."""
    clause = _NEUTRAL_NEGATION.sub(" ", clause)
    clause = _WITHOUT_ASKED.sub(lambda m: _without(m, question), clause)
    obligation = _NO_OBLIGATION.search(clause) is not None
    free = _FREE.search(clause) is not None or obligation
    rest = _NO_OBLIGATION.sub(" ", _FREE.sub(" ", clause))
    asked = {word.lower() for word in _PROHIBITION.findall(question)}
    prohibits = any(word.lower() not in asked for word in _PROHIBITION.findall(rest))
    says_no = (len(_NEGATION.findall(rest)) % 2 == 1) != prohibits
    about_free = _FREE_QUESTION.search(question) is not None
    about_paying = not about_free and _PAY_QUESTION.search(question) is not None
    if free and not about_free and (about_paying or obligation):
        return not says_no  # "There is no charge" to "Do I need a ticket?": no; "You don't have to pay": no
    if about_free and not free and _CHARGED.search(rest):
        return not says_no  # "It is charged a child fare" to "Is it free?": no
    return says_no


def answer_polarity(answer: str, question: str, reference_says: str) -> str:
    """What the answer says to a yes/no question: its opening yes or no; else no when a clause
    about the question (:func:`_about_question`) says no (:func:`_clause_says_no`), or, to a
    "No" reference, when the answer restricts ("only", "without", "except", "unless")."""
    clauses = [c for c in _CLAUSES.split(answer) if c.strip()] or [answer]
    for text in (answer, *clauses):  # "Yes, ..." or "Based on the context, the answer is: Yes, ..."
        opening = _opening_polarity(_NEUTRAL_NEGATION.sub(" ", text))
        if opening is not None:
            return opening
    about = [c for c in clauses if _about_question(c, question)] or clauses
    if any(_clause_says_no(c, question) for c in about):
        return "no"
    if reference_says == "no" and _RESTRICTION.search(answer):
        return "no"
    return "yes"


def _about_question(clause: str, question: str) -> bool:
    """A clause is about the question when it shares a content word with it and names nothing
    the question does not ("The ferry doesn't run on Sundays" is not about a question on
    Saturdays)."""
    if not question or not _content(clause) & _content(question):
        return False
    asked = answer_entity_keys(prepare(question))
    return all(all(k in asked for k in f.key) for f in entity_facts(prepare(clause)) if not f.initial)


def _says_no(clause: str, question: str) -> bool:
    return _clause_says_no(_OUTSIDE.sub(" not ", clause), question)


def flipped_clause(reference: str, answer: str, question: str) -> str | None:
    """A clause of the reference that says no ("Shipping costs are not refunded", "It is closed
    on Sundays", "outside peak hours") to which the answer's clause on the same thing (sharing
    at least half of its content words, and one at the least) says yes, or one that says yes
    ("Visitors can use the gym") to which every such clause of the answer says no ("Visitors
    cannot use the gym", "non-refundable"); None when there is none."""
    answer_clauses = [c for c in _CLAUSES.split(prepare(answer)) if c.strip()]
    for clause in (c for c in _CLAUSES.split(prepare(NOTE.sub("", reference))) if c.strip()):
        no = _says_no(clause, question)
        topic = {w for w in _content(clause) if w not in _POLARITY_WORDS}
        if not topic or (not no and topic <= _VALUE_WORDS | {w for w in topic if _NUMERAL.fullmatch(w)}):
            continue  # a bare value ("12 hours") asserts nothing a negation could contradict: its value decides
        need = max(1, (len(topic) + 1) // 2)
        scored = [(len(_content(_OUTSIDE.sub(" not ", c)) & topic), c) for c in answer_clauses]
        best = max((n for n, _ in scored), default=0)
        if best < need:
            continue
        answered = [_says_no(c, question) for n, c in scored if n == best]
        said_yes = [c for n, c in scored if n == best]
        if no and not any(answered) and _negates_too(clause, said_yes, answer_clauses, question):
            continue
        if (no and not any(answered)) or (not no and all(answered)):
            return clause.strip()
    return None


def _negates_too(clause: str, said_yes: list[str], answer_clauses: list[str], question: str) -> bool:
    """Whether the answer, in a clause of its own, also says no to what a reference clause
    negates (round 9): "never take a double dose" is met by "Take the missed dose ...; don't
    double up": a clause that says no and shares a word of what follows the reference's
    negation word that is neither the question's nor in the answer's clauses that say yes
    ("Take a double dose; do not take it with food" still says the opposite)."""
    negation = _NEGATION.search(_NEUTRAL_NEGATION.sub(" ", clause))
    if negation is None:
        return False
    negated = _content(_NEUTRAL_NEGATION.sub(" ", clause)[negation.end() :]) - _POLARITY_WORDS - _content(question)
    for affirmed in said_yes:
        negated -= _content(affirmed)
    return any(_says_no(c, question) and _content(c) & negated for c in answer_clauses)


_ONLY_WITH = re.compile(r"\bonly\s+(?:with|by|after)\s+(?P<condition>[^.;,!?]{1,60})", re.IGNORECASE)
_WITHOUT = re.compile(r"\bwithout\s+(?P<condition>[^.;,!?]{1,60})", re.IGNORECASE)


def dropped_condition(reference: str, answer: str) -> str | None:
    """A condition the reference sets ("only with their manager's approval") that the answer
    waives ("without their manager's approval", round 6): the condition's words, or None."""
    for required in _ONLY_WITH.finditer(prepare(NOTE.sub("", reference))):
        wanted = _content(required.group("condition"))
        for waived in _WITHOUT.finditer(prepare(answer)):
            if wanted and len(wanted & _content(waived.group("condition"))) * 2 >= len(wanted):
                return required.group(0).strip()
    return None
