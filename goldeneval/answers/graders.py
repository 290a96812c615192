"""Graders (ADR-060, decision 2) and the service that picks one.

* :class:`DeterministicGrader` (the default, id ``deterministic``): evaluates the prompt's
  assertions — the score is the weighted share that passed, and the prompt passes when all
  do.  A prompt without assertions is scored against its reference answer: 1 when the
  answer contains it (whitespace- and case-normalised), else the token F1 of their content
  terms; it passes at ``pass_threshold`` (0.5).  No model call, no tokens.
* :class:`LlmJudgeGrader` (opt-in, id ``llm_judge``): asks a judge model for
  ``{"score": 0..1, "reason": "..."}``, ``samples`` times.  A malformed answer, an
  out-of-range score, a timeout or an HTTP error makes a failed sample, recorded with its
  cause; a prompt with a failed sample is a grading error (never a crash, never a silent
  pass).  The score is the mean of the samples, the spread their range, and a prompt whose
  samples straddle the pass threshold is ``unstable``.
* :class:`GradingService` selects a grader by id and falls back to the deterministic grader
  for an unknown id, saying so, so that evaluation never silently spends tokens.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from statistics import fmean
from typing import Protocol

from goldeneval.answers.assertions import check_assertion, token_f1
from goldeneval.answers.details import AssertionOutcome
from goldeneval.answers.golden import Assertion
from goldeneval.answers.models import ChatMessage, ChatRequest, Model, call_with_timeout
from goldeneval.core.errors import InputError, one_line
from goldeneval.core.provenance import Provenance

__all__ = [
    "DEFAULT_PASS_THRESHOLD",
    "DETERMINISTIC",
    "LLM_JUDGE",
    "DeterministicGrader",
    "Grader",
    "GraderChoice",
    "Grading",
    "GradingItem",
    "GradingService",
    "LlmJudgeGrader",
    "parse_judge_verdict",
]

DETERMINISTIC = "deterministic"
LLM_JUDGE = "llm_judge"
DEFAULT_PASS_THRESHOLD = 0.5
MAX_JUDGE_SAMPLES = 20
JUDGE_PROMPT_REVISION = "judge-prompt-v1"
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


@dataclass(frozen=True)
class GradingItem:
    """What is graded: the task, its assertions and its reference (a prompt, or a golden question
    with its answer gist)."""

    id: str
    prompt: str
    assertions: tuple[Assertion, ...] = ()
    reference: str | None = None


@dataclass(frozen=True)
class Grading:
    """A grader's verdict on one answer; ``error`` set means the grading itself failed."""

    passed: bool | None
    score: float | None
    assertions: tuple[AssertionOutcome, ...] = ()
    reason: str | None = None
    error: str | None = None
    samples: tuple[float, ...] = ()
    unstable: bool = False

    @property
    def spread(self) -> float | None:
        return max(self.samples) - min(self.samples) if len(self.samples) > 1 else None


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


