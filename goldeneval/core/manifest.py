"""The benchmark manifest (issue 43): what a benchmark held, per document and per question,
without its content, so a mismatch can say what changed.

A benchmark fingerprint (:mod:`goldeneval.core.provenance`) is one hash over the corpus
revision, the label digest and the scoring protocol: two runs on different benchmarks learn
only *that* they differ.  The manifest of a benchmark is kept by the store once per
fingerprint, beside the runs that measured it:

* per document of the corpus the run measured: its id and a digest of its title and text
  (``documents``), or, under ``metadata_only``, nothing but the number of documents;
* per question: a digest of its labels (what the label digest covers for that question: id,
  text, form, hard class, expected ids, grades, judged negatives) and a digest of the
  documents it judges (each judged id with its content digest), keyed by question id.
  Question ids are kept in every privacy mode (ADR-215 decision 5); no digest spells a
  document id or any text.

:func:`benchmark_change` compares two manifests: documents added, removed, changed (named
only where both manifests hold ids and both runs may show them), questions whose labels
changed, and the questions unchanged on both counts, which :mod:`goldeneval.history.comparison`
compares as an informational result with no numeric verdict
(:class:`InformationalComparison`).
"""

from __future__ import annotations

import json
from collections.abc import ItemsView, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import numpy as np

from goldeneval.core.errors import StoreError
from goldeneval.core.privacy import PrivacyMode

__all__ = [
    "INFORMATIONAL",
    "LISTED_IDS",
    "MANIFEST_VERSION",
    "BenchmarkChange",
    "BenchmarkManifest",
    "InformationalComparison",
    "InformationalRate",
    "QuestionDigests",
    "benchmark_change",
    "listed",
]

MANIFEST_VERSION = "manifest-v1"
LISTED_IDS = 10
"""Ids a reason names of each kind of change before ``and N more``."""
INFORMATIONAL = "informational, no numeric verdict"
"""How every renderer marks the comparison of the unchanged questions."""
DIGEST_BYTES = 16
"""A digest's bytes (the first 128 bits of a SHA-256; 32 hex digits)."""
_JSON_CHUNK = 8192
"""Questions serialised at a time by :meth:`BenchmarkManifest.to_json_text`."""


class QuestionDigests(Mapping[str, tuple[str, str | None]]):
    """Question id -> (labels digest, judged-documents digest or None), held compactly: the
    ids in one numpy ``StringDType`` array and each kind of digest as one ``bytes`` of 16
    bytes a question, so a manifest of 1,000,000 questions holds about 50 MB and no Python
    object per question (a dict of id strings and hex tuples held 250 MB, and its ids, the
    set's own strings, kept blocks of the set's freed memory from the system).  The hex
    digests are made when read; the id -> position index when first looked up."""

    __slots__ = ("_ids", "_index", "_judged", "_labels")

    def __init__(self, ids: Sequence[str], labels: bytes, judged: bytes | None) -> None:
        """``labels`` (and ``judged``, None when the corpus was not at hand): the questions'
        digests in the order of ``ids``, :data:`DIGEST_BYTES` each.  The ids are unique."""
        count = len(ids)
        if len(labels) != count * DIGEST_BYTES or (judged is not None and len(judged) != count * DIGEST_BYTES):
            raise ValueError(f"{count} question ids need {count * DIGEST_BYTES} bytes of digests each")
        try:
            self._ids: np.ndarray = np.array(ids, dtype=np.dtypes.StringDType())
        except UnicodeEncodeError:  # a lone surrogate (an API caller's id): kept as Python strings
            self._ids = np.empty(count, dtype=object)
            self._ids[:] = list(ids)
        self._labels = labels
        self._judged = judged
        self._index: dict[str, int] | None = None

    def __len__(self) -> int:
        return len(self._ids)

    def __iter__(self) -> Iterator[str]:
        for start in range(0, len(self._ids), _JSON_CHUNK):
            yield from self._ids[start : start + _JSON_CHUNK].tolist()

    def __getitem__(self, question_id: str) -> tuple[str, str | None]:
        if self._index is None:
            self._index = {q: i for i, q in enumerate(self)}
        return self._entry(self._index[question_id])

    def __contains__(self, question_id: object) -> bool:
        if self._index is None:
            self._index = {q: i for i, q in enumerate(self)}
        return question_id in self._index

    def _entry(self, i: int) -> tuple[str, str | None]:
        at = slice(i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES)
        return self._labels[at].hex(), None if self._judged is None else self._judged[at].hex()

    def items(self) -> ItemsView[str, tuple[str, str | None]]:
        return _PositionalItems(self)

    def _items(self) -> Iterator[tuple[str, tuple[str, str | None]]]:
        """Every (id, entry) in order, by position: no index needed."""
        for position, question_id in enumerate(self):
            yield question_id, self._entry(position)

    def __repr__(self) -> str:
        judged = "unknown" if self._judged is None else "known"
        return f"QuestionDigests({len(self)} questions, judged documents {judged})"


