"""Overlap for a reference without facts (round 10): the reference's words found in the answer.

A reference with no number, date, name or yes/no ("the lab supervisor", "rabies", "a
high-potassium fertiliser") was decided by token F1 of the answer's best sentence, which a full
sentence around the right words fails ("You need approval from the lab supervisor before using
the fume hood after hours.": 0.286) while an answer naming two items of a three-item list passed
(0.571).  So the reference's content words decide, as a share found in the answer's best-matching
sentence (its *recall*), and a list reference needs each of its items
(docs/guide/answers.md, "Reference grading: the facts decide", rule 5 and round 10).

Round 11: the reference's words that the question already holds are no evidence ("shower before
entering the pool" asked "How should swimmers prepare before entering the pool?" is answered by
"shower" alone; an answer that repeats "before entering the pool" answers nothing), so the
answer must hold one of the reference's other words at least (token F1 decides then), and
:data:`MIN_BEYOND_RECALL` of them for the recall to decide; a reference with no other word is
decided as before.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from goldeneval.core.text import ENGLISH_STOPWORDS, stemmer
from goldeneval.prompts.facts.text import NOTE, SENTENCES, fold, prepare

__all__ = [
    "MIN_BEYOND_RECALL",
    "MIN_RECALL",
    "Overlap",
    "beyond_question",
    "content_words",
    "list_items",
    "reference_overlap",
    "rival_compound",
]

MIN_RECALL = 2 / 3
"""The share of a reference's content words (and of each item of a list) that the answer's
best-matching sentence must hold."""
MIN_BEYOND_RECALL = 1 / 2
"""The share of the reference's content words beyond the question's (round 11) that those
sentences must hold as well for the recall to decide (one of them at least for token F1): "a
high-potassium fertiliser" asked "Which fertiliser ...?" is met by "a fertilizer that is rich in
potassium" (one of "high", "potassium")."""

_SPELLING = (
    (re.compile(r"(?<=\w{3})is(e|es|ed|ing|er|ers|ation|ations)$"), r"iz\1"),  # fertiliser, organisation
    (re.compile(r"(?<=\w{2})yse(s|d)?$"), r"yze\1"),  # analyse
    (re.compile(r"(?<=\w{3})our(s|ed|ing|ite|ites)?$"), r"or\1"),  # colour, harbour, favourite
    (re.compile(r"(?<=\w{2}[^aeiou])re(s|d)?$"), r"er\1"),  # centre, metre, litre, theatre
    (re.compile(r"(?<=\w{3})ogue(s)?$"), r"og\1"),  # catalogue, dialogue
    (re.compile(r"(?<=\w{3})mme(s)?$"), r"m\1"),  # programme
    (re.compile(r"(?<=\w{2}[aeiou])ll(ed|ing|er|ers)$"), r"l\1"),  # travelled, cancelling, traveller
    (re.compile(r"^grey$"), "gray"),
    (re.compile(r"^mid$"), "middle"),  # mid-May, the middle of May
)
"""British spellings read as American ones, on both sides, before stemming: "fertiliser" and
"fertilizer", "colour" and "color", "centre" and "center", "travelled" and "traveled".  A small
documented map of suffix rules (the Snowball stemmer keeps them apart); a word the rules change
wrongly changes the same way on both sides."""
_HEDGE_WORDS = frozenset({"usually", "typically", "generally", "normally", "approximately", "roughly", "around"})
"""Words that say how sure a value is, not what it is ("usually mid-May", "typically around the
middle of May"): no content words."""
_WORD = re.compile(r"[a-z0-9]+")
_DOTTED = re.compile(r"\b(?:[A-Za-z]\.){2,}")
"""A dotted abbreviation ("U.S.", "e.g."): read without its dots ("US")."""
_LIST_SPLIT = re.compile(r"\s*[,;]\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", re.IGNORECASE)
_LIST_END = re.compile(r"\s(?:and|or)\s+\S+[^,;]*$", re.IGNORECASE)
MAX_ITEM_WORDS = 5
"""A list's item is at most this many words ("photos of the damage"); a longer run is a clause."""
MAX_PAIR_WORDS = 3
"""The items of a list of two ("a lab coat and nitrile gloves") are at most this many words each."""


def _spelling(word: str) -> str:
    for pattern, replacement in _SPELLING:
        word = pattern.sub(replacement, word)
    return word


def content_words(text: str) -> list[str]:
    """The comparison forms of a text's content words: diacritics folded, dotted abbreviations
    undotted, lower case, split at hyphens and punctuation, stop words dropped, British
    spellings read as American (:data:`_SPELLING`), hedges ("usually") dropped, Snowball-stemmed."""
    text = _DOTTED.sub(lambda m: m.group(0).replace(".", ""), fold(text)).lower().replace("\u2019", "'")
    words = [w for w in _WORD.findall(text.replace("'s ", " ")) if w not in ENGLISH_STOPWORDS and w not in _HEDGE_WORDS]
    stems: list[str] = stemmer().stemWords([_spelling(w) for w in words])
    return stems


