"""Abstention as an outcome (issue 24): telling "the context does not answer this" apart.

A RAG system that says it cannot answer a question no document answers is right, and one that
says so when the documents do answer is wrong in its own way (``over_abstention``), which a
team fixes differently from a wrong answer.  Detection is deterministic and documented:

* the answer and every phrase are tokenised the same way — English contractions are
  spelled out first (``doesn't`` -> ``does not``, ``can't`` and ``cannot`` -> ``can not``,
  ``won't`` -> ``will not``, ``I'm`` -> ``i am``, ``there's`` -> ``there is``), then
  :func:`~goldeneval.answers.assertions.normalise_answer` (the SQuAD normalisation: lower
  case, no punctuation, no articles); a clause is also read without the :data:`QUALIFIERS`
  ("provided", "given", "any", ...);
* an answer abstains when one phrase occurs in it as a run of whole tokens, and the answer
  has at most ``max_words`` tokens: a long answer that happens to contain "not covered by the
  context" is an answer with a caveat (or an echo of the prompt), and is graded as one.

Phrases are plain text, never regular expressions, so no pattern can hang grading.  The
default list is :data:`DEFAULT_ABSTENTION_PHRASES`, a phrase model of five families (issue 42,
:func:`_default_phrases`) that reads every phrasing of :data:`ABSTENTION_EXAMPLES`; a run may replace it
(:class:`AbstentionRules`), and the rules' identity is part of the grader's identity, so a
changed list makes the next comparison a ``mismatch``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from functools import lru_cache

from goldeneval.answers.assertions import normalise_answer
from goldeneval.core.errors import InputError, one_line

__all__ = [
    "ABSTENTION_EXAMPLES",
    "ABSTENTION_RULES_VERSION",
    "DEFAULT_ABSTENTION_PHRASES",
    "DEFAULT_MAX_ABSTENTION_WORDS",
    "QUALIFIERS",
    "AbstentionRules",
    "abstention_tokens",
]

ABSTENTION_RULES_VERSION = "abstention/v3"
MIN_CLAUSE_WORDS = 4
"""A clause of fewer words (after normalisation) is filler: it neither abstains nor answers."""
_CLAUSE_BREAK = re.compile(r"[.!?;:\n]+|,?\s+\b(?:but|however|although|though|yet|whereas)\b", re.IGNORECASE)
"""Where one clause of an answer ends and the next begins."""
DEFAULT_MAX_ABSTENTION_WORDS = 50

ABSTENTION_EXAMPLES: tuple[str, ...] = (
    "I don't know.",
    "I do not know the answer to that.",
    "I'm not sure.",
    "The documents do not say.",
    "The context does not contain that information.",
    "The provided context doesn't mention this.",
    "The passages don't cover this topic.",
    "The sources do not specify that.",
    "I could not find that.",
    "I couldn't find an answer in the provided context.",
    "I cannot find any information on that.",
    "I was unable to find this in the documents.",
    "I am unable to answer from the given documents.",
    "I'm not able to answer that based on the context.",
    "I can't answer that question.",
    "I can't help with that based on the documents.",
    "There is no information about this in the context.",
    "There's no mention of that in the documents.",
    "No relevant information was found.",
    "I have no information about that.",
    "I don't have enough information to answer.",
    "There is not enough information to answer this.",
    "This is not mentioned in the documents.",
    "That is not stated in the provided passages.",
    "The answer is not in the documents.",
    "Nothing in the documents addresses this.",
    "It is unclear from the context.",
    "This cannot be determined from the information provided.",
    "The question cannot be answered from the context.",
    "That isn't covered by the corpus.",
    "The information is not available in the documents.",
    "Unfortunately, the documents are silent on this.",
)
"""The common English abstentions collected for issue 42 (each a distinct phrasing); the
default phrase model reads every one of them, and tests/test_answers_abstention_phrases.py
checks so, with variants that are not listed here."""

_SOURCES = (
    "context", "contexts", "document", "documents", "passage", "passages", "source", "sources", "corpus",
    "text", "texts", "excerpt", "excerpts", "material", "materials", "information", "snippets", "data",
    "knowledge base", "records", "search results", "results",
)  # fmt: skip
QUALIFIERS = frozenset(
    {"provided", "given", "retrieved", "supplied", "available", "above", "here", "these", "those", "this", "any",
     "relevant", "specific", "attached", "shared", "your", "my", "our", "anything", "anywhere", "really"}
)  # fmt: skip
"""Words a clause is also read without ("the provided documents do not say" is "documents do not
say", "I do not have any information" is "i do not have information"): a phrase matches the
clause's tokens as they are, or with these left out."""
_SOURCE_VERBS = (
    "say", "mention", "contain", "provide", "cover", "include", "specify", "state", "address", "answer",
    "give", "discuss", "indicate", "tell", "list", "describe", "show", "explain", "offer", "reference",
    "detail", "have", "seem to mention", "seem to contain", "appear to mention", "appear to contain",
)  # fmt: skip
_PARTICIPLES = (
    "mentioned", "stated", "specified", "covered", "provided", "found", "given", "included", "listed",
    "addressed", "discussed", "described", "available", "contained", "indicated", "shown", "explained",
)  # fmt: skip
_FIRST_PERSON = ("i", "we")
_INABILITY = (
    "can not", "could not", "am unable to", "was unable to", "are unable to", "were unable to", "am not able to",
    "was not able to", "are not able to", "did not", "do not", "unable to", "not able to",
)  # fmt: skip
_TASKS = ("find", "answer", "tell", "say", "determine", "help", "locate", "see", "identify", "confirm", "provide")


def _default_phrases() -> tuple[str, ...]:
    """The default phrase model (docs/guide/answers.md, "Abstention"), as plain phrases:

    1. not knowing: "i do not know", "i am not sure", "no idea", "i have no information";
    2. inability, first person: "i" or "we" + "can not", "could not", "am unable to", ... +
       "find", "answer", "tell", "determine", ... ("I couldn't find that");
    3. the source is silent: a source ("context", "documents", "passages", "sources", ...)
       + "does not", "do not", "did not" +
       "say", "mention", "contain", "cover", "specify", ... ("The documents do not say");
       "nothing in" + a source; "not in" + a source; a source + "is silent" or "are silent";
    4. absence: "no information", "no relevant information", "no mention of", "no details",
       "not enough information", "insufficient information"; "not mentioned", "not stated",
       "not specified" (and "is" / "are" / "was" before them); "not covered by", "not found in",
       "not provided in", "not available in", ... + a source;
    5. unanswerable: "does not answer", "can not be answered", "can not be determined",
       "unclear from", "unknown from", "not possible to answer", "answer is not in".

    Contractions are spelled out before matching (``couldn't`` -> ``could not``, ``I'm`` ->
    ``i am``, ``there's`` -> ``there is``), articles are dropped, and a clause also matches
    without the words of :data:`QUALIFIERS` ("the passages provided do not address")."""
    phrases = [
        "does not answer", "do not answer", "can not answer", "can not be answered", "is not answered",
        "i do not know", "we do not know", "i am not sure", "i am not certain", "no idea", "i have no information",
        "i have no data", "i do not have information", "i do not have any information", "i do not have enough",
        "i do not have details", "i do not have answer", "no information", "no relevant information",
        "no specific information", "no further information", "no details", "no mention of", "no reference to",
        "no data about", "no data on", "not enough information", "insufficient information",
        "not enough context", "insufficient context", "not mentioned", "not stated", "not specified",
        "not explicitly mentioned", "not explicitly stated", "can not be determined", "can not determine",
        "could not be determined", "could not determine", "can not be found", "could not be found",
        "unclear from", "unknown from", "not clear from", "not possible to answer", "not possible to determine",
        "answer is not in", "answer is not available", "answer is not provided", "information is not available",
        "information is not provided", "no answer in", "no answer to",
    ]  # fmt: skip
    phrases += [f"{who} {can} {task}" for who in _FIRST_PERSON for can in _INABILITY for task in _TASKS]
    for noun in _SOURCES:
        phrases += [f"{noun} {aux} not {verb}" for aux in ("does", "do", "did") for verb in _SOURCE_VERBS]
        phrases += [f"{noun} is silent", f"{noun} are silent"]
        phrases += [f"nothing in {noun}", f"not in {noun}", f"not from {noun}"]
        phrases += [f"not {part} {prep} {noun}" for part in _PARTICIPLES for prep in ("in", "by", "within")]
    return tuple(dict.fromkeys(phrases))


DEFAULT_ABSTENTION_PHRASES: tuple[str, ...] = _default_phrases()
"""What counts as "I cannot answer this from the context", after normalisation (so "The
context doesn't answer the question." matches ``does not answer``): the phrase model of
:func:`_default_phrases`."""

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
def _compiled(phrases: tuple[str, ...]) -> tuple[tuple[str, ...], dict[str, str], tuple[int, ...]]:
    """The phrases normalised, each normalised phrase to the first configured phrase that gives
    it, and the phrase lengths in tokens; a phrase with nothing left is invalid input."""
    normalised: list[str] = []
    lookup: dict[str, str] = {}
    for position, phrase in enumerate(phrases, start=1):
        tokens = abstention_tokens(phrase)
        if not tokens:
            raise InputError(
                f"abstention phrase #{position} {one_line(phrase, 60)!r}: nothing is left after normalisation "
                "(lower case, no punctuation, no articles)"
            )
        normalised.append(" ".join(tokens))
        lookup.setdefault(normalised[-1], phrase)
    return tuple(normalised), lookup, tuple(sorted({len(n.split()) for n in lookup}))


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
        _, lookup, lengths = _compiled(self.phrases)
        return lookup, lengths

    @property
    def identity(self) -> str:
        """``abstention/v3(default;max_words=50)`` or, for a replaced list, a digest of it."""
        if self.phrases == DEFAULT_ABSTENTION_PHRASES:
            which = "default"
        else:
            encoded = "\n".join(sorted(set(self._normalised))).encode("utf-8")
            which = f"phrases=sha256:{hashlib.sha256(encoded).hexdigest()[:16]}"
        return f"{ABSTENTION_RULES_VERSION}({which};max_words={self.max_words})"

    def match(self, answer: str) -> str | None:
        """The phrase (as configured) the answer abstains with, or None when it does not abstain.

        Every clause of the answer (sentences, and the parts a "but" or "however" joins) that
        says something (:data:`MIN_CLAUSE_WORDS` words or more) must abstain: "The context does
        not mention the 2025 price, but a day ticket costs 7.80" answers, and so does "The
        ferry does not answer to the harbour master; it departs at 08:00"."""
        tokens = abstention_tokens(answer)
        if not tokens or len(tokens) > self.max_words:
            return None
        lookup, lengths = self._lookup
        found: str | None = None
        for clause in _CLAUSE_BREAK.split(answer):
            words = abstention_tokens(clause)
            hit = _find(lookup, lengths, words) or _find(lookup, lengths, [w for w in words if w not in QUALIFIERS])
            if hit is not None:
                found = found or hit
            elif len(words) >= MIN_CLAUSE_WORDS:
                return None  # this clause says something: the answer answers
            # else filler: "Sorry", "Yes", "Please check the timetable"
        return found
