"""Quality as an opt-in routing hook (ADR-060, decision 5).

:class:`EvaluationQualityScoreProvider` derives a per-model quality score from stored
runs: for each set, the latest *complete* prompt or answer run of the model (its series
name) by **one grader** (``deterministic`` unless asked otherwise: its prompt runs and its
answer runs, ``answer_deterministic``) — retrieval runs are not answer quality — and the mean
of their mean scores.  Scores of different graders are never averaged (issue 42: one judge
run, scoring on another scale, moved a model from 0.600 to 0.100).
:class:`QualityAwareModelSelector` re-ranks a given candidate list by that score, best first;
models without a score keep their relative order after the scored ones.  Nothing routes
through it unless a caller opts in, and it changes no other selection.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

from goldeneval.core.records import RETRIEVAL_GRADER
from goldeneval.prompts.graders import DETERMINISTIC
from goldeneval.store import Store, StoredRun

__all__ = [
    "QUALITY_SCORE_DIGITS",
    "EvaluationQualityScoreProvider",
    "QualityAwareModelSelector",
    "RankedModel",
    "quality_json",
]

QUALITY_SCORE_DIGITS = 6
"""Decimal places of a quality score in JSON: a mean of means is a binary float
(0.6499999999999999), and no decision rests on the seventh place."""


@dataclass(frozen=True)
class EvaluationQualityScoreProvider:
    """Per-model quality scores from a result store."""

    store: Store
    grader: str = DETERMINISTIC
    """The one grader whose runs count: its prompt runs (grader id ``grader``) and its answer
    runs (``answer_<grader>``)."""

    def _counts(self, run: StoredRun) -> bool:
        if run.grader == RETRIEVAL_GRADER or not run.complete or run.mean_score is None:
            return False
        return run.grader in (self.grader, f"answer_{self.grader}")

    def latest_runs(self, model: str) -> list[StoredRun]:
        """The latest complete prompt/answer run of the grader per set of ``model`` (a series name)."""
        latest: dict[str, StoredRun] = {}
        for run in self.store.list_runs(model=model):  # newest first, without details
            if self._counts(run) and run.set_id not in latest:
                latest[run.set_id] = run
        return [latest[set_id] for set_id in sorted(latest)]

    def score(self, model: str) -> float | None:
        """The mean of the latest runs' mean scores, or None when the model has none."""
        runs = self.latest_runs(model)
        return fmean(run.mean_score for run in runs if run.mean_score is not None) if runs else None

    def scores(self, models: Iterable[str]) -> dict[str, float | None]:
        return {model: self.score(model) for model in models}


@dataclass(frozen=True)
class RankedModel:
    model: str
    score: float | None


@dataclass(frozen=True)
class QualityAwareModelSelector:
    """Re-rank candidates by quality score; unscored candidates follow in their given order."""

    provider: EvaluationQualityScoreProvider

    def ranked(self, candidates: Sequence[str]) -> list[RankedModel]:
        scores = [RankedModel(model, self.provider.score(model)) for model in candidates]
        scored = sorted(
            (entry for entry in scores if entry.score is not None),
            key=lambda entry: -entry.score if entry.score is not None else 0.0,
        )
        return scored + [entry for entry in scores if entry.score is None]

    def rank(self, candidates: Sequence[str]) -> list[str]:
        """The candidates, best quality first (a stable sort: ties keep their given order)."""
        return [entry.model for entry in self.ranked(candidates)]


def quality_json(order: Iterable[tuple[str, float | None]]) -> list[dict[str, Any]]:
    """``goldeneval quality --format json``: each candidate, best first, with its score rounded
    to :data:`QUALITY_SCORE_DIGITS` places here, where the JSON is built (the ranking itself
    uses the exact scores)."""
    return [
        {"model": model, "quality_score": None if score is None else round(score, QUALITY_SCORE_DIGITS)}
        for model, score in order
    ]
