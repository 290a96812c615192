"""A toy third kind of run (a reranker-only run), everything such a kind supplies and
nothing else: shared by the tests that put it through the shared machinery
(``tests/test_run_kinds.py``, ``tests/test_run_kinds_dagster.py``), and its declaration
(:data:`TOY_DECLARATION`), which ``tests/test_run_kinds_declared.py`` installs through the
entry-point group ``goldeneval.kinds`` as another package would: its suite section ``toy``, its
partitions, assets and Dagster names, its Dagster part (``tests/toy_kind_dagster.py``), its
command (``goldeneval toy-rerank``, ``tests/toy_kind_cli.py``) and how its stored details are
read back (:data:`TOY_KIND`, which nothing registers at import: the declaration names it)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldeneval.core.baseline import PREVIOUS, Baseline
from goldeneval.core.gate import DEFAULT_THRESHOLDS, RegressionThresholds
from goldeneval.core.kinds import DetailsKind, stored_details_error
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RunRecord
from goldeneval.core.stats import Verdicts
from goldeneval.kinds import KindCommand, KindDeclaration, KindNames, SuiteSection

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
    try:
        return ToyDetails.model_validate_json(text)
    except ValidationError as exc:  # one line naming the run and the field
        raise stored_details_error(exc, where) from None


TOY_KIND = DetailsKind(names=("toy-rerank",), read=_read_toy)
"""How a stored toy run's details are read back (the values of their ``kind`` key it reads)."""


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

    def run(self, set_id: str, series: str) -> ToyRun:
        """The run this spec's reranker makes: ``options["firsts"]``, one ``1`` or ``0`` per question."""
        return ToyRun(firsts_of(self.options["firsts"]), set_id, series)


def firsts_of(pattern: str) -> dict[str, bool]:
    """``"1101"``: question ``q<i>`` was reranked first when the i-th character is ``1``."""
    return {f"q{i}": flag == "1" for i, flag in enumerate(pattern)}


class ToyReranker(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    firsts: str = Field(pattern=r"^[01]+$", description="Per question, 1 when the reranker puts a target first.")


class ToySection(BaseModel):
    """The toy kind's section of the suite file, ``toy:``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    sets: list[str] = Field(min_length=1, description="The toy sets' ids.")
    rerankers: dict[str, ToyReranker] = Field(min_length=1, description="Named rerankers: each is a series.")


def _toy_cells(suite: Any) -> tuple[Sequence[str], Sequence[str]]:
    section: ToySection | None = suite.section("toy")
    return (section.sets, list(section.rerankers)) if section is not None else ([], [])


def _toy_spec(suite: Any, where: Mapping[str, str]) -> ToySpec:
    section: ToySection = suite.section("toy")
    reranker = section.rerankers[where["reranker"]]
    return ToySpec(privacy=suite.privacy, options={"firsts": reranker.firsts})


TOY_DECLARATION = KindDeclaration(
    name="toy-rerank",
    cell="toy set x reranker",
    dimensions=("set", "reranker"),
    cells=_toy_cells,
    spec=_toy_spec,
    assets=("toy_questions", "toy_firsts", "toy_summary"),
    names=KindNames.prefixed("toy_", cli_sensor="toy_cli_run_series_sensor"),
    stored="toy run",
    title="goldeneval: nightly toy reranking",
    rates=(("first", "reranked_first"), ("mrr", "mean_reciprocal_rank")),
    dagster="tests.toy_kind_dagster:TOY_DAGSTER",
    details="tests.toy_kind:TOY_KIND",
    commands={
        "toy-rerank": KindCommand(
            "tests.toy_kind_cli:toy_rerank", "Record a toy reranker-only run, judge it and print the verdict."
        )
    },
    section=SuiteSection("toy", ToySection, "The toy reranker-only runs (a kind declared by a test)."),
)
"""Installed by ``tests/test_run_kinds_declared.py`` as ``toy-rerank = tests.toy_kind:TOY_DECLARATION``."""


ALL_FIRST = {f"q{i}": True for i in range(20)}
HALF_FIRST = {f"q{i}": i % 2 == 0 for i in range(20)}