def list_items(reference: str) -> list[tuple[str, list[str]]]:
    """The items of a list reference, each as written and as its content words: two or more short items
    (at most :data:`MAX_ITEM_WORDS` words) joined by commas and a last "and" or "or" ("plastic
    packaging, cans and drink cartons"); ``[]`` for a reference that is no such list."""
    text = prepare(NOTE.sub("", reference)).strip().rstrip(".!")
    if SENTENCES.search(text) or not _LIST_END.search(text):
        return []
    parts = [p for p in _LIST_SPLIT.split(text) if p.strip()]
    if len(parts) < 2 or any(len(p.split()) > MAX_ITEM_WORDS for p in parts):
        return []
    if len(parts) == 2 and any(len(p.split()) > MAX_PAIR_WORDS for p in parts):
        return []  # "Open the rear tray and remove the stuck paper": two clauses, not a list
    items = [(p.strip(), content_words(p)) for p in parts]
    return items if all(words for _, words in items) else []


@dataclass(frozen=True)
class Overlap:
    """How much of a reference the answer's best-matching sentences hold."""

    recall: float
    """The share of the reference's content words in the best run of sentences."""
    missing_items: tuple[str, ...]
    """A list reference's items that run lacks (fewer than :data:`MIN_RECALL` of their words)."""
    share_of_answer: float
    """The share of the answer's content words that run holds: low for a paste of the context
    around one right sentence."""
    beyond_recall: float = 1.0
    """The share of the reference's content words the question does not hold (all of them where
    it holds every one) in that run (round 11)."""


MIN_CLIPPED = 5
"""A word this long or longer is met by a word it begins or that begins it: "photo" by
"photograph", "info" not by "inform" (a clipped word of five letters at the least)."""
MIN_ANSWER_SHARE = 1 / 3
"""Recall decides only where the best-matching sentences hold this share of the answer's content
words or more: a paste of the context around one right sentence is no answer (rule 4)."""


def _held(word: str, held: set[str]) -> bool:
    if word in held:
        return True
    return len(word) >= MIN_CLIPPED and any(
        len(h) >= MIN_CLIPPED and (h.startswith(word) or word.startswith(h)) for h in held
    )


def _share(wanted: list[str], held: set[str]) -> float:
    return sum(_held(w, held) for w in wanted) / len(wanted) if wanted else 0.0


_COMPOUND = re.compile(r"\b([A-Za-z]{2,})-([A-Za-z]{2,})\b")


def _compounds(text: str) -> set[tuple[str, str]]:
    pairs = set()
    for match in _COMPOUND.finditer(fold(text)):
        first, second = content_words(match.group(1)), content_words(match.group(2))
        if first and second:
            pairs.add((first[0], second[0]))
    return pairs


def rival_compound(answer: str, reference: str) -> str | None:
    """A hyphenated compound of the answer that keeps one part of one of the reference's and
    changes the other, in the same place (round 10): "high-nitrogen" for "high-potassium",
    "low-potassium" too; "potassium-rich" keeps no part in place.  As written, or None."""
    wanted = _compounds(NOTE.sub("", reference))
    for match in _COMPOUND.finditer(fold(answer)):
        pair = next(iter(_compounds(match.group(0))), None)
        if pair is None or pair in wanted:
            continue
        if any((pair[0] == w[0]) != (pair[1] == w[1]) for w in wanted):
            return match.group(0)
    return None


def beyond_question(words: list[str], question: str) -> list[str]:
    """The content words (comparison forms) that the question does not hold (round 11); all of
    them where the question holds every one, or there is no question."""
    asked = set(content_words(prepare(question))) if question else set()
    beyond = [w for w in words if w not in asked]
    return beyond or words


def reference_overlap(answer: str, reference: str, question: str = "") -> Overlap:
    """The reference's content-word recall in the answer's best-matching run of sentences (of at
    most as many sentences as the reference has, or as a list reference has items: one a line),
    the items of a list reference that run lacks, the share of the answer's content words the run
    holds, and the share of the reference's words beyond the question's (:func:`beyond_question`)
    it holds; citation markers are dropped, parenthesised notes of the reference too."""
    wanted = content_words(prepare(NOTE.sub("", reference)))
    beyond = beyond_question(wanted, question)
    items = list_items(reference)
    texts = [p for p in (s.strip() for s in SENTENCES.split(prepare(reference))) if p]
    sentences = [s for s in SENTENCES.split(prepare(answer)) if s.strip()] or [answer]
    width = min(len(sentences), max(1, len(texts), len(items)))
    total = max(1, len(content_words(" ".join(sentences))))
    best: tuple[tuple[int, float], tuple[str, ...], float, float] | None = None
    for w in range(1, width + 1):
        for i in range(len(sentences) - w + 1):
            words = content_words(" ".join(sentences[i : i + w]))
            held = set(words)
            missing = tuple(name for name, item in items if _share(item, held) < MIN_RECALL)
            rank = (len(items) - len(missing), _share(wanted, held))
            if best is None or rank > best[0]:
                best = (rank, missing, len(words) / total, _share(beyond, held))
    assert best is not None  # at least one run of sentences
    return Overlap(best[0][1], best[1], best[2], best[3])
