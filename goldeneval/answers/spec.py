"""Run specifications of prompt runs (and the grading part of answer runs): frozen, validated.

The CLI builds them from flags (:mod:`goldeneval.cli.answers`), Dagster from one suite cell
(:meth:`goldeneval.suite.Suite.prompt_run_spec`); the verbs of :mod:`goldeneval.answers.pipeline`
evaluate them, and :func:`goldeneval.core.door.record` / :func:`goldeneval.core.door.judge`
store and judge them exactly as retrieval runs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from goldeneval.answers.abstention import AbstentionRules
from goldeneval.answers.breaker import DEFAULT_MAX_CONSECUTIVE_FAILURES
from goldeneval.answers.graders import DEFAULT_PASS_THRESHOLD, DETERMINISTIC, MAX_JUDGE_SAMPLES
from goldeneval.answers.rubrics import RUBRICS
from goldeneval.answers.workers import MAX_WORKERS
from goldeneval.core.errors import InputError
from goldeneval.core.spec import SpecBase

__all__ = ["GradingSpec", "JudgeSpec", "PromptRunSpec", "RubricName", "check_phrases", "check_rubric"]


def check_rubric(value: str | None) -> str | None:
    """A rubric name of :mod:`goldeneval.answers.rubrics`, or None (the spec and the suite file)."""
    if value is not None and value not in RUBRICS:
        raise ValueError(f"unknown rubric {value!r} (known: {', '.join(sorted(RUBRICS))})")
    return value


def check_phrases(value: tuple[str, ...]) -> tuple[str, ...]:
    """Abstention phrases that :class:`~goldeneval.answers.abstention.AbstentionRules` accepts
    (empty: the defaults), for the spec and the suite file."""
    if value:
        try:
            AbstentionRules(value)
        except InputError as exc:
            raise ValueError(str(exc)) from None
    return value


RubricName = Annotated[str | None, AfterValidator(check_rubric)]
"""A rubric field of a specification: a name :func:`check_rubric` knows, or None."""


class JudgeSpec(BaseModel):
    """The judge model of ``llm_judge``: built only when that grader is chosen."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model_id: str = Field(min_length=1)
    options: dict[str, str] = Field(default_factory=dict)
    samples: int = Field(default=1, ge=1, le=MAX_JUDGE_SAMPLES)
    rubric: RubricName = Field(
        default=None,
        description="A versioned rubric of goldeneval.answers.rubrics (correctness, faithfulness, relevance); "
        "the grader is then llm_judge:<rubric>.",
    )


class GradingSpec(SpecBase):
    """What prompt and answer runs share: the model and the grader (and, from :class:`SpecBase`,
    how the run is stored and judged)."""

    model_id: str = Field(min_length=1, description="Registered model id or package.module:factory.")
    model_options: dict[str, str] = Field(default_factory=dict)
    grader: str = Field(default=DETERMINISTIC, min_length=1)
    judge: JudgeSpec | None = None
    pass_threshold: float = Field(default=DEFAULT_PASS_THRESHOLD, ge=0.0, le=1.0, allow_inf_nan=False)
    response_cache: bool = Field(
        default=True,
        description="Answer deterministic requests to an immutable model revision from the response cache "
        "under cache_dir (never under metadata_only privacy); False: --no-cache.",
    )
    max_consecutive_failures: int = Field(
        default=DEFAULT_MAX_CONSECUTIVE_FAILURES,
        ge=0,
        le=10_000,
        description="Stop calling an endpoint (model or judge) after this many consecutive failures; 0: never.",
    )
    workers: int = Field(
        default=1, ge=1, le=MAX_WORKERS, description="Prompts asked and graded at once (for served models)."
    )
    fail_on_unstable: bool = Field(
        default=False,
        description="An unstable judge verdict (samples straddling the pass threshold) is a grading error, so "
        "the run is incomplete and the gate fails; False: its own status, not a pass.",
    )
    abstention_phrases: tuple[str, ...] = Field(
        default=(),
        description="Phrases that mark an answer as an abstention (replacing the default list of "
        "goldeneval.answers.abstention); empty: the defaults.",
    )

    @field_validator("abstention_phrases")
    @classmethod
    def _usable_phrases(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return check_phrases(value)

    def abstention_rules(self) -> AbstentionRules:
        """The abstention rule the graders apply (one place: both doors build it here)."""
        return AbstentionRules(self.abstention_phrases) if self.abstention_phrases else AbstentionRules()


class PromptRunSpec(GradingSpec):
    """One evaluation of a golden prompt set against a model."""

    set_ref: str = Field(min_length=1, description="Registered prompt set id or prompt set file.")
    expected_set_id: str | None = None
    sets_dirs: tuple[Path, ...] = ()
    corpus: Path | None = Field(default=None, description="Corpus of retrieval-augmented models; None: the set's.")
