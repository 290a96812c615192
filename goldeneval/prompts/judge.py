"""The LLM judge (opt-in, id ``llm_judge`` or ``llm_judge:<rubric>``): how it is asked
(:func:`judge_messages`, :func:`ask_judge`), how its reply is read (:func:`parse_judge_verdict`)
and how its samples make a verdict (:class:`LlmJudgeGrader`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from statistics import fmean

from goldeneval.core.errors import one_line
from goldeneval.core.provenance import Provenance
from goldeneval.core.spec import DEFAULT_TIMEOUT_S
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.deterministic import grade_abstention
from goldeneval.prompts.grades import (
    DEFAULT_PASS_THRESHOLD,
    JUDGE_PROMPT_REVISION,
    LLM_JUDGE,
    Grading,
    GradingItem,
)
from goldeneval.prompts.models import ChatMessage, ChatRequest, Model, call_with_timeout
from goldeneval.prompts.rubrics import Rubric, catalogue_identity, rubric_named

__all__ = [
    "CONTEXT_HEADING",
    "JUDGE_SYSTEM",
    "REPLY_FORMAT",
    "LlmJudgeGrader",
    "ask_judge",
    "judge_messages",
    "parse_judge_verdict",
]

_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


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
REPLY_FORMAT = 'Reply with only a JSON object: {"score": <a number from 0 to 1>, "reason": "<one sentence>"}.'
CONTEXT_HEADING = "Context passages the model was given:"
"""Heads the block of passages a context-aware rubric shows the judge."""


def judge_messages(item: GradingItem, answer: str, rubric: Rubric | None = None) -> tuple[ChatMessage, ...]:
    """The judge's messages: without a rubric the task, the reference and the criteria; with
    one, its instructions and the question, and the passages or the reference when it judges
    against them."""
    if rubric is None:
        system = JUDGE_SYSTEM
        parts = [f"Task:\n{item.prompt}"]
        if item.reference:
            parts.append(f"Reference answer:\n{item.reference}")
        if item.assertions:
            parts.append("Criteria:\n" + "\n".join(f"- {a.describe()}" for a in item.assertions))
    else:
        system = f"{rubric.text} {REPLY_FORMAT}"
        parts = [f"Question:\n{item.prompt}"]
        if rubric.uses_context:
            passages = [f"[{n}] {text}" for n, text in enumerate(item.context, start=1)]
            parts.append(CONTEXT_HEADING + "\n" + ("\n\n".join(passages) if passages else "(no passages)"))
        elif rubric.uses_reference and item.reference:
            parts.append(f"Reference answer:\n{item.reference}")
    parts.append(f"Answer to grade:\n{answer}")
    return (ChatMessage("system", system), ChatMessage("user", "\n\n".join(parts)))


def ask_judge(model: Model, request: ChatRequest, timeout_s: float | None) -> tuple[float, str]:
    """One judge call: ``(score, reason)``; a failed call or a malformed verdict raises
    ``ValueError`` saying what went wrong (the grader's samples and the judge measures alike)."""
    try:
        text = call_with_timeout(lambda: model.complete(request), timeout_s)
    except (Exception, SystemExit) as exc:
        raise ValueError(f"judge call failed: {type(exc).__name__}: {one_line(str(exc), 200)}") from None
    if not isinstance(text, str):
        raise ValueError(f"judge call returned {type(text).__name__}, not text")
    return parse_judge_verdict(text)


@dataclass(frozen=True)
class LlmJudgeGrader:
    """A judge model's score, sampled ``samples`` times (``--judge-samples``)."""

    model: Model
    model_provenance: Provenance
    samples: int = 1
    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    rubric: Rubric | None = None
    """The run's rubric; None: the task/reference/criteria prompt of ``judge-prompt-v1``."""
    fail_on_unstable: bool = False
    """An unstable verdict is a grading error (the run is incomplete, the gate fails)."""
    abstention: AbstentionRules = field(default_factory=AbstentionRules)

    @property
    def id(self) -> str:
        return LLM_JUDGE if self.rubric is None else f"{LLM_JUDGE}:{self.rubric.name}"

    @property
    def identity(self) -> str:
        judge = self.model_provenance
        rubric = self.rubric.identity if self.rubric is not None else "none"
        return (
            f"llm_judge/v2({JUDGE_PROMPT_REVISION};rubric={rubric};{catalogue_identity()};"
            f"model={judge.model_revision or 'unknown'};"
            f"pipeline={judge.pipeline_identity or 'unknown'};samples={self.samples};"
            f"threshold={self.pass_threshold:g};unstable={'error' if self.fail_on_unstable else 'status'};"
            f"{self.abstention.identity})"
        )

    def _sample(self, request: ChatRequest) -> tuple[float, str]:
        return ask_judge(self.model, request, self.timeout_s)

    def grade(self, item: GradingItem, answer: str) -> Grading:
        rubric = rubric_named(item.rubric) if item.rubric is not None else self.rubric
        # Only a judge comparing with the gist can tell an abstention in other words; a
        # faithfulness or relevance verdict would pass any faithful or on-topic non-answer.
        asks = rubric is None or rubric.decides_abstention
        return grade_abstention(self.abstention, item, answer, lambda: self._judge(item, answer), ask=asks)

    def _judge(self, item: GradingItem, answer: str) -> Grading:
        rubric = rubric_named(item.rubric) if item.rubric is not None else self.rubric
        request = ChatRequest(messages=judge_messages(item, answer, rubric), question=item.prompt)
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
        if straddles:
            if self.fail_on_unstable:
                return Grading(
                    passed=None,
                    score=None,
                    error=(
                        f"unstable judge verdict: samples {', '.join(f'{s:g}' for s in scores)} straddle the pass "
                        f"threshold {self.pass_threshold:g}"
                    ),
                    samples=tuple(scores),
                    reason=reasons[0],
                    unstable=True,
                )
            return Grading(
                passed=None, score=mean, reason=reasons[0], samples=tuple(scores), unstable=True, outcome="unstable"
            )
        return Grading(passed=mean >= self.pass_threshold, score=mean, reason=reasons[0], samples=tuple(scores))
