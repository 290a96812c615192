"""What a grader is given and what it gives back (ADR-060, decision 2): the item, the
grading, the grader protocol and the grader ids every grader and the service share."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

from goldeneval.prompts.details import AssertionOutcome, Outcome
from goldeneval.prompts.golden import Assertion

__all__ = [
    "DEFAULT_PASS_THRESHOLD",
    "DETERMINISTIC",
    "JUDGE_PROMPT_REVISION",
    "LLM_JUDGE",
    "MAX_JUDGE_SAMPLES",
    "Grader",
    "Grading",
    "GradingItem",
    "is_judge",
]

DETERMINISTIC = "deterministic"
LLM_JUDGE = "llm_judge"
DEFAULT_PASS_THRESHOLD = 0.5
MAX_JUDGE_SAMPLES = 20
JUDGE_PROMPT_REVISION = "judge-prompt-v1"


def is_judge(grader_id: str) -> bool:
    """Whether ``grader_id`` is the judge (``llm_judge``, or ``llm_judge:<rubric>``)."""
    return grader_id == LLM_JUDGE or grader_id.startswith(LLM_JUDGE + ":")


@dataclass(frozen=True)
class GradingItem:
    """What is graded: the task, its assertions and its reference (a prompt, or a golden question
    with its answer gist)."""

    id: str
    prompt: str
    assertions: tuple[Assertion, ...] = ()
    reference: str | None = None
    answerable: bool | None = None
    """Answer runs: whether a document answers the question (ADR-072: a non-empty ``expected``);
    None (prompt runs): abstention is not an outcome of its own."""
    context: tuple[str, ...] = ()
    """The passages the model answered from (answer runs), for rubrics that judge against them."""
    rubric: str | None = None
    """A built-in rubric name that overrides the judge's rubric for this item."""


@dataclass(frozen=True)
class Grading:
    """A grader's verdict on one answer; ``error`` set means the grading itself failed.

    ``passed`` is None for an ``unstable`` judge verdict (neither a pass nor a fail)."""

    passed: bool | None
    score: float | None
    assertions: tuple[AssertionOutcome, ...] = ()
    reason: str | None = None
    error: str | None = None
    samples: tuple[float, ...] = ()
    unstable: bool = False
    outcome: Outcome | None = None
    """What kind of verdict it is (see :data:`~goldeneval.prompts.details.Outcome`); None for an error."""

    @property
    def spread(self) -> float | None:
        return max(self.samples) - min(self.samples) if len(self.samples) > 1 else None

    def with_outcome(self) -> Grading:
        """This grading with its outcome filled in from the verdict, when the grader left it open."""
        if self.outcome is not None or self.error is not None:
            return self
        if self.passed is None:
            return replace(self, outcome="unstable")
        return replace(self, outcome="pass" if self.passed else "fail")


class Grader(Protocol):
    @property
    def id(self) -> str: ...

    @property
    def identity(self) -> str:
        """What the grader is, exactly: part of the run's benchmark fingerprint."""
        ...

    @property
    def pass_threshold(self) -> float: ...

    def grade(self, item: GradingItem, answer: str) -> Grading: ...
