"""Lint a golden set: what a hand-written (or generated) set gets wrong that loading it does not catch.

Each finding is one line and one JSON object; :func:`lint_set` returns them in set order,
kind by kind.  The checks and their rules (:data:`LINT_RULES` names their versions):

``form``
    The declared form disagrees with the measured one (:mod:`goldeneval.retrieval.overlap`,
    ``vocabulary-overlap/v1``): a ``GAP`` question that shares most of its vocabulary with
    its targets (one that repeats its target's title), or a ``MATCH`` question that shares
    little.  Needs the corpus; a no-answer question (no expected document) and a question
    whose targets are all missing from the corpus are not measured.
``missing-document``
    An expected (or ``grades`` or ``not_relevant``) document id that is not in the corpus.
``duplicate-question``
    Two questions with the same text once case, white space and end punctuation are set aside.
``near-duplicate-question``
    Two questions whose word sets (:func:`question_words`: lower-case, every word of one or
    more word characters, not stemmed, the English stop words of
    :data:`goldeneval.core.text.ENGLISH_STOPWORDS` left out, so that function words ("the",
    "on", "how") do not make two questions alike) have a Jaccard similarity
    of at least :data:`NEAR_DUPLICATE_QUESTION` (0.8), and are not duplicates (found by prefix
    filtering, which is exact: no pair at or above the threshold is missed, and a large set is
    not compared pair by pair).
``unfound-target``
    With the judgments file the set was pooled into: a question none of whose expected
    documents any pooled source (retriever or run; a person's search on the judging page is
    no source) returned, so its labels rest on nothing the pool found.
``near-duplicate-targets``
    Two expected documents of one question whose word 3-shingles (title and text) have a
    Jaccard similarity of at least :data:`NEAR_DUPLICATE_DOCUMENTS` (0.5): a candidate for
    the ``near-duplicate`` hard class, reported only for a question not tagged so already.

Nothing here decides whether the set may be used: the command exits 0 with findings unless
asked to be strict.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from itertools import combinations
from typing import TypeVar

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.text import ENGLISH_STOPWORDS
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.overlap import OVERLAP_RULE, form_of_overlap, vocabulary_overlap

__all__ = [
    "LINT_RULES",
    "NEAR_DUPLICATE_DOCUMENTS",
    "NEAR_DUPLICATE_QUESTION",
    "Finding",
    "lint_set",
    "question_words",
]

NEAR_DUPLICATE_QUESTION = 0.8
"""Least word-set Jaccard similarity of two near-duplicate questions."""
NEAR_DUPLICATE_DOCUMENTS = 0.5
"""Least word 3-shingle Jaccard similarity of two near-duplicate target documents."""
SHINGLE = 3
LINT_RULES: Mapping[str, str] = {
    "form": OVERLAP_RULE,
    "near-duplicate-question": f"word-jaccard>={NEAR_DUPLICATE_QUESTION}/v2",
    "near-duplicate-targets": f"shingle{SHINGLE}-jaccard>={NEAR_DUPLICATE_DOCUMENTS}/v1",
}
"""The rule (and its version) behind each measured kind of finding."""
T = TypeVar("T")
_WORD = re.compile(r"\w+")
_END = re.compile(r"[\s\W]+$")


@dataclass(frozen=True)
class Finding:
    kind: str
    question: str | None
    """The question it is about (the first of two for a pair)."""
    message: str
    position: int | None = None
    """The question's position in the set (from 1)."""
    details: Mapping[str, object] = field(default_factory=dict)

    def line(self) -> str:
        where = f"question #{self.position} (id {self.question!r}): " if self.question is not None else ""
        return f"{self.kind}: {where}{self.message}"

    def to_dict(self) -> dict[str, object]:
        return {
            "kind": self.kind,
            "question": self.question,
            "position": self.position,
            "message": self.message,
            **({"rule": LINT_RULES[self.kind]} if self.kind in LINT_RULES else {}),
            "details": dict(self.details),
        }


def lint_set(
    golden_set: GoldenQuestionSet, corpus: Corpus | None, pooled: Mapping[str, set[str]] | None = None
) -> list[Finding]:
    """Every finding of the set, checked against ``corpus`` where one is given (the checks that
    read documents are left out without one), and against ``pooled`` (question id -> the
    documents some source of a judgments file returned for it) where given."""
    documents = {doc.id: doc for doc in corpus} if corpus is not None else None
    numbered = list(enumerate(golden_set.questions, start=1))
    findings: list[Finding] = []
    if documents is not None:
        findings += _forms(numbered, documents)
        findings += _missing(numbered, documents)
    findings += _duplicates(numbered)
    if documents is not None:
        findings += _near_duplicate_targets(numbered, documents)
    if pooled is not None:
        findings += _unfound(numbered, pooled)
    return findings


def _unfound(numbered: list[tuple[int, GoldenQuestion]], pooled: Mapping[str, set[str]]) -> Iterator[Finding]:
    for position, question in numbered:
        if question.expected and not question.expected & pooled.get(question.id, set()):
            yield Finding(
                "unfound-target",
                question.id,
                f"no pooled source returned any of its expected documents ({', '.join(sorted(question.expected))})",
                position,
                {"expected": sorted(question.expected)},
            )


