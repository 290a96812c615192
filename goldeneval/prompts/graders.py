"""Graders (ADR-060, decision 2) and the service that picks one.

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

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from statistics import fmean
from typing import TYPE_CHECKING, Any, Protocol

from goldeneval.core.errors import InputError, one_line
from goldeneval.core.provenance import Provenance
from goldeneval.core.spec import DEFAULT_TIMEOUT_S
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.assertions import check_assertion
from goldeneval.prompts.details import AssertionOutcome, Outcome
from goldeneval.prompts.facts.grading import FACTS_VERSION, MAX_ANSWER_WORDS, grade_reference
from goldeneval.prompts.golden import Assertion
from goldeneval.prompts.grader_plugins import GRADERS, GraderContext, GraderError
from goldeneval.prompts.models import ChatMessage, ChatRequest, Model, call_with_timeout
from goldeneval.prompts.rubrics import Rubric, catalogue_identity, rubric_named

if TYPE_CHECKING:
    from goldeneval.prompts.measures import MeasureJudge

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

DETERMINISTIC = "deterministic"
LLM_JUDGE = "llm_judge"
DEFAULT_PASS_THRESHOLD = 0.5
MAX_JUDGE_SAMPLES = 20
JUDGE_PROMPT_REVISION = "judge-prompt-v1"
_OBJECT = re.compile(r"\{.*\}", re.DOTALL)


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


def grade_abstention(
    rules: AbstentionRules, item: GradingItem, answer: str, grade: Callable[[], Grading], *, ask: bool
) -> Grading:
    """The one abstention rule, for every grader.

    An item that does not say whether it is answerable is graded as it is.  Otherwise an
    answer that abstains (``rules``) passes an unanswerable question (outcome ``abstained``)
    and fails an answerable one (``over_abstention``, score 0) — with no model call either
    way.  An answer that does not abstain on an unanswerable question fails
    (``missed_abstention``) unless ``ask``: then the grader (a judge, which sees the gist
    saying nothing answers it) is asked whether it is an abstention in other words."""
    if item.answerable is None:
        return grade().with_outcome()
    phrase = rules.match(answer)
    if phrase is not None:
        if item.answerable:
            return Grading(
                passed=False,
                score=0.0,
                reason=f"over-abstention: the answer abstains ({phrase!r}) although a document answers the question",
                outcome="over_abstention",
            )
        return Grading(
            passed=True,
            score=1.0,
            reason=f"abstained ({phrase!r}): no document answers the question",
            outcome="abstained",
        )
    if item.answerable:
        return grade().with_outcome()
    if not ask:
        return Grading(
            passed=False,
            score=0.0,
            reason="no document answers the question, and the answer does not abstain (no abstention phrase found)",
            outcome="missed_abstention",
        )
    graded = grade().with_outcome()
    if graded.outcome == "pass":
        return replace(graded, outcome="abstained")
    return replace(graded, outcome="missed_abstention") if graded.outcome == "fail" else graded


def grade_assertions(assertions: Sequence[Assertion], answer: str) -> Grading:
    """A prompt's assertions, for every grader that checks them: the score is the weighted
    share that passed, and the prompt passes when all do."""
    outcomes = tuple(check_assertion(a, answer) for a in assertions)
    total = sum(o.weight for o in outcomes)
    score = sum(o.weight for o in outcomes if o.passed) / total
    return Grading(passed=all(o.passed for o in outcomes), score=score, assertions=outcomes)


def grade_assertions_or_reference(
    rules: AbstentionRules, item: GradingItem, answer: str, against_reference: Callable[[str, str], Grading]
) -> Grading:
    """How every grader without a judge grades (deterministic, semantic), decided once: the
    abstention rule (never asking), then the prompt's assertions when it has any, else
    ``against_reference(answer, reference)`` (the reference is empty when there is none)."""

    def grade() -> Grading:
        if item.assertions:
            return grade_assertions(item.assertions, answer)
        return against_reference(answer, item.reference or "")

    return grade_abstention(rules, item, answer, grade, ask=False)


@dataclass(frozen=True)
class DeterministicGrader:
    """Assertions, or the reference answer: no model call."""

    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    id: str = DETERMINISTIC
    abstention: AbstentionRules = field(default_factory=AbstentionRules)

    @property
    def identity(self) -> str:
        return (
            f"deterministic/v6(assertions;reference={FACTS_VERSION}(max_words={MAX_ANSWER_WORDS})"
            f"|best-sentences-token-f1>={self.pass_threshold:g};{self.abstention.identity})"
        )

    def grade(self, item: GradingItem, answer: str) -> Grading:
        return grade_assertions_or_reference(
            self.abstention, item, answer, lambda text, reference: self._against_reference(text, reference, item.prompt)
        )

    def _against_reference(self, answer: str, reference: str, question: str) -> Grading:
        graded = grade_reference(answer, reference, self.pass_threshold, question)
        return Grading(passed=graded.passed, score=graded.score, reason=graded.reason)


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


def _plugin_attribute(plugin_id: str, plugin: object, name: str) -> Any:
    try:
        return getattr(plugin, name)
    except AttributeError:
        raise GraderError(
            f"grader {plugin_id!r}: its factory returned {type(plugin).__name__}, which has no {name!r}"
        ) from None
    except (Exception, SystemExit) as exc:  # a property of plug-in code is plug-in code
        raise GraderError(
            f"grader {plugin_id!r}: reading its {name!r} raised {type(exc).__name__}: {one_line(str(exc), 200)}"
        ) from None


def _plugin_text(plugin_id: str, plugin: object, name: str) -> str:
    value = _plugin_attribute(plugin_id, plugin, name)
    if not isinstance(value, str) or not value.strip():
        raise GraderError(f"grader {plugin_id!r}: its {name!r} must be a non-empty string, got {value!r:.60}")
    return value


@dataclass(frozen=True)
class PluginGrader:
    """A plug-in grader as a run calls it (see :mod:`goldeneval.prompts.grader_plugins`).

    Built by :meth:`of`, which checks the plug-in once; ``id``, ``identity`` and
    ``pass_threshold`` are read then and kept, so what is stored is what was checked.  Each
    ``grade`` call is guarded: plug-in code that raises (or calls ``sys.exit()``), returns
    anything but a :class:`Grading` or a score outside [0, 1] makes that prompt's grading
    error, naming the grader, and the run goes on.  The abstention rule
    (:func:`grade_abstention`) is applied around the plug-in, and its rules are part of the
    identity, unless the plug-in declares ``grades_abstention = True`` (it calls
    :func:`grade_abstention` itself, as ``semantic`` does, with the rules of its context)."""

    inner: Any
    plugin_id: str
    id: str
    inner_identity: str
    pass_threshold: float
    abstention: AbstentionRules
    grades_abstention: bool = False

    @classmethod
    def of(cls, plugin_id: str, plugin: object, abstention: AbstentionRules) -> PluginGrader:
        """Check a factory's grader; anything missing or malformed is one line naming it."""
        grader_id = _plugin_text(plugin_id, plugin, "id")
        if grader_id == DETERMINISTIC or is_judge(grader_id):
            raise GraderError(f"grader {plugin_id!r}: its id {grader_id!r} is a built-in grader's")
        identity = _plugin_text(plugin_id, plugin, "identity")
        threshold = _plugin_attribute(plugin_id, plugin, "pass_threshold")
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not math.isfinite(threshold)
            or not 0.0 <= threshold <= 1.0
        ):
            raise GraderError(
                f"grader {plugin_id!r}: its 'pass_threshold' must be a number from 0 to 1, got {threshold!r:.60}"
            )
        if not callable(_plugin_attribute(plugin_id, plugin, "grade")):
            raise GraderError(f"grader {plugin_id!r}: its 'grade' is not callable")
        own = getattr(plugin, "grades_abstention", False) is True
        return cls(plugin, plugin_id, grader_id, identity, float(threshold), abstention, own)

    @property
    def identity(self) -> str:
        if self.grades_abstention:
            return self.inner_identity
        return f"{self.inner_identity};{self.abstention.identity}"

    @property
    def thread_safe(self) -> bool:
        """The plug-in's declaration (``--workers`` asks one prompt at a time when it is False)."""
        return getattr(self.inner, "thread_safe", True) is not False

    def grade(self, item: GradingItem, answer: str) -> Grading:
        if self.grades_abstention:
            return self._guarded(item, answer)
        return grade_abstention(self.abstention, item, answer, lambda: self._guarded(item, answer), ask=False)

    def _guarded(self, item: GradingItem, answer: str) -> Grading:
        try:
            result = self.inner.grade(item, answer)
        except (Exception, SystemExit) as exc:  # a plug-in's failure is this prompt's grading error
            return Grading(
                passed=None,
                score=None,
                error=f"grader {self.id!r} raised {type(exc).__name__}: {one_line(str(exc), 200)}",
            )
        if not isinstance(result, Grading):
            return Grading(
                passed=None, score=None, error=f"grader {self.id!r} returned {type(result).__name__}, not a Grading"
            )
        score = result.score
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
            or not 0.0 <= score <= 1.0
        ):
            return Grading(passed=None, score=None, error=f"grader {self.id!r} gave a score outside [0, 1]: {score!r}")
        return result


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
