"""A toy third kind of run (a reranker-only run), everything such a kind supplies and
nothing else: shared by the tests that put it through the shared machinery
(``tests/test_run_kinds.py``, ``tests/test_run_kinds_dagster.py``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict

from goldeneval.core.baseline import PREVIOUS, Baseline
from goldeneval.core.gate import DEFAULT_THRESHOLDS, RegressionThresholds
from goldeneval.core.kinds import DetailsKind, register_details_kind
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RunRecord
from goldeneval.core.stats import Verdicts

TOY_RATE_NAMES = {"pass_rate": "reranked first", "mean_score": "mean reciprocal rank"}


class ToyDetails(BaseModel):
    """The details of a reranker-only run: per question, whether the reranker put a target first."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["toy-rerank"] = "toy-rerank"
    protocol: str = "toy-rerank/v1"
    retriever_id: str | None = None
    tables_run_id: str | None = None
    firsts: dict[str, bool]

    @property
    def rate_names(self) -> Mapping[str, str]:
        return TOY_RATE_NAMES

    @property
    def unit(self) -> str:
        return "questions"

    def paired_outcomes(self, rate: str) -> Verdicts | None:
        return Verdicts.of(self.firsts) if rate == "pass_rate" else None

    def to_json_text(self) -> str:
        return self.model_dump_json()


def _read_toy(text: str | bytes, where: str) -> ToyDetails:
    return ToyDetails.model_validate_json(text)


TOY_KIND = register_details_kind(DetailsKind(names=("toy-rerank",), read=_read_toy))


@dataclass(frozen=True)
class ToyRun:
    firsts: dict[str, bool]
    set_id: str = "toy-set"
    series: str = "toy-reranker"

    def to_record(self, privacy: PrivacyMode, *, tables_run_id: str | None = None) -> RunRecord:
        share = sum(self.firsts.values()) / len(self.firsts)
        return RunRecord(
            set_id=self.set_id,
            model=self.series,
            grader="toy_rerank",
            pass_rate=share,
            mean_score=share,
            question_count=len(self.firsts),
            scored_count=len(self.firsts),
            error_count=0,
            details=ToyDetails(firsts=self.firsts, tables_run_id=tables_run_id),
            label_digest="toy-labels",
            benchmark_fingerprint="toy-benchmark",
            variant_fingerprint="toy-variant",
            privacy=privacy.value,
        )


@dataclass(frozen=True)
class ToySpec:
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS
    baseline: Baseline = PREVIOUS
    privacy: PrivacyMode = PrivacyMode.FULL
    options: dict[str, str] = field(default_factory=dict)


ALL_FIRST = {f"q{i}": True for i in range(20)}
HALF_FIRST = {f"q{i}": i % 2 == 0 for i in range(20)}
