"""Abstention as an outcome (issue 24): telling "the context does not answer this" apart.

A RAG system that says it cannot answer a question no document answers is right, and one that
says so when the documents do answer is wrong in its own way (``over_abstention``), which a
team fixes differently from a wrong answer.  Detection is deterministic and documented:

* the answer and every phrase are tokenised the same way — English negative contractions are
  spelled out first (``doesn't`` -> ``does not``, ``can't`` and ``cannot`` -> ``can not``,
  ``won't`` -> ``will not``), then :func:`~goldeneval.answers.assertions.normalise_answer`
  (the SQuAD normalisation: lower case, no punctuation, no articles);
* an answer abstains when one phrase occurs in it as a run of whole tokens, and the answer
  has at most ``max_words`` tokens: a long answer that happens to contain "not covered by the
  context" is an answer with a caveat (or an echo of the prompt), and is graded as one.

Phrases are plain text, never regular expressions, so no pattern can hang grading.  The
default list is :data:`DEFAULT_ABSTENTION_PHRASES`; a run may replace it
(:class:`AbstentionRules`), and the rules' identity is part of the grader's identity, so a
changed list makes the next comparison a ``mismatch``.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from goldeneval.answers.assertions import normalise_answer
from goldeneval.core.errors import InputError, one_line

__all__ = [
    "ABSTENTION_RULES_VERSION",
    "DEFAULT_ABSTENTION_PHRASES",
    "DEFAULT_MAX_ABSTENTION_WORDS",
    "AbstentionRules",
    "abstention_tokens",
]

ABSTENTION_RULES_VERSION = "abstention/v2"
MIN_CLAUSE_WORDS = 4
"""A clause of fewer words (after normalisation) is filler: it neither abstains nor answers."""
_CLAUSE_BREAK = re.compile(r"[.!?;:\n]+|,?\s+\b(?:but|however|although|though|yet|whereas)\b", re.IGNORECASE)
"""Where one clause of an answer ends and the next begins."""
DEFAULT_MAX_ABSTENTION_WORDS = 50
DEFAULT_ABSTENTION_PHRASES: tuple[str, ...] = (
    "does not answer",
    "do not answer",
    "can not answer",
    "can not be answered",
    "is not answered",
    "not covered by context",
    "not covered by corpus",
    "not covered by documents",
    "not covered by passages",
    "not covered in context",
    "not covered in documents",
    "context does not contain",
    "context does not mention",
    "context does not say",
    "context does not provide",
    "context does not cover",
    "documents do not contain",
    "documents do not mention",
    "passages do not contain",
    "passages do not mention",
    "no information about",
    "no information on",
    "not enough information",
    "i do not know",
)
"""What counts as "I cannot answer this from the context", after normalisation (so "The
context doesn't answer the question." matches ``does not answer``)."""

_CONTRACTIONS = (
    (re.compile(r"\bcan['\u2019]t\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bcannot\b", re.IGNORECASE), "can not"),
    (re.compile(r"\bwon['\u2019]t\b", re.IGNORECASE), "will not"),
    (re.compile(r"n['\u2019]t\b", re.IGNORECASE), " not"),
)


def abstention_tokens(text: str) -> list[str]:
    """The tokens an answer and a phrase are compared on: contractions spelled out, then the
    SQuAD normalisation."""
    for pattern, replacement in _CONTRACTIONS:
        text = pattern.sub(replacement, text)
    return normalise_answer(text).split()


@dataclass(frozen=True)
class AbstentionRules:
    """Which answers abstain: any of ``phrases`` (as whole tokens) in an answer of at most
    ``max_words`` tokens."""

    phrases: tuple[str, ...] = DEFAULT_ABSTENTION_PHRASES
    max_words: int = DEFAULT_MAX_ABSTENTION_WORDS

    def __post_init__(self) -> None:
        if not self.phrases:
            raise InputError("abstention phrases: give at least one phrase")
        for position, phrase in enumerate(self.phrases, start=1):
            if not abstention_tokens(phrase):
                raise InputError(
                    f"abstention phrase #{position} {one_line(phrase, 60)!r}: nothing is left after normalisation "
                    "(lower case, no punctuation, no articles)"
                )
        if not 1 <= self.max_words <= 10_000:
            raise InputError(f"abstention: max_words must be between 1 and 10000, got {self.max_words}")

    @property
    def _normalised(self) -> tuple[str, ...]:
        return tuple(" ".join(abstention_tokens(phrase)) for phrase in self.phrases)

    @property
    def identity(self) -> str:
        """``abstention/v2(default;max_words=50)`` or, for a replaced list, a digest of it."""
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
        found: str | None = None
        for clause in _CLAUSE_BREAK.split(answer):
            words = abstention_tokens(clause)
            padded = f" {' '.join(words)} "
            hit = next((p for p, n in zip(self.phrases, self._normalised, strict=True) if f" {n} " in padded), None)
            if hit is not None:
                found = found or hit
            elif len(words) >= MIN_CLAUSE_WORDS:
                return None  # this clause says something: the answer answers
            # else filler: "Sorry", "Yes", "Please check the timetable"
        return found
