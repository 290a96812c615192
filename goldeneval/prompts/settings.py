"""How prompt and answer runs are graded, declared once (:mod:`goldeneval.core.settings`): each
field is a key of the suite file's ``prompts:`` section (or its ``judge:``), a field of
:class:`~goldeneval.prompts.spec.GradingSpec` (or :class:`~goldeneval.prompts.spec.JudgeSpec`)
and a flag of ``goldeneval prompts`` and ``goldeneval answers``.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from goldeneval.core.errors import InputError
from goldeneval.core.settings import Flag, Fraction
from goldeneval.core.thresholds import RateNames
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.breaker import DEFAULT_MAX_CONSECUTIVE_FAILURES
from goldeneval.prompts.graders import DEFAULT_PASS_THRESHOLD, DETERMINISTIC, MAX_JUDGE_SAMPLES
from goldeneval.prompts.measures import check_measure_names
from goldeneval.prompts.rubrics import MEASURES, RUBRICS
from goldeneval.prompts.workers import MAX_WORKERS

__all__ = ["PROMPT_RATES", "GradingSettings", "JudgeSettings", "check_phrases", "check_rubric"]

PROMPT_RATES = RateNames(
    pass_key="max_pass_drop",
    pass_words="pass rate",
    score_key="max_score_drop",
    score_words="mean score",
    significance="a pass-rate drop",
)
"""Prompt and answer runs' words for their two rates (``prompts.max_pass_drop``, ``--max-pass-drop``)."""


def check_rubric(value: str | None) -> str | None:
    """A rubric name of :mod:`goldeneval.prompts.rubrics`, or None."""
    if value is not None and value not in RUBRICS:
        raise ValueError(f"unknown rubric {value!r} (known: {', '.join(sorted(RUBRICS))})")
    return value


def check_phrases(value: tuple[str, ...]) -> tuple[str, ...]:
    """Abstention phrases that :class:`~goldeneval.prompts.abstention.AbstentionRules` accepts
    (empty: the defaults)."""
    if value:
        try:
            AbstentionRules(value)
        except InputError as exc:
            raise ValueError(str(exc)) from None
    return value


class JudgeSettings(BaseModel):
    """How the judge of ``llm_judge`` is asked (its model is named beside these)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    samples: Annotated[int, Flag("--judge-samples")] = Field(
        default=1,
        ge=1,
        le=MAX_JUDGE_SAMPLES,
        description="Ask the judge N times; the spread is stored and a prompt whose samples straddle the "
        "pass threshold is reported as unstable.",
    )
    rubric: Annotated[
        str | None, Flag("--judge-rubric", choices=tuple(sorted(RUBRICS))), AfterValidator(check_rubric)
    ] = Field(
        default=None,
        description="Judge with a versioned rubric instead of the default prompt: correctness (against the "
        "reference or gist), faithfulness (every claim supported by the passages the model saw; answers), "
        "relevance. The grader becomes llm_judge:<rubric>.",
    )
    rubrics: Annotated[
        tuple[str, ...], Flag("--judge-rubrics", separated=True), BeforeValidator(check_measure_names)
    ] = Field(
        default=(),
        description="Judge measures asked beside the grader, each stored as its own measure per question and "
        f"in the summary, never averaged with the pass rate: {', '.join(MEASURES)} (RAGAS's definitions, "
        "judged per answer sentence, retrieved document or reference sentence; see docs/guide/answers.md). "
        "The context measures need retrieved documents (goldeneval answers).",
    )


class GradingSettings(BaseModel):
    """How a prompt or answer run is graded and how its model is called."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    grader: Annotated[str, Flag()] = Field(
        default=DETERMINISTIC,
        min_length=1,
        description="deterministic (assertions or SQuAD token F1, no model call), semantic (MiniLM similarity, the "
        "dense extra), llm_judge or llm_judge:<rubric> (needs a judge model), a registered goldeneval.graders "
        "id or package.module:factory. An unknown plain id falls back to deterministic, with a notice.",
    )
    pass_threshold: Annotated[Fraction, Flag()] = Field(
        default=DEFAULT_PASS_THRESHOLD, description="Score at which a judged (or reference-graded) answer passes."
    )
    response_cache: Annotated[
        bool,
        Flag(
            "--no-cache",
            off=True,
            help="Call the model (and the judge) for every prompt; by default a deterministic request "
            "(temperature 0) to a declared model revision is answered from the response cache under the "
            "cache folder when it holds the answer.",
        ),
    ] = Field(
        default=True,
        description="Answer a deterministic request (temperature 0) to a declared model revision from the "
        "response cache under the cache folder when it holds the answer (never under metadata_only "
        "privacy); off: call the model (and the judge) for every prompt.",
    )
    max_consecutive_failures: Annotated[int, Flag()] = Field(
        default=DEFAULT_MAX_CONSECUTIVE_FAILURES,
        ge=0,
        le=10_000,
        description="Stop calling an endpoint (model or judge) after N consecutive failed calls; the prompts "
        "left are errors saying why. 0: never stop.",
    )
    workers: Annotated[int, Flag()] = Field(
        default=1,
        ge=1,
        le=MAX_WORKERS,
        description="Prompts asked and graded at once (for a served model that answers requests in parallel).",
    )
    fail_on_unstable: Annotated[bool, Flag()] = Field(
        default=False,
        description="An unstable judge verdict (samples straddling the pass threshold) is a grading error: the "
        "run is incomplete and the gate fails. Default: its own status, not a pass.",
    )
    abstention_phrases: Annotated[
        tuple[str, ...], Flag("--abstention-phrase", repeated=True), AfterValidator(check_phrases)
    ] = Field(
        default=(),
        description="A phrase marking an answer as an abstention (replaces the default list, see "
        "docs/guide/answers.md); whole words after normalisation, in answers of at most 50 words.",
    )

    def abstention_rules(self) -> AbstentionRules:
        """The abstention rule the graders apply (one place: both doors build it here)."""
        return AbstentionRules(self.abstention_phrases) if self.abstention_phrases else AbstentionRules()
