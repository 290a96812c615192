"""Typed run details for store-level tests: the smallest valid record, with what a test needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldeneval.retrieval.details import AggregatesDetail, QuestionDetail, RateDetail, RetrievalDetails
from goldeneval.retrieval.protocol import OVERFETCH_MULTIPLIER, SCORING_PROTOCOL_REVISION, TOP_K


def question(qid: str, top1: bool | None = True, top3: bool | None = True, **fields: Any) -> QuestionDetail:
    values: dict[str, Any] = {
        "id": qid,
        "form": "MATCH",
        "hard_class": None,
        "documents": [],
        "top1_hit": top1,
        "top3_hit": top3,
        "latency_ms": 1.0,
        "status": "ok" if top1 is not None else "error",
        "error": None,
        "metrics": {},
    }
    values.update(fields)
    return QuestionDetail.model_validate(values)


def details(questions: Sequence[QuestionDetail] = (), **fields: Any) -> RetrievalDetails:
    scored = [q for q in questions if q.scored]
    top1 = sum(bool(q.top1_hit) for q in scored)
    top3 = sum(bool(q.top3_hit) for q in scored)
    overall = RateDetail(
        questions=len(questions),
        scored=len(scored),
        errors=len(questions) - len(scored),
        top1_hits=top1,
        top3_hits=top3,
        top1_rate=top1 / len(scored) if scored else None,
        top3_rate=top3 / len(scored) if scored else None,
    )
    values: Mapping[str, Any] = {
        "format_version": 2,
        "protocol": SCORING_PROTOCOL_REVISION,
        "top_k": TOP_K,
        "overfetch_multiplier": OVERFETCH_MULTIPLIER,
        "hit_cutoffs": [1, 3],
        "aggregates": AggregatesDetail(overall=overall, by_form={}, by_hard_class={}, metrics={}),
        "questions": list(questions),
        **fields,
    }
    return RetrievalDetails.model_validate(dict(values))
