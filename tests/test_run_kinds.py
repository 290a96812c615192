"""A third kind of run goes through the shared machinery without a shared module being edited.

The toy kind below is everything a kind supplies (its details, its evaluated run, its
specification) and nothing else: it registers how its details are read back
(:mod:`goldeneval.core.kinds`), and the door, the store, the comparison states and the gate
take it as they take retrieval and answer runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, ConfigDict

from goldeneval.core import door
from goldeneval.core.comparison import PREVIOUS, Baseline
from goldeneval.core.errors import StoreError
from goldeneval.core.kinds import DetailsKind, read_details, register_details_kind
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RunRecord
from goldeneval.core.regression import DEFAULT_THRESHOLDS, ComparisonState, GateDecision, RegressionThresholds
from goldeneval.core.stats import Verdicts
from goldeneval.store import open_store

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

    def to_record(self, privacy: PrivacyMode, *, tables_run_id: str | None = None) -> RunRecord:
        share = sum(self.firsts.values()) / len(self.firsts)
        return RunRecord(
            set_id="toy-set",
            model="toy-reranker",
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


def test_a_toy_kind_is_recorded_judged_and_gated_by_the_shared_door(tmp_path: Path) -> None:
    store = open_store(tmp_path / "results.duckdb")
    first = door.record_and_judge(store, ToyRun(ALL_FIRST), ToySpec())
    again = door.record_and_judge(store, ToyRun(ALL_FIRST), ToySpec())
    worse = door.record_and_judge(store, ToyRun(HALF_FIRST), ToySpec())

    assert (first.verdict.state, first.gate) == (ComparisonState.BASELINE, GateDecision.PASS)
    assert (again.verdict.state, again.gate) == (ComparisonState.COMPARABLE, GateDecision.PASS)
    assert (worse.verdict.state, worse.gate) == (ComparisonState.COMPARABLE, GateDecision.REGRESSION)
    assert worse.verdict.reason.startswith("reranked first fell 1.000 -> 0.500 (-0.500, allowed -0.100)")
    paired = {p.rate: p for p in worse.verdict.paired}
    assert list(paired) == ["reranked first"]  # the mean has no paired outcome
    assert sorted(paired["reranked first"].newly_failing) == sorted(f"q{i}" for i in range(1, 20, 2))


def test_a_stored_toy_run_reads_back_as_its_own_details(tmp_path: Path) -> None:
    store = open_store(tmp_path / "results.duckdb")
    stored = door.record(store, ToyRun(HALF_FIRST), PrivacyMode.FULL)
    again = store.get_run(stored.id)
    assert again is not None
    assert again.details_as(ToyDetails).firsts == HALF_FIRST
    outcomes = again.paired_outcomes("pass_rate")
    assert outcomes is not None and dict(zip(outcomes.ids, outcomes.hits.tolist(), strict=True)) == HALF_FIRST


def test_details_of_a_kind_nobody_registered_are_one_line_naming_the_run() -> None:
    with pytest.raises(StoreError, match=r"^run r9: details of kind 'nobody', which no installed run kind reads"):
        read_details('{"kind": "nobody"}', "run r9")


def test_a_kind_name_cannot_be_taken_twice() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register_details_kind(DetailsKind(names=("toy-rerank",), read=_read_toy))
    assert register_details_kind(TOY_KIND) is TOY_KIND
