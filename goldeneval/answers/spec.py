"""Run specifications of prompt runs (and the grading part of answer runs): frozen, validated.

The CLI builds them from flags (:mod:`goldeneval.cli.answers`), Dagster from one suite cell
(:meth:`goldeneval.suite.Suite.prompt_run_spec`); the verbs of :mod:`goldeneval.answers.pipeline`
evaluate them, and :func:`goldeneval.core.door.record` / :func:`goldeneval.core.door.judge`
store and judge them exactly as retrieval runs.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator

from goldeneval.answers.evaluation import DEFAULT_TIMEOUT_S
from goldeneval.answers.graders import DEFAULT_PASS_THRESHOLD, DETERMINISTIC, MAX_JUDGE_SAMPLES
from goldeneval.core.comparison import PREVIOUS, Baseline
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import Provenance
from goldeneval.core.regression import DEFAULT_THRESHOLDS, RegressionThresholds
from goldeneval.core.spec import check_series_name, check_timeout
from goldeneval.core.storage import CACHE

__all__ = ["GradingSpec", "JudgeSpec", "PromptRunSpec"]


class JudgeSpec(BaseModel):
    """The judge model of ``llm_judge``: built only when that grader is chosen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: str = Field(min_length=1)
    options: dict[str, str] = Field(default_factory=dict)
    samples: int = Field(default=1, ge=1, le=MAX_JUDGE_SAMPLES)


class GradingSpec(BaseModel):
    """What prompt and answer runs share: the model, the grader, and how the run is stored and judged."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    model_id: str = Field(min_length=1, description="Registered model id or package.module:factory.")
    model_options: dict[str, str] = Field(default_factory=dict)
    series: str = Field(description="The series name: the store's model column.")
    grader: str = Field(default=DETERMINISTIC, min_length=1)
    judge: JudgeSpec | None = None
    pass_threshold: float = Field(default=DEFAULT_PASS_THRESHOLD, ge=0.0, le=1.0, allow_inf_nan=False)
    cache_dir: Path = CACHE.default
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    privacy: PrivacyMode = PrivacyMode.FULL
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS
    baseline: Baseline = PREVIOUS
    provenance: Provenance = Field(
        default_factory=Provenance, description="Declared provenance; overrides the model's, field by field."
    )

    @field_validator("series")
    @classmethod
    def _series(cls, value: str) -> str:
        return check_series_name(value)

    @field_validator("timeout_s")
    @classmethod
    def _finite_timeout(cls, value: float | None) -> float | None:
        return check_timeout(value)


class PromptRunSpec(GradingSpec):
    """One evaluation of a golden prompt set against a model."""

    set_ref: str = Field(min_length=1, description="Registered prompt set id or prompt set file.")
    expected_set_id: str | None = None
    sets_dirs: tuple[Path, ...] = ()
    corpus: Path | None = Field(default=None, description="Corpus of retrieval-augmented models; None: the set's.")
