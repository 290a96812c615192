"""Abstention as an outcome (issue 24): telling "the context does not answer this" apart.

A RAG system that says it cannot answer a question no document answers is right, and one that
says so when the documents do answer is wrong in its own way (``over_abstention``), which a
team fixes differently from a wrong answer.  Detection is deterministic and documented:

* the answer and every phrase are tokenised the same way — English contractions are
  spelled out first (``doesn't`` -> ``does not``, ``can't`` and ``cannot`` -> ``can not``,
  ``won't`` -> ``will not``, ``I'm`` -> ``i am``, ``there's`` -> ``there is``), then
  :func:`~goldeneval.prompts.assertions.normalise_answer` (the SQuAD normalisation: lower
  case, no punctuation, no articles); a clause is also read without the :data:`QUALIFIERS`
  ("provided", "given", "any", ...);
* an answer abstains when one phrase occurs in it as a run of whole tokens, and the answer
  has at most ``max_words`` tokens: a long answer that happens to contain "not covered by the
  context" is an answer with a caveat (or an echo of the prompt), and is graded as one.

Phrases are plain text, never regular expressions, so no pattern can hang grading.  The
default list is :data:`DEFAULT_ABSTENTION_PHRASES`, a phrase model of five families (issue 42,
:mod:`goldeneval.prompts.abstention_phrases`) that reads every phrasing of
:data:`ABSTENTION_EXAMPLES`; a run may replace it (:class:`AbstentionRules`), and the rules'
identity is part of the grader's identity, so a changed list makes the next comparison a
``mismatch``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from goldeneval.core.errors import InputError, one_line
from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.prompts.abstention_phrases import (
    ABSTENTION_EXAMPLES,
    DEFAULT_ABSTENTION_PHRASES,
    DOCUMENT_KINDS,
    FOLLOW_UP,
    GUESSES,
    HEDGES,
    HELPER_TAIL,
    HELPER_VERBS,
    HOLDING_VERBS,
    QUALIFIERS,
    REDIRECT_OPENERS,
    REDIRECTS,
    SAYING_VERBS,
    SCOPE_VERBS,
    SEARCH_VERBS,
    SOURCES,
    WHERE_NOUNS,
)
from goldeneval.prompts.assertions import normalise_answer

__all__ = [
    "ABSTENTION_EXAMPLES",
    "ABSTENTION_RULES_VERSION",
    "DEFAULT_ABSTENTION_PHRASES",
    "DEFAULT_MAX_ABSTENTION_WORDS",
    "QUALIFIERS",
    "AbstentionRules",
    "abstention_tokens",
]

ABSTENTION_RULES_VERSION = "abstention/v12"
MIN_CLAUSE_WORDS = 4
"""A clause of fewer words (after normalisation) is filler: it neither abstains nor answers."""
_CLAUSE_BREAK = re.compile(r"[.!?;:\n]+|,?\s+\b(?:but|however|although|though|yet|whereas)\b", re.IGNORECASE)
"""Where one clause of an answer ends and the next begins."""
_CONCESSIVE = re.compile(
    r"(?:^|(?<=[.!?\n]))(\s*(?:even\s+though|although|though|while|whereas)\b[^,.;:!?\n]*),", re.IGNORECASE
)
"""A sentence's concessive opening up to its comma ("While the context does not mention extended
warranties,"): where it abstains, the main clause after it is a clause of its own (round 11)."""
DEFAULT_MAX_ABSTENTION_WORDS = 50


_CONTRACTIONS = (
    (re.compile(r"\bcan['\u2019]t\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bcannot\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bwon['\u2019]t\b", re.IGNORECASE), "will not"),
    (re.compile(r"n['\u2019]t\b", re.IGNORECASE), " not"),
    (re.compile(r"\bi['\u2019]m\b", re.IGNORECASE), "i am"),
    (re.compile(r"['\u2019]re\b", re.IGNORECASE), " are"),
    (re.compile(r"['\u2019]ve\b", re.IGNORECASE), " have"),
    (re.compile(r"\b(there|it|that|what|here)['\u2019]s\b", re.IGNORECASE), r"\1 is"),
)