def _text_of(doc: Document) -> str:
    return f"{doc.title}\n{doc.text}"


def _forms(numbered: list[tuple[int, GoldenQuestion]], documents: Mapping[str, Document]) -> Iterator[Finding]:
    for position, question in numbered:
        targets = [documents[d] for d in sorted(question.expected) if d in documents]
        if not targets:
            continue
        overlap = vocabulary_overlap(question.text, [_text_of(doc) for doc in targets])
        measured = form_of_overlap(overlap)
        if measured is not question.form:
            yield Finding(
                "form",
                question.id,
                f"declared {question.form.value} but measured {measured.value}: overlap {overlap:.2f} with its "
                f"targets ({OVERLAP_RULE}: MATCH at 0.5 or more)",
                position,
                {"declared": question.form.value, "measured": measured.value, "overlap": round(overlap, 4)},
            )


def _missing(numbered: list[tuple[int, GoldenQuestion]], documents: Mapping[str, Document]) -> Iterator[Finding]:
    for position, question in numbered:
        for name, ids in (
            ("expected", question.expected),
            ("grades", frozenset(question.grades)),
            ("not_relevant", question.not_relevant),
        ):
            missing = sorted(d for d in ids if d not in documents)
            if name == "grades":
                missing = [d for d in missing if d not in question.expected]  # said once, as expected
            if missing:
                yield Finding(
                    "missing-document",
                    question.id,
                    f"field {name!r}: not in the corpus: {', '.join(missing)}",
                    position,
                    {"field": name, "documents": missing},
                )


def question_words(text: str) -> set[str]:
    """The words two questions are compared by for near-duplicates (lint, and ``goldeneval
    draft``'s de-duplication): lower-case words, unstemmed, stop words left out."""
    return {word for word in _WORD.findall(text.casefold()) if word not in ENGLISH_STOPWORDS}


def _normalized(text: str) -> str:
    return _END.sub("", " ".join(text.casefold().split()))


def _jaccard(a: set[T], b: set[T]) -> float:
    union = len(a | b)
    return len(a & b) / union if union else 0.0


def _duplicates(numbered: list[tuple[int, GoldenQuestion]]) -> Iterator[Finding]:
    first: dict[str, tuple[int, GoldenQuestion]] = {}
    for position, question in numbered:
        key = _normalized(question.text)
        if key in first:
            earlier = first[key][1]
            yield Finding(
                "duplicate-question",
                question.id,
                f"the same text as question {earlier.id!r}",
                position,
                {"other": earlier.id, "similarity": 1.0},
            )
        else:
            first[key] = (position, question)
    # near-duplicates by prefix filtering (exact for a Jaccard threshold t): with each word set
    # sorted rarest word first, two sets with a similarity of t or more share a word among the
    # first |x| - ceil(t |x|) + 1 of each; only those prefixes are indexed and compared
    words = [question_words(question.text) for _, question in numbered]
    frequency = Counter(word for terms in words for word in terms)
    postings: dict[str, list[int]] = {}
    for i, terms in enumerate(words):
        ordered = sorted(terms, key=lambda word: (frequency[word], word))
        prefix = ordered[: len(ordered) - math.ceil(NEAR_DUPLICATE_QUESTION * len(ordered) - 1e-9) + 1]
        candidates: set[int] = set()
        for word in prefix:
            candidates.update(postings.get(word, ()))
            postings.setdefault(word, []).append(i)
        for j in sorted(candidates):
            similarity = _jaccard(words[i], words[j])
            position, question = numbered[i]
            other = numbered[j][1]
            if similarity >= NEAR_DUPLICATE_QUESTION and _normalized(question.text) != _normalized(other.text):
                yield Finding(
                    "near-duplicate-question",
                    question.id,
                    f"nearly the same words as question {other.id!r} (Jaccard {similarity:.2f})",
                    position,
                    {"other": other.id, "similarity": round(similarity, 4)},
                )


def _shingles(text: str) -> set[tuple[str, ...]]:
    words = _WORD.findall(text.casefold())
    return {tuple(words[i : i + SHINGLE]) for i in range(max(1, len(words) - SHINGLE + 1))}


def _near_duplicate_targets(
    numbered: list[tuple[int, GoldenQuestion]], documents: Mapping[str, Document]
) -> Iterator[Finding]:
    shingled: dict[str, set[tuple[str, ...]]] = {}
    for position, question in numbered:
        if question.hard_class == "near-duplicate":
            continue
        targets = sorted(d for d in question.expected if d in documents)
        for a, b in combinations(targets, 2):
            for d in (a, b):
                if d not in shingled:
                    shingled[d] = _shingles(_text_of(documents[d]))
            similarity = _jaccard(shingled[a], shingled[b])
            if similarity >= NEAR_DUPLICATE_DOCUMENTS:
                yield Finding(
                    "near-duplicate-targets",
                    question.id,
                    f"expected documents {a!r} and {b!r} are near-duplicates (3-shingle Jaccard {similarity:.2f}): "
                    "a candidate for hard_class near-duplicate",
                    position,
                    {"documents": [a, b], "similarity": round(similarity, 4)},
                )
