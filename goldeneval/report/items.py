"""A run's questions as a comparison reads them, whatever its kind: retrieval details (the
columns of :mod:`goldeneval.retrieval.details`), prompt and answer details
(:mod:`goldeneval.prompts.details`), or, for any other declared kind, what every kind's details
say (:class:`goldeneval.core.kinds.RunDetails`: per scored question, the outcome behind each
binary rate); each question one :class:`~goldeneval.report.model.Side`.

The expected documents of the set at hand give each retrieval question its first relevant
rank (among every stored document) and its relevant marks (among the shown ones); under
``metadata_only`` a side keeps outcomes, ranks and scores only (:func:`withheld`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from goldeneval.core.kinds import UNKEYED_KIND
from goldeneval.core.records import StoredRun
from goldeneval.report.model import SHOWN_DOCUMENTS, Side
from goldeneval.report.sources import Sources

__all__ = ["Items", "items_of", "withheld"]


@dataclass(frozen=True)
class Items:
    """A run's questions as the comparison reads them, whatever its kind."""

    ids: list[str]
    forms: list[str | None]
    hard_classes: list[str | None]
    sides: list[Side]
    rates: tuple[str, ...]
    rate_columns: tuple[str, ...]
    metrics: Mapping[str, float]


def _first_relevant(
    ids: Sequence[str], lists: Sequence[Sequence[str]] | None, expected: Mapping[str, frozenset[str]]
) -> list[int | None]:
    if lists is None or not expected:
        return [None] * len(ids)
    found: list[int | None] = []
    for question, documents in zip(ids, lists, strict=True):
        relevant = expected.get(question)
        rank = next((i + 1 for i, d in enumerate(documents) if relevant and d in relevant), None)
        found.append(rank)
    return found


def _relevant_shown(
    ids: Sequence[str], tops: Sequence[Sequence[str]] | None, expected: Mapping[str, frozenset[str]]
) -> list[tuple[int, ...] | None]:
    """Per question, the ranks of its shown documents that are expected (None: not at hand)."""
    if tops is None or not expected:
        return [None] * len(ids)
    return [
        tuple(rank for rank, document in enumerate(top, 1) if document in expected.get(question, ()))
        for question, top in zip(ids, tops, strict=True)
    ]


def _retrieval_items(run: StoredRun, sources: Sources) -> Items:
    from goldeneval.retrieval.details import RetrievalDetails

    details = run.details_as(RetrievalDetails)
    columns = details.columns
    lists = columns.document_lists() if sources.expected else None
    tops = columns.top_documents(SHOWN_DOCUMENTS)
    first = _first_relevant(columns.id, lists, sources.expected)
    relevant = _relevant_shown(columns.id, tops, sources.expected)
    unjudged = columns.unjudged_ranks
    sides = [
        Side(
            status=columns.status[i],
            outcomes=(columns.top1_hit[i], columns.top3_hit[i]),
            documents=None if tops is None else tuple(tops[i]),
            first_relevant=first[i],
            depth=columns.depth[i],
            unjudged=None if unjudged is None else tuple(unjudged[i]),
            relevant=relevant[i],
            error=columns.error[i],
        )
        for i in range(len(columns))
    ]
    names = details.rate_names
    return Items(
        list(columns.id),
        list(columns.form),
        list(columns.hard_class),
        sides,
        (names["pass_rate"], names["mean_score"]),
        ("pass_rate", "mean_score"),
        dict(details.aggregates.metrics),
    )


def _prompt_items(run: StoredRun) -> Items:
    from goldeneval.prompts.details import PromptDetails

    details = run.details_as(PromptDetails)
    sides = [
        Side(
            status=p.status,
            outcomes=(p.passed,),
            documents=None if p.documents is None else tuple(p.documents[:SHOWN_DOCUMENTS]),
            answer=p.answer,
            score=p.score,
            reason=p.reason or _failed_assertions(p.assertions),
            error=p.error,
        )
        for p in details.prompts
    ]
    return Items(
        [p.id for p in details.prompts],
        [p.form for p in details.prompts],
        [p.hard_class for p in details.prompts],
        sides,
        (details.rate_names["pass_rate"],),
        ("pass_rate",),
        {},
    )


def _failed_assertions(assertions: Sequence[Any]) -> str | None:
    """Why assertions graded an answer down, where no judge or reference gave a reason: each
    failed assertion's message (None under ``metadata_only``, which keeps no message)."""
    failed = [f"{a.type}: {a.message}" for a in assertions if not a.passed and a.message]
    return "; ".join(failed) or None


def _outcome_items(run: StoredRun) -> Items:
    """The questions of a run of another declared kind: those its details pair a binary rate
    over (:meth:`~goldeneval.core.kinds.RunDetails.paired_outcomes`), each with its outcome per
    binary rate (None where a rate did not score it); no documents, forms or hard classes."""
    names = run.details.rate_names
    rates: list[tuple[str, dict[str, bool]]] = []
    for column in ("pass_rate", "mean_score"):
        outcomes = run.paired_outcomes(column)
        if outcomes is not None:
            rates.append((column, dict(zip(outcomes.ids, outcomes.hits.tolist(), strict=True))))
    ids = list(dict.fromkeys(question for _, outcomes in rates for question in outcomes))
    sides = [Side(status="ok", outcomes=tuple(o.get(q) for _, o in rates), documents=None) for q in ids]
    return Items(
        ids,
        [None] * len(ids),
        [None] * len(ids),
        sides,
        tuple(names[column] for column, _ in rates),
        tuple(column for column, _ in rates),
        {},
    )


_PROMPT_KINDS = ("prompts", "answers")
"""The ``kind`` keys of :class:`goldeneval.prompts.details.PromptDetails`."""


def items_of(run: StoredRun, sources: Sources) -> tuple[str, Items]:
    kind = getattr(run.details, "kind", None) or UNKEYED_KIND
    if kind == UNKEYED_KIND:
        return kind, _retrieval_items(run, sources)
    if kind in _PROMPT_KINDS:
        return kind, _prompt_items(run)
    return kind, _outcome_items(run)


def withheld(items: Items) -> Items:
    """The items without content (``metadata_only``): ids, outcomes, ranks and scores only."""
    sides = [
        Side(
            side.status,
            side.outcomes,
            None,
            side.first_relevant,
            side.depth,
            side.unjudged,
            score=side.score,
            error=None if side.error is None else "error (message withheld: metadata_only)",
        )
        for side in items.sides
    ]
    return Items(items.ids, items.forms, items.hard_classes, sides, items.rates, items.rate_columns, items.metrics)