def _normalised(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class DeterministicGrader:
    """Assertions, or the reference answer: no model call."""

    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    id: str = DETERMINISTIC

    @property
    def identity(self) -> str:
        return f"deterministic/v1(assertions;reference=contains-or-token-f1>={self.pass_threshold:g})"

    def grade(self, item: GradingItem, answer: str) -> Grading:
        if item.assertions:
            outcomes = tuple(check_assertion(a, answer) for a in item.assertions)
            total = sum(o.weight for o in outcomes)
            score = sum(o.weight for o in outcomes if o.passed) / total
            return Grading(passed=all(o.passed for o in outcomes), score=score, assertions=outcomes)
        reference = item.reference or ""
        contained = bool(reference.strip()) and _normalised(reference) in _normalised(answer)
        score = 1.0 if contained else token_f1(answer, reference)
        reason = "contains the reference" if contained else f"token F1 {score:.3f} against the reference"
        return Grading(passed=score >= self.pass_threshold, score=score, reason=reason)


def parse_judge_verdict(text: str) -> tuple[float, str]:
    """``(score, reason)`` from a judge's answer: one JSON object, perhaps in a code fence or
    after some words.  Raises ``ValueError`` saying what is wrong."""
    match = _OBJECT.search(text)
    if match is None:
        raise ValueError(f"no JSON object in the judge's answer {one_line(text, 80)!r}")
    try:
        verdict = json.loads(match.group(0))
    except json.JSONDecodeError as exc:
        raise ValueError(f"malformed JSON from the judge ({exc.msg}): {one_line(match.group(0), 80)!r}") from None
    if not isinstance(verdict, dict):
        raise ValueError("the judge's JSON is not an object")
    score, reason = verdict.get("score"), verdict.get("reason")
    if isinstance(score, bool) or not isinstance(score, int | float):
        raise ValueError(f"the judge's 'score' is not a number: {one_line(repr(score), 40)}")
    if not 0.0 <= float(score) <= 1.0:
        raise ValueError(f"the judge's score {score} is outside [0, 1]")
    if not isinstance(reason, str):
        raise ValueError("the judge's answer has no 'reason' string")
    return float(score), one_line(reason, 500)


JUDGE_SYSTEM = (
    "You grade answers strictly. Compare the answer with the task, the criteria and the reference "
    'answer. Reply with only a JSON object: {"score": <a number from 0 to 1>, "reason": "<one sentence>"}.'
)


def judge_messages(item: GradingItem, answer: str) -> tuple[ChatMessage, ...]:
    parts = [f"Task:\n{item.prompt}"]
    if item.reference:
        parts.append(f"Reference answer:\n{item.reference}")
    if item.assertions:
        parts.append("Criteria:\n" + "\n".join(f"- {a.describe()}" for a in item.assertions))
    parts.append(f"Answer to grade:\n{answer}")
    return (ChatMessage("system", JUDGE_SYSTEM), ChatMessage("user", "\n\n".join(parts)))


@dataclass(frozen=True)
class LlmJudgeGrader:
    """A judge model's score, sampled ``samples`` times (``--judge-samples``)."""

    model: Model
    model_provenance: Provenance
    samples: int = 1
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    timeout_s: float | None = 60.0
    id: str = LLM_JUDGE

    @property
    def identity(self) -> str:
        judge = self.model_provenance
        return (
            f"llm_judge/v1({JUDGE_PROMPT_REVISION};model={judge.model_revision or 'unknown'};"
            f"pipeline={judge.pipeline_identity or 'unknown'};samples={self.samples};"
            f"threshold={self.pass_threshold:g})"
        )

    def _sample(self, request: ChatRequest) -> tuple[float, str]:
        try:
            text = call_with_timeout(lambda: self.model.complete(request), self.timeout_s)
        except (Exception, SystemExit) as exc:
            raise ValueError(f"judge call failed: {type(exc).__name__}: {one_line(str(exc), 200)}") from None
        if not isinstance(text, str):
            raise ValueError(f"judge call returned {type(text).__name__}, not text")
        return parse_judge_verdict(text)

    def grade(self, item: GradingItem, answer: str) -> Grading:
        request = ChatRequest(messages=judge_messages(item, answer), question=item.prompt)
        scores: list[float] = []
        reasons: list[str] = []
        failures: list[str] = []
        for _ in range(self.samples):
            try:
                score, reason = self._sample(request)
            except ValueError as exc:
                failures.append(str(exc))
                continue
            scores.append(score)
            reasons.append(reason)
        straddles = bool(scores) and min(scores) < self.pass_threshold <= max(scores)
        if failures:
            cause = (
                failures[0]
                if self.samples == 1
                else f"{len(failures)} of {self.samples} judge samples failed; first: {failures[0]}"
            )
            return Grading(
                passed=None,
                score=None,
                error=cause,
                samples=tuple(scores),
                reason=reasons[0] if reasons else None,
                unstable=straddles,
            )
        mean = fmean(scores)
        return Grading(
            passed=mean >= self.pass_threshold,
            score=mean,
            reason=reasons[0],
            samples=tuple(scores),
            unstable=straddles,
        )


@dataclass(frozen=True)
class GraderChoice:
    grader: Grader
    requested: str
    notice: str | None = None
    """Set when the requested grader was unknown and the deterministic one stood in."""


@dataclass(frozen=True)
class GradingService:
    """Select a grader by id; an unknown id falls back to the deterministic grader (no tokens).

    The judge is only available when a judge model is configured: asking for ``llm_judge``
    without one is invalid input, never a silent fallback that would look like a judged run."""

    judge_model: Model | None = None
    judge_provenance: Provenance | None = None
    judge_samples: int = 1
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    timeout_s: float | None = 60.0

    def __post_init__(self) -> None:
        if not 1 <= self.judge_samples <= MAX_JUDGE_SAMPLES:
            raise InputError(f"--judge-samples must be between 1 and {MAX_JUDGE_SAMPLES}, got {self.judge_samples}")
        if not 0.0 <= self.pass_threshold <= 1.0:
            raise InputError(f"pass threshold must lie between 0 and 1, got {self.pass_threshold}")

    @staticmethod
    def known() -> tuple[str, ...]:
        return (DETERMINISTIC, LLM_JUDGE)

    def select(self, grader_id: str) -> GraderChoice:
        if grader_id == LLM_JUDGE:
            if self.judge_model is None:
                raise InputError(
                    "grader 'llm_judge' needs a judge model: pass --judge-model ID (e.g. goldeneval.openai with "
                    "--judge-option base_url=... --judge-option model=...)"
                )
            return GraderChoice(
                LlmJudgeGrader(
                    self.judge_model,
                    self.judge_provenance or Provenance(),
                    samples=self.judge_samples,
                    pass_threshold=self.pass_threshold,
                    timeout_s=self.timeout_s,
                ),
                grader_id,
            )
        grader = DeterministicGrader(pass_threshold=self.pass_threshold)
        if grader_id == DETERMINISTIC:
            return GraderChoice(grader, grader_id)
        notice = (
            f"unknown grader {one_line(grader_id, 60)!r} (known: {', '.join(self.known())}): "
            "graded with the deterministic grader instead (no model call)"
        )
        return GraderChoice(grader, grader_id, notice)
