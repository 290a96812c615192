"""What ``goldeneval answers`` prints: the retrieval run's report, then the answer run's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from goldeneval.answers.answers import AnswersOutcome
from goldeneval.core.report import verdict_lines
from goldeneval.prompts.report import PROMPTS_JSON_FORMAT_VERSION, _body, _details, _footer, prompt_outcome_json
from goldeneval.retrieval.report import outcome_json, render_outcome
from goldeneval.store import StoreLocation

__all__ = ["answers_json", "render_answers"]


def render_answers(outcome: AnswersOutcome, store_location: StoreLocation | Path) -> str:
    retrieval = outcome.retrieval
    answers = outcome.answers
    lines = [render_outcome(retrieval.stored, retrieval.verdict, store_location), "", "=" * 72, ""]
    stored = answers.stored
    details = _details(stored)
    title = (
        f"goldeneval answers: set {stored.set_id!r}, series {stored.model!r} "
        f"(retriever {details.retriever_id!r} -> model {details.model_id!r})"
    )
    lines += _body(stored, title)
    verdict = answers.verdict
    verdict_text = [
        f"Stored beside retrieval run {details.retrieval_run_id}.",
        f"Answer verdict: {verdict.summary}",
        *verdict_lines(verdict),
    ]
    return "\n".join(lines + _footer(stored, verdict_text, store_location))


def answers_json(outcome: AnswersOutcome, store_location: StoreLocation | Path) -> dict[str, Any]:
    retrieval = outcome.retrieval
    return {
        "format_version": PROMPTS_JSON_FORMAT_VERSION,
        "store": str(store_location),
        "retrieval": outcome_json(retrieval.stored, retrieval.verdict, store_location, warnings=retrieval.run.warnings),
        "answers": prompt_outcome_json(outcome.answers, store_location),
        "gate": outcome.gate.value,
    }