def abstention_tokens(text: str) -> list[str]:
    """The tokens an answer and a phrase are compared on: contractions spelled out, then the
    SQuAD normalisation."""
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return normalise_answer(text).split()


def _find(lookup: dict[str, str], lengths: tuple[int, ...], words: list[str]) -> str | None:
    """The configured phrase of the first run of ``words`` that is a phrase, or None."""
    for start in range(len(words)):
        for length in lengths:
            if start + length <= len(words):
                hit = lookup.get(" ".join(words[start : start + length]))
                if hit is not None:
                    return hit
    return None


@lru_cache(maxsize=32)
def _compiled(
    phrases: tuple[str, ...],
) -> tuple[tuple[str, ...], dict[str, str], tuple[int, ...], dict[str, str], tuple[int, ...]]:
    """The phrases normalised, each normalised phrase to the first configured phrase that gives
    it, and the phrase lengths in tokens; then the same for the clause read bare (:func:`_bare`:
    the phrases read bare too); a phrase with nothing left is invalid input."""
    normalised: list[str] = []
    lookup: dict[str, str] = {}
    bare: dict[str, str] = {}
    for position, phrase in enumerate(phrases, start=1):
        tokens = abstention_tokens(phrase)
        if not tokens:
            raise InputError(
                f"abstention phrase #{position} {one_line(phrase, 60)!r}: nothing is left after normalisation "
                "(lower case, no punctuation, no articles)"
            )
        normalised.append(" ".join(tokens))
        lookup.setdefault(normalised[-1], phrase)
        bare.setdefault(" ".join(_bare(tokens)) or normalised[-1], phrase)
    for key, phrase in lookup.items():
        bare.setdefault(key, phrase)
    return (
        tuple(normalised),
        lookup,
        tuple(sorted({len(n.split()) for n in lookup})),
        bare,
        tuple(sorted({len(n.split()) for n in bare})),
    )


_SOURCE_NOUNS = frozenset(n for n in SOURCES if " " not in n)
_RELATIVES = (("i", "have", "access", "to"), ("we", "have", "access", "to"), ("i", "have", "been", "given"),
              ("i", "was", "given"), ("you", "gave", "me"), ("i", "have"),
              ("i", "found"), ("i", "received"), ("i", "got"), ("i", "can", "see"), ("we", "have"))  # fmt: skip
"""What may follow a source and is read past: "the pages I have don't go into that"."""


@lru_cache(maxsize=32)
def _vocabulary(phrases: tuple[str, ...]) -> frozenset[str]:
    """Every word of the phrases: a word that names which sources is dropped only when it is none."""
    return frozenset(word for phrase in phrases for word in abstention_tokens(phrase))


def _bare(words: list[str], vocabulary: frozenset[str] | None = None) -> list[str]:
    """A clause read without :data:`QUALIFIERS`, without a relative clause after a source
    (:data:`_RELATIVES`: "the pages i have do not say" is read "pages do not say") and, given
    the phrases' ``vocabulary``, without a word that names which sources and is no word of a
    phrase ("the policy documents" is read "documents", round 6)."""
    out: list[str] = []
    position = 0
    while position < len(words):
        word = words[position]
        position += 1
        if word in QUALIFIERS:
            continue
        if (
            vocabulary is not None
            and (word not in vocabulary or word in DOCUMENT_KINDS)
            and position < len(words)
            and words[position] in _SOURCE_NOUNS
            and word not in _SOURCE_NOUNS
            and word not in ENGLISH_STOPWORDS
        ):
            continue
        out.append(word)
        if word in _SOURCE_NOUNS or word in DOCUMENT_KINDS:
            for run in _RELATIVES:
                if tuple(words[position : position + len(run)]) == run:
                    position += len(run)
                    break
    return out


