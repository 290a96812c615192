"""Graders (ADR-060, decision 2) and the service that picks one.

The graders live in modules of their own (:mod:`~goldeneval.prompts.grades`,
:mod:`~goldeneval.prompts.deterministic`, :mod:`~goldeneval.prompts.judge`,
:mod:`~goldeneval.prompts.plugin_grader`); this module picks one and re-exports their names.

* :class:`DeterministicGrader` (the default, id ``deterministic``): evaluates the prompt's
  assertions — the score is the weighted share that passed, and the prompt passes when all
  do.  A prompt without assertions is graded against its reference answer by the facts of
  the reference (:mod:`goldeneval.prompts.facts`, issue 42): every number, time, date,
  yes/no and named entity of the reference must be in the answer, equal; a reference without
  such facts is scored with SQuAD's token F1 of the answer's best-matching sentence, passing at
  ``pass_threshold`` (0.5); an answer that pastes the context fails.  No model call, no tokens.
* :class:`LlmJudgeGrader` (opt-in, id ``llm_judge``, or ``llm_judge:<rubric>`` with a
  rubric of :mod:`goldeneval.prompts.rubrics`): asks a judge model for
  ``{"score": 0..1, "reason": "..."}``, ``samples`` times.  A malformed answer, an
  out-of-range score, a timeout or an HTTP error makes a failed sample, recorded with its
  cause; a prompt with a failed sample is a grading error (never a crash, never a silent
  pass).  The score is the mean of the samples, the spread their range.  Samples on both
  sides of the pass threshold are an ``unstable`` verdict: not a pass and not a fail, its own
  status (or, with ``fail_on_unstable``, a grading error, so the run is incomplete and the
  gate fails).  A stable verdict has every sample on one side, so it never depends on how
  many samples there were.
* Where the item says whether its question is answerable (answer runs: ADR-072's empty
  ``expected``), both graders first look for an abstention
  (:class:`~goldeneval.prompts.abstention.AbstentionRules`): on an unanswerable question it
  is the right answer, on an answerable one it is an ``over_abstention``, a failure counted
  apart from wrong answers.  :func:`grade_abstention` is that one rule.
* Plug-in graders (:mod:`goldeneval.prompts.grader_plugins`: the entry-point group
  ``goldeneval.graders``, built in ``semantic``, or ``package.module:factory``) are built by
  their factory and run as :class:`PluginGrader`: checked when built (``id``, ``identity``,
  ``pass_threshold``, ``grade``), their ``grade`` guarded (raising, exiting or returning
  anything but a :class:`Grading` is that prompt's grading error), the abstention rule applied
  around them unless they apply it themselves.
* :class:`GradingService` selects a grader by id — ``deterministic``, ``llm_judge`` and
  ``llm_judge:<rubric>``, then registered plug-in ids and import paths — and falls back to the
  deterministic grader for an unknown plain id, saying so, so that evaluation never silently
  spends tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from goldeneval.core.errors import InputError, one_line
from goldeneval.core.provenance import Provenance
from goldeneval.core.spec import DEFAULT_TIMEOUT_S
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.grader_plugins import GRADERS, GraderContext
from goldeneval.prompts.models import Model
from goldeneval.prompts.rubrics import rubric_named

if TYPE_CHECKING:
    from goldeneval.prompts.measures import MeasureJudge

from goldeneval.prompts.deterministic import (
    DeterministicGrader,
    grade_abstention,
    grade_assertions,
    grade_assertions_or_reference,
)
from goldeneval.prompts.grades import (
    DEFAULT_PASS_THRESHOLD,
    DETERMINISTIC,
    JUDGE_PROMPT_REVISION,
    LLM_JUDGE,
    MAX_JUDGE_SAMPLES,
    Grader,
    Grading,
    GradingItem,
    is_judge,
)
from goldeneval.prompts.judge import (
    CONTEXT_HEADING,
    JUDGE_SYSTEM,
    REPLY_FORMAT,
    LlmJudgeGrader,
    ask_judge,
    judge_messages,
    parse_judge_verdict,
)
from goldeneval.prompts.plugin_grader import PluginGrader

__all__ = [
    "CONTEXT_HEADING",
    "DEFAULT_PASS_THRESHOLD",
    "DETERMINISTIC",
    "JUDGE_PROMPT_REVISION",
    "JUDGE_SYSTEM",
    "LLM_JUDGE",
    "MAX_JUDGE_SAMPLES",
    "REPLY_FORMAT",
    "DeterministicGrader",
    "Grader",
    "GraderChoice",
    "Grading",
    "GradingItem",
    "GradingService",
    "Judge",
    "LlmJudgeGrader",
    "PluginGrader",
    "ask_judge",
    "grade_abstention",
    "grade_assertions",
    "grade_assertions_or_reference",
    "is_judge",
    "judge_messages",
    "parse_judge_verdict",
]


@dataclass(frozen=True)
class Judge:
    """The judge model of ``llm_judge`` and how it is asked: ``samples`` times each answer
    (``--judge-samples``), with ``rubric`` (a built-in rubric name) unless the grader id
    names one (``llm_judge:<rubric>``).  Only a run with a judge model has one."""

    model: Model
    provenance: Provenance = field(default_factory=Provenance)
    samples: int = 1
    rubric: str | None = None

    def __post_init__(self) -> None:
        if not 1 <= self.samples <= MAX_JUDGE_SAMPLES:
            raise InputError(f"--judge-samples must be between 1 and {MAX_JUDGE_SAMPLES}, got {self.samples}")
        if self.rubric is not None:
            rubric_named(self.rubric)


@dataclass(frozen=True)
class GraderChoice:
    grader: Grader
    requested: str
    notice: str | None = None
    """Set when the requested grader was unknown and the deterministic one stood in."""
    measures: MeasureJudge | None = None
    """The judge measures of ``--judge-rubrics``, asked beside the grader (None: none)."""


@dataclass(frozen=True)
class GradingService:
    """Select a grader by id; an unknown plain id falls back to the deterministic grader (no tokens).

    The judge is only available with a :class:`Judge`: asking for ``llm_judge`` without one
    is invalid input, never a silent fallback that would look like a judged run.  The judge's
    rubric, ``fail_on_unstable`` and ``abstention`` configure the graders; each is part of the
    chosen grader's identity.  A registered plug-in id or an import path (``package.module:factory``)
    builds a plug-in grader (:class:`PluginGrader`); one that cannot be built is invalid input
    in one line, never a fallback: the run asked for that grader by name."""

    judge: Judge | None = None
    """The judge model and how it is asked; None: ``llm_judge`` is not available."""
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    fail_on_unstable: bool = False
    abstention: AbstentionRules = field(default_factory=AbstentionRules)

    def __post_init__(self) -> None:
        if not 0.0 <= self.pass_threshold <= 1.0:
            raise InputError(f"pass threshold must lie between 0 and 1, got {self.pass_threshold}")

    @staticmethod
    def known() -> tuple[str, ...]:
        """The built-in grader ids, then the registered plug-in ids."""
        return (DETERMINISTIC, LLM_JUDGE, *(g for g in GRADERS.known() if g not in (DETERMINISTIC, LLM_JUDGE)))

    def plugin_context(self, grader_id: str) -> GraderContext:
        """What a plug-in grader's factory is given.  The run's threshold is passed on only when
        it differs from the default, so that a grader's calibrated threshold is its default."""
        given = None if self.pass_threshold == DEFAULT_PASS_THRESHOLD else self.pass_threshold
        return GraderContext(
            grader_id=grader_id, pass_threshold=given, abstention=self.abstention, timeout_s=self.timeout_s
        )

    def select(self, grader_id: str) -> GraderChoice:
        if is_judge(grader_id):
            if self.judge is None:
                raise InputError(
                    "grader 'llm_judge' needs a judge model: pass --judge-model ID (e.g. goldeneval.openai with "
                    "--judge-option base_url=... --judge-option model=...)"
                )
            rubric = grader_id.partition(":")[2] or self.judge.rubric
            return GraderChoice(
                LlmJudgeGrader(
                    self.judge.model,
                    self.judge.provenance,
                    samples=self.judge.samples,
                    pass_threshold=self.pass_threshold,
                    timeout_s=self.timeout_s,
                    rubric=rubric_named(rubric) if rubric else None,
                    fail_on_unstable=self.fail_on_unstable,
                    abstention=self.abstention,
                ),
                grader_id,
            )
        grader = DeterministicGrader(pass_threshold=self.pass_threshold, abstention=self.abstention)
        if grader_id == DETERMINISTIC:
            return GraderChoice(grader, grader_id)
        if ":" in grader_id or grader_id in GRADERS.known():
            plugin = GRADERS.build(grader_id, self.plugin_context(grader_id))
            return GraderChoice(PluginGrader.of(grader_id, plugin, self.abstention), grader_id)
        notice = (
            f"unknown grader {one_line(grader_id, 60)!r} (known: {', '.join(self.known())}): "
            "graded with the deterministic grader instead (no model call)"
        )
        return GraderChoice(grader, grader_id, notice)
