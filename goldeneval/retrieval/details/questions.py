"""The questions of a retrieval run's details: one record each (formats 1 to 3) or columns (4 and 5).

:class:`QuestionDetail` is one question as the evaluator measured it (never its text);
:class:`QuestionColumns` holds the same fields as one list per field, one entry per question in
set order, so that a large run is written and read without a Python object per question; the
documents are :class:`~goldeneval.retrieval.details.documents.DocumentColumns`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any, Literal, Self

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from goldeneval.core.privacy import content_free_error, withheld
from goldeneval.retrieval.details.base import DetailRecord, absent
from goldeneval.retrieval.details.documents import DocumentColumns

__all__ = ["QuestionColumns", "QuestionDetail"]


class QuestionDetail(DetailRecord):
    """One question of a stored run: what the evaluator measured, never its text."""

    id: str
    form: str
    hard_class: str | None
    documents: list[str] | None = Field(default=None, exclude_if=withheld)
    """Distinct returned document ids, best first, to the measurement depth (format 1 and 2:
    at most 10); None in ``metadata_only``."""
    depth: int | None = None
    """Distinct documents the ranking reached; None for an error and before format 3."""
    top1_hit: bool | None
    """None when the question errored (errors have no verdict)."""
    top3_hit: bool | None
    latency_ms: float
    status: Literal["ok", "error"]
    error: str | None
    metrics: dict[str, float]
    judged_at: dict[str, float] | None = Field(default=None, exclude_if=absent)
    """judged@k where defined (format 5, sets with judged negatives only)."""
    unjudged_ranks: list[int] | None = Field(default=None, exclude_if=absent)
    """Ranks of the top-3 documents that carry no judgment (format 5)."""
    unjudged_relevant: dict[str, float] | None = Field(default=None, exclude_if=absent)
    """Each rank metric with every unjudged document of its top k judged relevant: the other
    end of its bounds (format 5, sets with judged negatives, not on condensed lists)."""

    @property
    def scored(self) -> bool:
        return self.status == "ok"

    def without_content(self) -> QuestionDetail:
        """The ``metadata_only`` form: no document ids, an error reduced to its class."""
        return self.model_copy(update={"documents": None, "error": content_free_error(self.error)})

    def to_json(self) -> dict[str, Any]:
        """As the store and ``--format json`` hold it: ``documents`` absent when withheld."""
        return self.model_dump(mode="json")


_NAMED_AT_ONCE = 1 << 16
"""Documents :meth:`QuestionColumns.document_lists_one_by_one` names (looks up in the
vocabulary) at a time: a list of that many, not of a whole decompressed block."""


class QuestionColumns(DetailRecord):
    """Format 4's ``questions``: one list per field of :class:`QuestionDetail`, one entry per
    question in set order.  A metric is None where it is undefined for the question (an error,
    or a question without expected documents), where a record leaves the name out."""

    id: list[str]
    form: list[str]
    hard_class: list[str | None]
    depth: list[int | None]
    top1_hit: list[bool | None]
    top3_hit: list[bool | None]
    latency_ms: list[float]
    status: list[Literal["ok", "error"]]
    error: list[str | None]
    metrics: dict[str, list[float | None]]
    documents: DocumentColumns | None = Field(default=None, exclude_if=withheld)
    """None in ``metadata_only``."""
    judged_at: dict[str, list[float | None]] | None = Field(default=None, exclude_if=absent)
    """Format 5: judged@k per question, None where undefined (no judgment, an empty ranking,
    an error); absent for a set without judged negatives."""
    unjudged_ranks: list[list[int]] | None = Field(default=None, exclude_if=absent)
    """Format 5: per question, the ranks among its top-3 documents that carry no judgment.
    Ranks, not ids, so it is kept in ``metadata_only`` too; the ids are the documents at
    those ranks, where the documents are kept."""
    unjudged_relevant: dict[str, list[float | None]] | None = Field(default=None, exclude_if=absent)
    """Format 5: each rank metric per question with every unjudged document of its top k
    judged relevant (None where the metric is undefined); absent without judged negatives
    and on condensed lists.  Numbers only: kept in ``metadata_only``."""

    @model_validator(mode="after")
    def _one_entry_per_question(self) -> Self:
        count = len(self.id)
        columns: dict[str, list[Any]] = {
            "form": self.form,
            "hard_class": self.hard_class,
            "depth": self.depth,
            "top1_hit": self.top1_hit,
            "top3_hit": self.top3_hit,
            "latency_ms": self.latency_ms,
            "status": self.status,
            "error": self.error,
        }
        columns.update({f"metrics.{name}": values for name, values in self.metrics.items()})
        columns.update({f"judged_at.{name}": values for name, values in (self.judged_at or {}).items()})
        columns.update({f"unjudged_relevant.{name}": values for name, values in (self.unjudged_relevant or {}).items()})
        if self.unjudged_ranks is not None:
            columns["unjudged_ranks"] = self.unjudged_ranks
        for name, values in columns.items():
            if len(values) != count:
                raise ValueError(f"{name}: {len(values)} entries for {count} questions")
        # An error has no depth and no verdicts; a scored question has all three.  (The depths
        # also split the documents among the questions: a wrong one would move documents.)
        failed = [status == "error" for status in self.status]
        for name in ("depth", "top1_hit", "top3_hit"):
            missing = [value is None for value in getattr(self, name)]
            if missing != failed:
                i = next(i for i, (m, f) in enumerate(zip(missing, failed, strict=True)) if m != f)
                state = "an error" if failed[i] else "scored"
                raise ValueError(
                    f"{name}: question {self.id[i]!r} is {state} but its {name} is {getattr(self, name)[i]!r}"
                )
        if any(depth is not None and depth < 0 for depth in self.depth):
            raise ValueError("depth: a depth below 0")
        if self.documents is not None:
            stored, expected = self.documents.count, int(self.document_counts().sum())
            if stored != expected:
                raise ValueError(f"documents.count: {stored} codes where depth adds up to {expected}")
        return self

    _counts: np.ndarray | None = PrivateAttr(default=None)
    """Documents per question where the depth does not say (records before format 3)."""

    def __eq__(self, other: object) -> bool:
        """The fields only (not what was derived from them)."""
        if not isinstance(other, QuestionColumns):
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in QuestionColumns.model_fields)

    def __len__(self) -> int:
        return len(self.id)

    def document_counts(self) -> np.ndarray:
        """How many documents each question has stored (its depth; none for an error)."""
        if self._counts is not None:
            return self._counts
        return np.fromiter((d or 0 for d in self.depth), dtype=np.int64, count=len(self.depth))

    def document_lists(self) -> list[list[str]] | None:
        """Each question's documents, best first; None when withheld (``metadata_only``)."""
        if self.documents is None:
            return None
        vocabulary = np.asarray(self.documents.vocabulary, dtype=object)
        documents: list[str] = vocabulary[self.documents.decoded()].tolist() if len(vocabulary) else []
        bounds = np.concatenate(([0], np.cumsum(self.document_counts()))).tolist()
        return [documents[bounds[i] : bounds[i + 1]] for i in range(len(self))]

    def document_lists_one_by_one(self, documents: DocumentColumns) -> Iterator[list[str]]:
        """Each question's documents (of ``documents``, these columns' own), best first, one
        question at a time: the codes are decompressed a block at a time and the documents of
        the questions a block holds made together, so ``--format json`` holds no list of every
        question's documents (100 a question: about 1.2 KB each, 56 MiB at 50,000 questions)."""
        vocabulary = np.asarray(documents.vocabulary, dtype=object)
        bounds = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(self.document_counts(), out=bounds[1:])
        blocks = documents.code_blocks()
        held, held_from = np.empty(0, dtype="<u4"), 0  # the codes read but not yet given out
        question = 0
        while question < len(self):
            while held_from + held.size < bounds[question + 1]:  # this question's codes are not all read
                # there are as many codes as the depths add up to (validated), or a store error
                held = np.concatenate((held, next(blocks)))
            # the questions whose codes are all read, about _NAMED_AT_ONCE documents of them
            read = int(np.searchsorted(bounds, held_from + held.size, side="right")) - 1
            named = int(np.searchsorted(bounds, bounds[question] + _NAMED_AT_ONCE, side="right")) - 1
            last = max(question + 1, min(read, named))
            names: list[str] = vocabulary[held[: bounds[last] - held_from]].tolist()
            if last == len(self):  # every code is read: check that no byte follows the last one
                next(blocks, None)  # (before the last lists: a consumer stops at the last question)
            local = (bounds[question : last + 1] - bounds[question]).tolist()
            for begin, end in itertools.pairwise(local):
                yield names[begin:end]
            held, held_from, question = held[bounds[last] - held_from :], int(bounds[last]), last

    def document_lists_in(self, order: Sequence[int]) -> Iterator[list[str]]:
        """The documents of the questions ``order`` lists, one question at a time: in set order
        from codes decompressed a block at a time (:meth:`document_lists_one_by_one`); in any
        other order from the codes decoded whole (4 bytes a document, never a string each).
        An empty list for each question when the documents are withheld (``metadata_only``)."""
        if self.documents is None:
            return (list[str]() for _ in order)
        if all(i == position for position, i in enumerate(order)) and len(order) == len(self):
            return self.document_lists_one_by_one(self.documents)
        vocabulary = np.asarray(self.documents.vocabulary, dtype=object)
        return (vocabulary[codes].tolist() for codes in self.document_codes_in(order))

    def document_codes_in(self, order: Sequence[int]) -> Iterator[np.ndarray]:
        """The documents of the questions ``order`` lists as codes into ``documents.vocabulary``
        (none when withheld), from the codes decoded whole."""
        if self.documents is None:
            return (np.empty(0, dtype="<u4") for _ in order)
        codes = self.documents.decoded()
        bounds = np.zeros(len(self) + 1, dtype=np.int64)
        np.cumsum(self.document_counts(), out=bounds[1:])
        return (codes[bounds[i] : bounds[i + 1]] for i in order)

    def top_codes(self, k: int) -> tuple[np.ndarray, np.ndarray] | None:
        """Each question's first ``k`` documents as codes into ``documents.vocabulary``: question
        ``i`` has ``codes[bounds[i]:bounds[i + 1]]``; ``(bounds, codes)``, None when withheld.
        Read without decoding every document (:meth:`DocumentColumns.picked`)."""
        if self.documents is None:
            return None
        counts = self.document_counts()
        starts = np.concatenate(([0], np.cumsum(counts)[:-1])) if len(counts) else counts
        shown = np.minimum(counts, k)
        take = np.repeat(starts, shown) + (np.arange(int(shown.sum())) - np.repeat(np.cumsum(shown) - shown, shown))
        codes = self.documents.picked(take) if take.size else np.zeros(0, dtype="<u4")
        return np.concatenate(([0], np.cumsum(shown))), codes

    def top_documents(self, k: int) -> list[list[str]] | None:
        """Each question's first ``k`` documents (what a report shows), without decoding the rest."""
        top = self.top_codes(k)
        if top is None or self.documents is None:
            return None
        bounds_array, codes = top
        vocabulary = np.asarray(self.documents.vocabulary, dtype=object)
        documents: list[str] = vocabulary[codes].tolist() if codes.size else []
        bounds = bounds_array.tolist()
        return [documents[bounds[i] : bounds[i + 1]] for i in range(len(self))]

    def rows(self) -> list[QuestionDetail]:
        """The same questions as records (formats 1 to 3's shape)."""
        documents = self.document_lists()
        names = list(self.metrics)
        metric_rows = zip(*(self.metrics[name] for name in names), strict=True) if names else ([] for _ in self.id)
        shares = self.judged_at
        unjudged = self.unjudged_ranks
        ends = self.unjudged_relevant
        return [
            QuestionDetail.model_construct(
                id=self.id[i],
                form=self.form[i],
                hard_class=self.hard_class[i],
                documents=None if documents is None else documents[i],
                depth=self.depth[i],
                top1_hit=self.top1_hit[i],
                top3_hit=self.top3_hit[i],
                latency_ms=self.latency_ms[i],
                status=self.status[i],
                error=self.error[i],
                metrics={name: value for name, value in zip(names, values, strict=True) if value is not None},
                judged_at=None
                if shares is None
                else {name: share for name, share in ((n, c[i]) for n, c in shares.items()) if share is not None},
                unjudged_ranks=None if unjudged is None else unjudged[i],
                unjudged_relevant=None
                if ends is None
                else {name: value for name, value in ((n, c[i]) for n, c in ends.items()) if value is not None},
            )
            for i, values in enumerate(metric_rows)
        ]

    def json_rows(self) -> Iterator[dict[str, Any]]:
        """Each question as :meth:`QuestionDetail.to_json` gives it, one at a time and without
        a record object (``--format json`` streams these: :mod:`goldeneval.core.json_stream`)."""
        documents = None if self.documents is None else self.document_lists_one_by_one(self.documents)
        names = list(self.metrics)
        metric_columns = [self.metrics[name] for name in names]
        shares = self.judged_at
        unjudged = self.unjudged_ranks
        ends = self.unjudged_relevant
        for i, question_id in enumerate(self.id):
            row: dict[str, Any] = {"id": question_id, "form": self.form[i], "hard_class": self.hard_class[i]}
            if documents is not None:
                row["documents"] = next(documents)
            row["depth"] = self.depth[i]
            row["top1_hit"] = self.top1_hit[i]
            row["top3_hit"] = self.top3_hit[i]
            row["latency_ms"] = self.latency_ms[i]
            row["status"] = self.status[i]
            row["error"] = self.error[i]
            row["metrics"] = {
                name: column[i] for name, column in zip(names, metric_columns, strict=True) if column[i] is not None
            }
            if shares is not None:
                row["judged_at"] = {name: column[i] for name, column in shares.items() if column[i] is not None}
            if unjudged is not None:
                row["unjudged_ranks"] = unjudged[i]
            if ends is not None:
                row["unjudged_relevant"] = {name: column[i] for name, column in ends.items() if column[i] is not None}
            yield row

    @classmethod
    def from_rows(cls, rows: list[QuestionDetail]) -> QuestionColumns:
        """Records (formats 1 to 3) as columns."""
        names = list(dict.fromkeys(name for row in rows for name in row.metrics))
        documents = None
        if all(row.documents is not None for row in rows):
            index: dict[str, int] = {}
            codes = [index.setdefault(doc, len(index)) for row in rows for doc in row.documents or ()]
            documents = DocumentColumns.encode(list(index), np.asarray(codes, dtype=np.int64))
        made = cls.model_construct(
            id=[row.id for row in rows],
            form=[row.form for row in rows],
            hard_class=[row.hard_class for row in rows],
            depth=[row.depth for row in rows],
            top1_hit=[row.top1_hit for row in rows],
            top3_hit=[row.top3_hit for row in rows],
            latency_ms=[row.latency_ms for row in rows],
            status=[row.status for row in rows],
            error=[row.error for row in rows],
            metrics={name: [row.metrics.get(name) for row in rows] for name in names},
            documents=documents,
            judged_at=_named_columns(rows, "judged_at"),
            unjudged_ranks=None
            if all(row.unjudged_ranks is None for row in rows)
            else [row.unjudged_ranks or [] for row in rows],
            unjudged_relevant=_named_columns(rows, "unjudged_relevant"),
        )
        # Before format 3 the depth was not stored: each record's documents say how many it has.
        made._counts = np.fromiter((len(row.documents or ()) for row in rows), dtype=np.int64, count=len(rows))
        return made

    def without_content(self) -> QuestionColumns:
        """The ``metadata_only`` form: no document ids, errors reduced to their class."""
        return self.model_copy(
            update={"documents": None, "error": [None if e is None else content_free_error(e) for e in self.error]}
        )


def _named_columns(
    rows: list[QuestionDetail], field: Literal["judged_at", "unjudged_relevant"]
) -> dict[str, list[float | None]] | None:
    """A per-question mapping of the records (judged@k, or the metrics' other ends) as columns."""
    if all(getattr(row, field) is None for row in rows):
        return None
    names = list(dict.fromkeys(name for row in rows for name in getattr(row, field) or {}))
    return {name: [(getattr(row, field) or {}).get(name) for row in rows] for name in names}