_DETERMINER = r"(?:the|this|these|those|my|your|our)"
_NOUN_WORD = (
    r"(?!(?:does|do|did|is|are|was|were|has|have|not|and|or|but|that|which|of|the|a|an|in|on|for|to|about|with"
    r"|from|by|at|this|these|those|my|your|our|what|whether|any|anything)\b)[a-z][\w-]*"
)
_SAYING = "|".join(v.replace(" ", r"\s+") for v in SAYING_VERBS)
_DATUM = (
    r"(?:(?:the|a|an|any)\s+)?(?:[a-z][\w-]*\s+){0,2}?(?:time|times|date|dates|figure|figures|number|numbers|amount"
    r"|price|prices|cost|costs|fee|fees|rate|rates|details?|information|duration|deadline|deadlines|value|values"
    r"|limit|limits|hours|schedule|policy|rules?)\b"
)
"""A datum, the object of "list", "give" or "show" (round 8): "The spec sheet doesn't list the
refresh rate", "The recipe gives no marinating time" abstain like "doesn't say"; "The bus
doesn't give change" and "The policy gives no refunds" name no datum, and answer."""
_HERE = re.compile(
    r"(?:\bnot|n['\u2019]t)\s+(?P<part>covered|mentioned|addressed|listed|discussed|included|specified|stated"
    r"|described)\s+(?:in\s+)?here\b",
    re.IGNORECASE,
)
""""Not covered here" (round 8): "here" is what the model was given, read as "in the documents"."""
_GENERAL_SAYS = re.compile(
    rf"\b{_DETERMINER}\s+(?:{_NOUN_WORD}\s+){{0,3}}?{_NOUN_WORD}\s+"
    rf"(?=(?:does|do|did)\s*(?:n['\u2019]t|\s+not)\s+(?:{_SAYING})\b|(?:says|say|said|mentions|mention|mentioned)\s+nothing\b"
    rf"|(?:(?:does|do|did)\s*(?:n['\u2019]t|\s+not)\s+(?:list|give|show)|(?:gives|lists|shows)\s+no)\s+{_DATUM})",
    re.IGNORECASE,
)
_MARKED_BEFORE = re.compile(
    rf"\b{_DETERMINER}\s+(?:provided|given|supplied|attached|retrieved)\s+(?:{_NOUN_WORD}\s+){{0,3}}?{_NOUN_WORD}\b",
    re.IGNORECASE,
)
_MARKED_AFTER = re.compile(
    rf"\b{_DETERMINER}\s+(?:{_NOUN_WORD}\s+){{0,3}}?{_NOUN_WORD}\s+"
    r"(?:provided|given|supplied|i\s+have(?:\s+access\s+to)?|i\s+was\s+given|you\s+gave\s+me)"
    r"(?=\s*(?:$|[,.;:!?\u2014-]|(?:does|do|did|is|are)\b|(?:says|say|said|mentions|mention)\s+nothing\b))",
    re.IGNORECASE,
)
"""A source named by any noun phrase (round 7): "the recipe", "the recipe card", "this leaflet".
A determiner and one to four words are read as "the documents" where they are followed by a
verb of saying in the negative ("The timetable doesn't say when ...", "the listing says nothing
about ..."), or are marked as what the model was given ("the provided leaflet", "the rate sheet
provided", "the IT knowledge base articles I have"); "The policy does not cover dental work"
names no saying and no given source, and stays an answer."""


def _general_source(clause: str) -> str:
    """The clause with a source named by any noun phrase (:data:`_GENERAL_SAYS`) read as "the
    documents"."""
    clause = _HERE.sub(lambda m: f" not {m['part']} in the documents", clause)
    for pattern in (_MARKED_BEFORE, _MARKED_AFTER, _GENERAL_SAYS):
        clause = pattern.sub("the documents ", clause)
    return clause


