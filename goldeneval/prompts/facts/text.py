"""How a text is made ready before its facts are read: notes, citations, sentences.

Both the reference and the answer go through the same preparation, so that a citation marker
(``[1]``), ``P+R`` or a daily amount written "in 24 hours" never makes two equal answers differ
(docs/guide/answers.md, "Reference grading: the facts decide": rules 1 and 5, round 5).
"""

from __future__ import annotations

import re

__all__ = ["NOTE", "SENTENCES", "prepare", "stem"]

NOTE = re.compile(r"\s*\([^()]*\)")
"""A parenthesised remark of the reference: context for a reader, not a fact (rule 1)."""
_PARK_AND_RIDE = re.compile(r"\bP\s*\+\s*R\b", re.IGNORECASE)
_CITATION = re.compile(r"\[\d{1,3}(?:\s*[,;-]\s*\d{1,3})*\]")
"""A RAG answer's citation marker: ``[1]``, ``[2, 3]`` (not a fact)."""
SENTENCES = re.compile(r"(?<=[.!?;])\s+|\n+")
"""Where a sentence ends: ``.``, ``!``, ``?``, ``;`` and line breaks."""

_PER_DAY = re.compile(
    r"\b(?:in|every|per|each|over)\s+(?:any\s+)?24[\s-]*(?:hours?|hrs?|h)(?:\s+period)?\b|\bin\s+(?:a|one)\s+day\b",
    re.IGNORECASE,
)
_DOSE_BEFORE = re.compile(
    r"\d\s*(?:mg|g|grams?|milligrams?|mcg|micrograms?|ml|millilitres?|l|litres?|tablets?|capsules?|doses?|units?"
    r"|puffs?|drinks?|cups?)\b[^.;!?]{0,40}$",
    re.IGNORECASE,
)
"""A daily amount written over 24 hours or "in a day": "4 g of paracetamol in 24 hours" reads "4 g
of paracetamol per day"; only right after an amount ("delivery in 24 hours" stays a duration)."""


def _per_day(text: str) -> str:
    return _PER_DAY.sub(
        lambda m: "per day" if _DOSE_BEFORE.search(text[max(0, m.start() - 60) : m.start()]) else m.group(0), text
    )


def prepare(text: str) -> str:
    """``P+R`` read as "Park and Ride"; citation markers (``[1]``, ``[2, 3]``) dropped; an amount
    "in 24 hours" read as "per day" (:data:`_PER_DAY`)."""
    return _per_day(_PARK_AND_RIDE.sub("Park and Ride", _CITATION.sub(" ", text)))


def stem(token: str) -> str:
    """A word's comparison form: lower case, without a possessive or a plural ``s``."""
    token = token.lower().replace("\u2019", "'")
    if token.endswith("'s"):
        token = token[:-2]
    token = token.rstrip("'")
    return token[:-1] if len(token) > 3 and token.endswith("s") and not token.endswith("ss") else token