class _PositionalItems(ItemsView[str, tuple[str, str | None]]):
    _mapping: QuestionDigests

    def __iter__(self) -> Iterator[tuple[str, tuple[str, str | None]]]:
        return self._mapping._items()


def _json_entries(entries: Iterable[tuple[str, Any]]) -> Iterator[str]:
    """The JSON object members ``"key":value`` of ``entries``, as ``json.dumps`` of the whole
    dict writes them (compact, UTF-8 kept), a chunk of them at a time, the ``,`` between
    chunks included: the text of a dict without a dict of every entry beside it."""
    entries = iter(entries)
    first = True
    while chunk := dict(islice(entries, _JSON_CHUNK)):
        text = json.dumps(chunk, separators=(",", ":"), ensure_ascii=False)
        if not first:
            yield ","
        first = False
        yield text[1:-1]


@dataclass(frozen=True)
class BenchmarkManifest:
    """One benchmark's manifest: content-free digests per document and per question."""

    benchmark_fingerprint: str
    privacy: PrivacyMode
    """What it holds: ``full`` keeps document ids, ``metadata_only`` only their number."""
    document_count: int | None
    """Documents of the corpus the run measured; None when that corpus was not at hand."""
    documents: Mapping[str, str] | None
    """Document id -> digest of its title and text; None when withheld or not at hand."""
    questions: Mapping[str, tuple[str, str | None]]
    """Question id -> (digest of its labels, digest of the documents it judges: None when
    the corpus the run measured was not at hand)."""

    def for_privacy(self, privacy: PrivacyMode) -> BenchmarkManifest:
        """What a run under ``privacy`` may persist: no document id under ``metadata_only``."""
        if privacy is PrivacyMode.FULL or self.privacy is PrivacyMode.METADATA_ONLY:
            return self
        return BenchmarkManifest(
            self.benchmark_fingerprint, PrivacyMode.METADATA_ONLY, self.document_count, None, self.questions
        )

    def to_json_text(self) -> str:
        """The manifest as the store keeps it: ``json.dumps`` of ``{"version", "privacy",
        "document_count", "documents", "questions": {id: [labels, judged]}}``, compact, the
        questions serialised a chunk at a time (no second dict of lists per question)."""
        head = json.dumps(
            {
                "version": MANIFEST_VERSION,
                "privacy": self.privacy.value,
                "document_count": self.document_count,
                "documents": None if self.documents is None else dict(self.documents),
            },
            separators=(",", ":"),
            ensure_ascii=False,
        )
        questions = ((q, list(entry)) for q, entry in self.questions.items())
        return "".join([head[:-1], ',"questions":{', *_json_entries(questions), "}}"])

    @classmethod
    def from_json_text(cls, fingerprint: str, text: str, where: str) -> BenchmarkManifest:
        try:
            raw: Any = json.loads(text)
            if raw.get("version") != MANIFEST_VERSION:
                raise ValueError(f"unknown version {raw.get('version')!r}")
            documents = raw["documents"]
            return cls(
                fingerprint,
                PrivacyMode(raw["privacy"]),
                raw["document_count"],
                None if documents is None else {str(k): str(v) for k, v in documents.items()},
                {str(q): (str(entry[0]), entry[1]) for q, entry in raw["questions"].items()},
            )
        except (ValueError, KeyError, TypeError, AttributeError, IndexError) as exc:
            raise StoreError(f"{where}: the manifest of benchmark {fingerprint} cannot be read: {exc}") from None