@dataclass(frozen=True)
class AbstentionRules:
    """Which answers abstain: any of ``phrases`` (as whole tokens) in an answer of at most
    ``max_words`` tokens."""

    phrases: tuple[str, ...] = DEFAULT_ABSTENTION_PHRASES
    max_words: int = DEFAULT_MAX_ABSTENTION_WORDS

    def __post_init__(self) -> None:
        if not self.phrases:
            raise InputError("abstention phrases: give at least one phrase")
        _compiled(self.phrases)
        if not 1 <= self.max_words <= 10_000:
            raise InputError(f"abstention: max_words must be between 1 and 10000, got {self.max_words}")

    @property
    def _normalised(self) -> tuple[str, ...]:
        return _compiled(self.phrases)[0]

    @property
    def _lookup(self) -> tuple[dict[str, str], tuple[int, ...]]:
        _, lookup, lengths, _, _ = _compiled(self.phrases)
        return lookup, lengths

    @property
    def _bare_lookup(self) -> tuple[dict[str, str], tuple[int, ...]]:
        _, _, _, bare, lengths = _compiled(self.phrases)
        return bare, lengths

    @property
    def identity(self) -> str:
        """``abstention/v12(default;max_words=50)`` or, for a replaced list, a digest of it."""
        if self.phrases == DEFAULT_ABSTENTION_PHRASES:
            which = "default"
        else:
            encoded = "\n".join(sorted(set(self._normalised))).encode("utf-8")
            which = f"phrases=sha256:{hashlib.sha256(encoded).hexdigest()[:16]}"
        return f"{ABSTENTION_RULES_VERSION}({which};max_words={self.max_words})"

    def match(self, answer: str) -> str | None:
        """The phrase (as configured) the answer abstains with, or None when it does not abstain.

        Every clause of the answer (sentences, and the parts a "but" or "however" joins) that
        says something must abstain: "The context does not mention the 2025 price, but a day
        ticket costs 7.80" answers, and so does "The ferry does not answer to the harbour
        master; it departs at 08:00".  A clause says something when it has
        :data:`MIN_CLAUSE_WORDS` words or more, states a number (``7.80``, ``08:00``) or guesses
        (:data:`GUESSES`: "probably Eastgate"), unless it sends the user elsewhere
        (:data:`REDIRECTS`: "please contact customer service"); a clause that holds only a
        hedge (:data:`HEDGES`: "I'm not certain") and then a number or a guess answers too."""
        tokens = abstention_tokens(answer)
        if not tokens or len(tokens) > self.max_words:
            return None
        found: str | None = None
        limited: str | None = None
        for clause in _CLAUSE_BREAK.split(self._concessive_breaks(FOLLOW_UP.sub(" ", answer))):
            words = abstention_tokens(_general_source(clause))
            bare = _bare(words, _vocabulary(self.phrases))
            hit = self._hit(words, bare)
            if hit is not None:
                if " ".join(abstention_tokens(hit)) in HEDGES and _guesses(bare, hedge=True):
                    return None  # "I'm not certain, it costs 7.80": a hedged answer
                found = found or hit
            elif _searched(words):
                continue  # "I looked through the documents"
            elif _redirects(words) or _scope(bare):
                if _scope(bare) and _ONLY & set(bare) and not _guesses(bare, hedge=False):
                    limited = limited or " ".join(bare[: bare.index(next(w for w in bare if w in _ONLY)) + 2])
                continue  # "please contact customer service", "the documents only cover weekdays"
            elif len(words) >= MIN_CLAUSE_WORDS or _guesses(words, hedge=False):
                return None  # this clause says something: the answer answers
            # else filler: "Sorry", "Yes", "Thanks"
        if found is None and limited is not None and FOLLOW_UP.search(answer):
            return limited  # "The documents only describe X. Would you like me to look for something else?"
        return found

    def _hit(self, words: list[str], bare: list[str]) -> str | None:
        """The phrase a clause's words abstain with, or None."""
        lookup, lengths = self._lookup
        bare_lookup, bare_lengths = self._bare_lookup
        return _find(lookup, lengths, words) or _find(bare_lookup, bare_lengths, bare) or _holds_nothing(words)

    def _concessive_breaks(self, text: str) -> str:
        """The text with a clause break after each concessive opening that abstains (round 11):
        "While the context does not mention extended warranties, the standard warranty lasts 24
        months" is two clauses, as "... but the standard warranty lasts 24 months" is; an opening
        that does not abstain ("While I checked the documents,") stays part of its sentence."""

        def split(match: re.Match[str]) -> str:
            words = abstention_tokens(_general_source(match.group(1)))
            abstains = self._hit(words, _bare(words, _vocabulary(self.phrases))) is not None
            return f"{match.group(1)};" if abstains else match.group(0)

        return _CONCESSIVE.sub(split, text)


_HEDGE_WORDS = frozenset({"i", "am", "we", "are", "not", "sure", "certain", "unsure", "sorry", "but", "so", "well"})


