"""The label digest of a golden set (ADR-215 decision 2): computed, never supplied.

A versioned canonical encoding (docs/label-digest.md) of each question's id, text, form,
hard class, expected ids, grades and judged non-relevant ids; independent of question and target order, changed by
any relevant value, blind to ``answer_gist``.  The benchmark fingerprint
(:func:`goldeneval.core.provenance.benchmark_fingerprint`) takes it as one part.
"""

from __future__ import annotations

import functools
import hashlib
import operator
import unicodedata
import weakref
from collections.abc import Iterable
from typing import Any

from goldeneval.core.provenance import canonical_json, canonical_text
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet

__all__ = ["LABEL_DIGEST_VERSION", "canonical_label_encoding", "label_digest", "question_record"]

LABEL_DIGEST_VERSION = "labels-v1"


def _nfc(value: str) -> str:
    # ASCII is NFC (a flag CPython keeps: no scan).  ``normalize`` itself returns NFC text as it
    # is after a quick check, and normalises the rest once (``is_normalized`` first would
    # normalise it twice).
    return value if value.isascii() else unicodedata.normalize("NFC", value)


def question_record(question: GoldenQuestion) -> list[Any]:
    """One question's record in the canonical encoding (NFC strings): its part of the digest."""
    record: list[Any] = [
        _nfc(question.id),
        _nfc(question.text),
        question.form.value,
        None if question.hard_class is None else _nfc(question.hard_class),
        sorted(_nfc(doc) for doc in question.expected),
    ]
    if question.grades or question.not_relevant:  # only grades other than the default 1: binary sets keep their digest
        record.append({_nfc(doc): grade for doc, grade in sorted(question.grades.items())})
    if question.not_relevant:  # the seventh element, after the grades ({} when none): old sets keep their digest
        record.append(sorted(_nfc(doc) for doc in question.not_relevant))
    return record


_question_record = question_record  # the name tests/test_judged_negatives.py reads

_LABEL_FIELDS = operator.attrgetter("id", "text", "form", "hard_class", "expected", "grades", "not_relevant")


def _record_as_written(
    qid: str,
    text: str,
    form: str,
    hard_class: str | None,
    expected: frozenset[str],
    grades: dict[str, int],
    not_relevant: frozenset[str],
) -> tuple[object, ...]:
    """One question's record with its strings as they are (:func:`question_record`'s shape)."""
    if not_relevant:
        return (qid, text, form, hard_class, sorted(expected), dict(sorted(grades.items())), sorted(not_relevant))
    if grades:
        return (qid, text, form, hard_class, sorted(expected), dict(sorted(grades.items())))
    return (qid, text, form, hard_class, sorted(expected))


def _label_text_as_written(questions: Iterable[GoldenQuestion]) -> str:
    """The canonical encoding (as text) of ``questions`` with their strings as they are:
    the canonical encoding itself when every string is NFC.

    Built with as little Python per question as possible: a C getter, tuples (which JSON
    writes as arrays), one sort by a C key.  ``form`` is a ``StrEnum``: JSON writes its value.
    """
    records = [
        _record_as_written(*fields) if fields[5] or fields[6] else (*fields[:4], sorted(fields[4]))
        for fields in map(_LABEL_FIELDS, questions)
    ]
    records.sort(key=operator.itemgetter(0))
    return canonical_text({"version": LABEL_DIGEST_VERSION, "questions": records})


def canonical_label_encoding(questions: Iterable[GoldenQuestion]) -> bytes:
    """The versioned canonical encoding the label digest hashes (docs/label-digest.md).

    Normalising string by string was most of the cost of a large set, and nearly always a
    no-op.  So the encoding is first written with the strings as they are.  When that text
    is NFC (at once when it is ASCII), every string in it is, and it is the encoding: each
    string lies between quotes, which never compose or reorder with a neighbour, and JSON's
    escapes replace only ASCII characters that do neither.  Otherwise (rare: decomposed
    text, or an escape such as ``\\n`` before a combining mark) it is rebuilt string by
    string.
    """
    questions = tuple(questions)
    text = _label_text_as_written(questions)
    if text.isascii() or unicodedata.is_normalized("NFC", text):
        return text.encode("utf-8")
    records = sorted((question_record(q) for q in questions), key=lambda record: record[0])
    return canonical_json({"version": LABEL_DIGEST_VERSION, "questions": records})


def label_digest(golden_set: GoldenQuestionSet) -> str:
    """``labels-v1:sha256:<hex>`` over id, text, form, hard class, expected ids, grades and
    judged non-relevant ids of every question; independent of question and target order; blind to ``answer_gist``.

    Worked out once per set object: the Dagster job asks for the digest of the same loaded
    set in two steps, and it costs 1.7 us a question.  A set is frozen, but a question's
    ``grades`` is a dict: one changed in place after its digest was taken would keep the old
    digest (nothing in goldeneval changes a loaded set)."""
    key = id(golden_set)
    known = _DIGESTS.get(key)
    if known is not None and known[0]() is golden_set:
        return known[1]
    encoded = canonical_label_encoding(golden_set.questions)
    digest = f"{LABEL_DIGEST_VERSION}:sha256:{hashlib.sha256(encoded).hexdigest()}"
    # The entry goes when the set does: an id is reused only once its object is gone.  No
    # lock: a dict's get, set and pop are atomic, and a lock taken here could be wanted again
    # by the callback of another set that a garbage collection frees meanwhile (a deadlock).
    _DIGESTS[key] = (weakref.ref(golden_set, functools.partial(_forget, key)), digest)
    return digest


_DIGESTS: dict[int, tuple[weakref.ref[GoldenQuestionSet], str]] = {}
"""The digest of each set object alive that :func:`label_digest` was asked for, by id."""


def _forget(key: int, gone: weakref.ref[GoldenQuestionSet]) -> None:
    """Drop the entry of a set that is gone, unless a later set already took its id."""
    known = _DIGESTS.get(key)
    if known is not None and known[0] is gone:
        _DIGESTS.pop(key, None)