def listed(ids: Sequence[str], limit: int = LISTED_IDS) -> str:
    """The first ``limit`` ids, then ``and N more``."""
    shown = ", ".join(ids[:limit])
    return shown + (f" and {len(ids) - limit} more" if len(ids) > limit else "")


def _counted(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


@dataclass(frozen=True)
class BenchmarkChange:
    """What changed between two benchmarks, from their manifests."""

    named: bool
    """Whether the reason may name ids (both runs are ``full``); counts otherwise.  Documents
    are named only where both manifests hold their ids (:attr:`documents_known`)."""
    documents_known: bool
    """Both manifests hold document ids: added, removed and changed are known."""
    corpus_changed: bool
    """The runs declare different corpus revisions."""
    document_counts: tuple[int | None, int | None]
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    labels_changed: tuple[str, ...] = ()
    """Questions in both benchmarks whose labels differ."""
    questions_added: tuple[str, ...] = ()
    questions_removed: tuple[str, ...] = ()
    expected_changed: tuple[str, ...] = ()
    """Questions whose labels held but whose judged documents' text (or presence) changed."""
    expected_known: bool = True
    """Both manifests know each question's judged documents (the corpus was at hand)."""
    unchanged: tuple[str, ...] = field(default=(), repr=False)
    """Questions whose labels and judged documents did not change (what is compared)."""

    def _ids(self, ids: Sequence[str]) -> str:
        return f": {listed(ids)}" if self.named and ids else ""

    def parts(self) -> list[str]:
        """The changes, each a phrase, ids named where allowed (at most :data:`LISTED_IDS` each)."""
        parts: list[str] = []
        if self.documents_known:
            for ids, what in ((self.changed, "changed"), (self.added, "added"), (self.removed, "removed")):
                if ids:
                    parts.append(f"{_counted(len(ids), 'document')} {what}{self._ids(ids)}")
        elif self.corpus_changed:
            before, now = self.document_counts
            if before is not None and now is not None:
                why = "document ids are not kept under metadata_only"
                parts.append(f"corpus changed ({before} -> {now} documents; {why})")
        if self.labels_changed:
            parts.append(
                f"labels changed for {_counted(len(self.labels_changed), 'question')}{self._ids(self.labels_changed)}"
            )
        for ids, what in ((self.questions_added, "added"), (self.questions_removed, "removed")):
            if ids:
                parts.append(f"{_counted(len(ids), 'question')} {what}{self._ids(ids)}")
        if self.expected_changed:
            parts.append(
                f"{_counted(len(self.expected_changed), 'question')} with unchanged labels "
                f"judge{'s' if len(self.expected_changed) == 1 else ''} a changed document"
                f"{self._ids(self.expected_changed)}"
            )
        return parts

    def to_dict(self) -> dict[str, object]:
        def ids(values: Sequence[str]) -> list[str] | None:
            return list(values) if self.named else None

        known = self.documents_known
        return {
            "ids_shown": self.named,
            "documents": {
                "earlier_count": self.document_counts[0],
                "current_count": self.document_counts[1],
                "known": known,
                "added": len(self.added) if known else None,
                "removed": len(self.removed) if known else None,
                "changed": len(self.changed) if known else None,
                "added_ids": ids(self.added) if known else None,
                "removed_ids": ids(self.removed) if known else None,
                "changed_ids": ids(self.changed) if known else None,
            },
            "questions": {
                "labels_changed": len(self.labels_changed),
                "added": len(self.questions_added),
                "removed": len(self.questions_removed),
                "judged_documents_changed": len(self.expected_changed),
                "unchanged": len(self.unchanged),
                "labels_changed_ids": list(self.labels_changed),
                "added_ids": list(self.questions_added),
                "removed_ids": list(self.questions_removed),
                "judged_documents_changed_ids": list(self.expected_changed),
            },
        }


def benchmark_change(
    earlier: BenchmarkManifest, current: BenchmarkManifest, *, named: bool, same_corpus: bool = False
) -> BenchmarkChange:
    """What changed from ``earlier`` to ``current``.  ``named``: both runs may show ids;
    documents are named only where both manifests hold them too.  Question ids are listed
    in the JSON in every mode (ADR-215 allows them); the reason names them only when
    ``named``.  ``same_corpus``: both runs declare the same corpus revision, so no judged
    document changed even where the corpus was not at hand to digest."""
    known = earlier.documents is not None and current.documents is not None
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    if earlier.documents is not None and current.documents is not None:
        before, now = earlier.documents, current.documents
        added = tuple(sorted(set(now) - set(before)))
        removed = tuple(sorted(set(before) - set(now)))
        changed = tuple(sorted(d for d in now if d in before and now[d] != before[d]))
    then, now_q = earlier.questions, current.questions
    labels_changed = tuple(sorted(q for q in now_q if q in then and now_q[q][0] != then[q][0]))
    expected_known = same_corpus or all(entry[1] is not None for entry in (*then.values(), *now_q.values()))
    expected_changed = tuple(
        sorted(
            q
            for q in now_q
            if q in then and now_q[q][0] == then[q][0] and now_q[q][1] != then[q][1] and not same_corpus
        )
    )
    unchanged = (
        tuple(q for q in now_q if q in then and now_q[q][0] == then[q][0] and (same_corpus or now_q[q] == then[q]))
        if expected_known
        else ()
    )
    return BenchmarkChange(
        named=named,
        documents_known=known,
        corpus_changed=not same_corpus,
        document_counts=(earlier.document_count, current.document_count),
        added=added,
        removed=removed,
        changed=changed,
        labels_changed=labels_changed,
        questions_added=tuple(sorted(set(now_q) - set(then))),
        questions_removed=tuple(sorted(set(then) - set(now_q))),
        expected_changed=expected_changed,
        expected_known=expected_known,
        unchanged=unchanged,
    )


@dataclass(frozen=True)
class InformationalRate:
    """One rate of both runs over the unchanged questions both scored."""

    rate: str
    questions: int
    earlier: float
    current: float
    newly_failing: tuple[str, ...]
    newly_passing: tuple[str, ...]
    p_value: float
    interval: tuple[float, float]

    def to_dict(self) -> dict[str, object]:
        return {
            "rate": self.rate,
            "questions": self.questions,
            "earlier": self.earlier,
            "current": self.current,
            "change": self.current - self.earlier,
            "newly_failing": list(self.newly_failing),
            "newly_passing": list(self.newly_passing),
            "mcnemar_p": self.p_value,
            "bootstrap_95": list(self.interval),
        }

    def describe(self) -> str:
        low, high = self.interval
        return (
            f"{self.rate} {self.earlier:.3f} -> {self.current:.3f} ({self.current - self.earlier:+.3f}) over "
            f"{self.questions} questions; {len(self.newly_failing)} newly failing, {len(self.newly_passing)} "
            f"newly passing; McNemar p={self.p_value:.3g}; 95% bootstrap interval [{low:+.3f}, {high:+.3f}]"
        )


@dataclass(frozen=True)
class InformationalComparison:
    """The paired rates of a mismatch on the questions whose labels and judged documents did
    not change: shown to a person, never gated (the state stays ``mismatch``)."""

    unchanged: int
    """Questions of the current benchmark unchanged since the earlier one."""
    left_out: int
    """Questions of the current benchmark left out: labels or judged documents changed, or new."""
    rates: tuple[InformationalRate, ...]

    @property
    def heading(self) -> str:
        return (
            f"{INFORMATIONAL}: the {_counted(self.unchanged, 'question')} whose labels and judged documents "
            f"did not change ({self.left_out} left out)"
        )

    def lines(self, limit: int | None = LISTED_IDS) -> list[str]:
        lines = [f"  {self.heading}:"]
        for rate in self.rates:
            lines.append(f"    {rate.describe()}")
            if rate.newly_failing:
                shown = listed(rate.newly_failing, limit) if limit is not None else ", ".join(rate.newly_failing)
                lines.append(f"      newly failing: {shown}")
        return lines

    def to_dict(self) -> dict[str, object]:
        return {
            "note": INFORMATIONAL,
            "numeric_verdict": False,
            "unchanged_questions": self.unchanged,
            "left_out_questions": self.left_out,
            "rates": [rate.to_dict() for rate in self.rates],
        }