def _guesses(words: list[str], *, hedge: bool) -> bool:
    """Whether a clause states a number or guesses (for a hedge: beside the hedge's own words)."""
    rest = [w for w in words if w not in _HEDGE_WORDS] if hedge else words
    return any(any(c.isdigit() for c in w) or w in GUESSES for w in rest)


_ONLY = frozenset({"only", "just"})


def _scope(bare: list[str]) -> bool:
    """Whether a clause (read bare) says what the sources hold: a source or a document kind
    (after at most one word: "the policy documents", round 9: "the HR policy"), then "only",
    "cover", "list", ... ("the documents only cover weekday schedules", "the HR policy only
    covers employees").  An answer whose only says are such a clause with "only" and a
    follow-up question (:data:`FOLLOW_UP`) abstains: it offers to look elsewhere (round 5)."""
    return any(
        len(bare) >= start + 2
        and (bare[start] in _SOURCE_NOUNS or bare[start] in DOCUMENT_KINDS)
        and bare[start + 1] in SCOPE_VERBS
        for start in (0, 1)
    )


def _holds_nothing(words: list[str]) -> str | None:
    """A source or a document kind that does not cover, include or contain "it", "this" or
    "that", ending the clause ("The manual doesn't cover it"), as a phrase; else None."""
    if len(words) < 5 or words[-1] not in ("it", "this", "that") or words[-2] not in HOLDING_VERBS:
        return None
    if words[-3] != "not" or words[-4] not in ("does", "do", "did", "has", "have"):
        return None
    if not any(w in DOCUMENT_KINDS or w in _SOURCE_NOUNS for w in words[:-4]):
        return None
    return " ".join(words[-4:])


def _searched(words: list[str]) -> bool:
    """Whether a clause reports a search of the sources: "i" or "we", a search verb, a source."""
    return (
        bool(set(words) & {"i", "we"})
        and bool(set(words) & SEARCH_VERBS)
        and any(w in _SOURCE_NOUNS or w in DOCUMENT_KINDS for w in words)
        and not any(any(c.isdigit() for c in w) for w in words)
    )


def _redirects(words: list[str]) -> bool:
    """Whether a clause sends the user elsewhere: its first word past the openers is a redirect,
    or someone else is said to help (:func:`_helper`)."""
    for word in words:
        if word not in REDIRECT_OPENERS:
            return word in REDIRECTS or _helper(words)
    return False


_MODALS = frozenset({"can", "could", "should", "would", "may", "might", "will"})
_NOT_ELSEWHERE = frozenset({"i", "we", "it", "this", "that", "there", "they"})


def _helper(words: list[str]) -> bool:
    """Whether a clause names someone else who can help (round 9): a subject that is not the
    answerer, a modal (`should`, `can`, ...), perhaps `be able to`, a verb of
    :data:`HELPER_VERBS` and nothing after it but :data:`HELPER_TAIL` ("the registrar's office
    should be able to help"); or the best (right, better) place, person, team, ... to check,
    ask, contact, ... (:data:`WHERE_NOUNS`: "the council's website would be the best place to
    check").  "The shuttle can help you get to the airport" says something, and answers."""
    modal = next((at for at, word in enumerate(words) if word in _MODALS), 0)
    if modal >= 1 and not (modal == 1 and words[0] in _NOT_ELSEWHERE):  # "I can help" is no one else
        rest = words[modal + 1 :]
        if rest[:3] in (["be", "able", "to"], ["be", "happy", "to"]):
            rest = rest[3:]
        if rest and rest[0] in HELPER_VERBS and set(rest[1:]) <= HELPER_TAIL:
            return True
    for at, word in enumerate(words):
        if (
            word in WHERE_NOUNS
            and at >= 2
            and words[at - 1] in ("best", "right", "better", "correct", "ideal", "appropriate")
            and {"is", "are", "be"} & set(words[: at - 1])
            and words[at + 1 : at + 2] == ["to"]
            and words[at + 2 : at + 3]
            and words[at + 2] in REDIRECTS
            and len(words) - at - 3 <= 3
            and set(words[at + 3 :]) <= HELPER_TAIL
        ):
            return True
    return False
