"""Running a golden prompt set against a model (ADR-060, decision 3): one call per prompt.

:class:`EvaluationService` asks the model every prompt, grades each answer, records the
wall-clock latency and aggregates a pass rate and a mean score.  It neither persists nor
compares, so it is testable without a database.  A model that raises, times out or returns
no text makes that prompt an ``error`` (stage ``model``); a grader that fails makes it an
``error`` (stage ``grader``); the run goes on and is ``incomplete``.  An unstable judge
verdict has the status ``unstable``: graded, not a pass, counted on its own.

:class:`PromptRun` is the evaluated run; :meth:`PromptRun.to_record` maps it onto the store
row every run kind shares: ``model`` = the series name, ``grader`` = the grader id,
``pass_rate`` = the share of graded prompts that passed, ``mean_score`` = their mean score.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from statistics import fmean
from typing import TYPE_CHECKING, Any, Literal

from goldeneval.core.collector import plugin_collections
from goldeneval.core.errors import one_line
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import Provenance, variant_fingerprint
from goldeneval.core.records import RunRecord, SliceRates, record_of
from goldeneval.core.spec import DEFAULT_TIMEOUT_S
from goldeneval.prompts.details import (
    PROMPT_DETAILS_FORMAT_VERSION,
    SLICE_KEYS,
    MeasureSummary,
    PromptAggregates,
    PromptDetail,
    PromptDetails,
    PromptRate,
)
from goldeneval.prompts.facts.support import unsupported_facts
from goldeneval.prompts.golden import GoldenPrompt, GoldenPromptSet
from goldeneval.prompts.graders import Grader, Grading, GradingItem
from goldeneval.prompts.models import ChatMessage, ChatRequest, Model, call_with_timeout

if TYPE_CHECKING:
    from goldeneval.prompts.measures import MeasureJudge

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "PROMPT_BENCHMARK_VERSION",
    "PROMPT_PROTOCOL_REVISION",
    "EvaluationService",
    "PromptRun",
    "Task",
    "aggregate_prompts",
    "prompt_benchmark_fingerprint",
    "prompt_tasks",
]

PROMPT_PROTOCOL_REVISION = "prompt-grading/v1"
PROMPT_BENCHMARK_VERSION = "prompt-benchmark-v1"
Progress = Callable[[Sequence["Task"]], Iterable["Task"]]


def prompt_benchmark_fingerprint(set_digest: str, protocol: str) -> str:
    """What a prompt run measured: the prompt set's digest and the grading protocol (with the
    grader's identity).  Never unknown: a prompt set carries everything it is graded by."""
    encoded = json.dumps([PROMPT_BENCHMARK_VERSION, set_digest, protocol], ensure_ascii=False, separators=(",", ":"))
    return f"{PROMPT_BENCHMARK_VERSION}:sha256:{hashlib.sha256(encoded.encode('utf-8')).hexdigest()}"


@dataclass(frozen=True)
class Task:
    """One model call to make and grade: the request, the grading item, and labels to carry."""

    request: ChatRequest
    item: GradingItem
    tags: tuple[str, ...] = ()
    form: str | None = None
    hard_class: str | None = None
    retrieval_hit: bool | None = None
    documents: tuple[str, ...] | None = None
    retrieval_error: str | None = None
    """Answers flow: the retriever failed on this question; no model call is made."""


def prompt_tasks(prompt_set: GoldenPromptSet) -> list[Task]:
    return [_prompt_task(prompt) for prompt in prompt_set.prompts]


def _prompt_task(prompt: GoldenPrompt) -> Task:
    messages = ((ChatMessage("system", prompt.system),) if prompt.system else ()) + (
        ChatMessage("user", prompt.prompt),
    )
    return Task(
        request=ChatRequest(messages=messages, question=prompt.prompt),
        item=GradingItem(prompt.id, prompt.prompt, prompt.assertions, prompt.reference, rubric=prompt.rubric),
        tags=prompt.tags,
    )


def _rate(details: Sequence[PromptDetail]) -> PromptRate:
    """Counts and rates; ``graded`` = ``passed`` + ``failed`` + ``over_abstentions`` + ``unstable``."""
    graded = [d for d in details if d.scored]
    passed = sum(1 for d in graded if d.passed is True)
    scores = [d.score for d in graded if d.score is not None]
    return PromptRate(
        prompts=len(details),
        graded=len(graded),
        errors=len(details) - len(graded),
        passed=passed,
        pass_rate=passed / len(graded) if graded else None,
        mean_score=fmean(scores) if scores else None,
        failed=sum(1 for d in graded if d.failed),
        over_abstentions=sum(1 for d in graded if d.over_abstained),
        under_abstentions=sum(1 for d in graded if d.under_abstained),
        unstable=sum(1 for d in graded if d.status == "unstable"),
    )


def _groups(details: Sequence[PromptDetail], key: Callable[[PromptDetail], str | None]) -> dict[str, PromptRate]:
    grouped: dict[str, list[PromptDetail]] = {}
    for detail in details:
        value = key(detail)
        if value is not None:
            grouped.setdefault(value, []).append(detail)
    return {name: _rate(members) for name, members in sorted(grouped.items())}


def _measures(details: Sequence[PromptDetail]) -> dict[str, MeasureSummary]:
    """Each judge measure's mean over the graded questions that have a value of it."""
    names = list(dict.fromkeys(name for d in details if d.scored for name in d.measures))
    summaries = {}
    for name in names:
        values = [v for d in details if d.scored and (v := d.measures.get(name)) is not None]
        summaries[name] = MeasureSummary(questions=len(values), mean=fmean(values) if values else None)
    return summaries


def aggregate_prompts(details: Sequence[PromptDetail], *, answers: bool = False) -> PromptAggregates:
    latencies = [d.latency_ms for d in details if d.stage != "retrieval"]
    return PromptAggregates(
        measures=_measures(details),
        overall=_rate(details),
        unstable=sum(1 for d in details if d.unstable),
        mean_latency_ms=round(fmean(latencies), 3) if latencies else None,
        by_retrieval=_groups(details, SLICE_KEYS["retrieval"]) if answers else {},
        by_form=_groups(details, SLICE_KEYS["form"]) if answers else {},
        by_hard_class=_groups(details, SLICE_KEYS["hard_class"]) if answers else {},
    )


_DETAILS_FIELDS = (
    "kind",
    "protocol",
    "grader",
    "requested_grader",
    "grader_identity",
    "pass_threshold",
    "judge_samples",
    "model_id",
    "retriever_id",
    "retrieval_run_id",
    "retrieval_benchmark_fingerprint",
)
"""The run's fields that its stored details (:class:`PromptDetails`) carry as they are."""


@dataclass(frozen=True)
class PromptRun:
    """One evaluated prompt run (or answer run): results, identity, and how it was graded."""

    kind: Literal["prompts", "answers"]
    set_id: str
    series: str
    """The series name the run is stored under (the store's ``model`` column)."""
    model_id: str
    grader: str
    grader_identity: str
    pass_threshold: float
    results: tuple[PromptDetail, ...]
    started_at: datetime
    label_digest: str
    protocol: str
    benchmark_fingerprint: str | None
    provenance: Provenance = field(default_factory=Provenance)
    requested_grader: str | None = None
    judge_samples: int | None = None
    retriever_id: str | None = None
    retrieval_run_id: str | None = None
    retrieval_benchmark_fingerprint: str | None = None
    notices: tuple[str, ...] = ()
    """What the user should know (a grader fallback); shown by each door, never stored."""
    usage: Mapping[str, Mapping[str, Any]] | None = None
    """The model calls by role (``model``, ``judge``): stored in the details (:mod:`goldeneval.prompts.usage`)."""

    @property
    def aggregates(self) -> PromptAggregates:
        return aggregate_prompts(self.results, answers=self.kind == "answers")

    @property
    def variant_fingerprint(self) -> str | None:
        return variant_fingerprint(self.provenance)

    @property
    def complete(self) -> bool:
        return all(r.scored for r in self.results)

    def details(self, privacy: PrivacyMode = PrivacyMode.FULL, *, tables_run_id: str | None = None) -> PromptDetails:
        results = list(self.results)
        if privacy is PrivacyMode.METADATA_ONLY:
            results = [r.without_content() for r in results]
        return PromptDetails(
            **{name: getattr(self, name) for name in _DETAILS_FIELDS},
            format_version=PROMPT_DETAILS_FORMAT_VERSION,
            tables_run_id=tables_run_id,
            usage={role: dict(totals) for role, totals in self.usage.items()} if self.usage else None,
            aggregates=self.aggregates,
            prompts=results,
        )

    def to_record(self, privacy: PrivacyMode = PrivacyMode.FULL, *, tables_run_id: str | None = None) -> RunRecord:
        aggregates = self.aggregates
        overall = aggregates.overall
        slices = [
            SliceRates(kind, value, rate.prompts, rate.graded, rate.pass_rate, rate.mean_score)
            for kind, groups in (
                ("retrieval", aggregates.by_retrieval),
                ("form", aggregates.by_form),
                ("hard_class", aggregates.by_hard_class),
            )
            for value, rate in groups.items()
        ]
        return record_of(
            self,
            privacy,
            grader=self.grader,
            rates=(overall.pass_rate, overall.mean_score),
            counts=(overall.prompts, overall.graded, overall.errors),
            details=self.details(privacy, tables_run_id=tables_run_id),
            slices=slices,
        )


def _failure(exc: BaseException) -> str:
    text = one_line(str(exc))
    return text if text.startswith("timed out after ") else f"{type(exc).__name__}: {text}"


def _faithfulness(task: Task, answer: str) -> dict[str, object]:
    """Answer runs: the share of the answer's facts the retrieved passages state, and those
    they do not (:func:`~goldeneval.prompts.facts.support.unsupported_facts`); nothing for prompt runs."""
    if task.documents is None:
        return {}
    supported, unsupported = unsupported_facts(answer, task.item.context)
    total = len(supported) + len(unsupported)
    return {
        "supported_share": len(supported) / total if total else None,
        "unsupported_facts": [fact.text for fact in unsupported],
    }


def _detail(task: Task, answer: str | None, latency_ms: float, **fields: object) -> PromptDetail:
    return PromptDetail.model_validate(
        {
            "id": task.item.id,
            "tags": list(task.tags),
            "answer": answer,
            "latency_ms": round(latency_ms, 3),
            "form": task.form,
            "hard_class": task.hard_class,
            "retrieval_hit": task.retrieval_hit,
            "documents": list(task.documents) if task.documents is not None else None,
            **fields,
        }
    )


@dataclass(frozen=True)
class EvaluationService:
    """Ask a model every task, grade each answer; stores and compares nothing."""

    model: Model
    grader: Grader
    timeout_s: float | None = DEFAULT_TIMEOUT_S
    measures: MeasureJudge | None = None
    """The judge measures asked beside the grader (``--judge-rubrics``)."""

    def answer(self, task: Task) -> tuple[str | None, float, str | None]:
        """``(answer, latency in ms, error)`` of one model call, within the timeout."""
        start = time.perf_counter()
        try:
            text = call_with_timeout(lambda: self.model.complete(task.request), self.timeout_s)
        except (Exception, SystemExit) as exc:  # a plug-in's sys.exit() is its error, not ours
            return None, (time.perf_counter() - start) * 1000.0, _failure(exc)
        elapsed = (time.perf_counter() - start) * 1000.0
        if not isinstance(text, str):
            return None, elapsed, f"TypeError: complete() returned {type(text).__name__}, not text"
        return text, elapsed, None

    def evaluate(self, task: Task) -> PromptDetail:
        if task.retrieval_error is not None:
            return _detail(task, None, 0.0, status="error", stage="retrieval", passed=None, score=None,
                           error=task.retrieval_error)  # fmt: skip
        answer, latency_ms, error = self.answer(task)
        if answer is None:
            return _detail(task, None, latency_ms, status="error", stage="model", passed=None, score=None, error=error)
        try:
            grading = self.grader.grade(task.item, answer)
        except Exception as exc:  # a grader's bug is this prompt's grading failure
            grading = Grading(passed=None, score=None, error=_failure(exc))
        common = {
            "assertions": [a.model_dump() for a in grading.assertions],
            "samples": list(grading.samples),
            "spread": grading.spread,
            "unstable": grading.unstable,
            "reason": grading.reason,
        }
        if grading.error is not None:
            return _detail(task, answer, latency_ms, status="error", stage="grader", passed=None, score=None,
                           error=grading.error, **common)  # fmt: skip
        measured: dict[str, object] = {}
        if self.measures is not None:
            try:
                result = self.measures.measure(task.item, answer)
            except Exception as exc:  # a measure's bug is this prompt's grading failure
                return _detail(task, answer, latency_ms, status="error", stage="grader", passed=None, score=None,
                               error=_failure(exc), **common)  # fmt: skip
            if result.error is not None:
                return _detail(task, answer, latency_ms, status="error", stage="grader", passed=None, score=None,
                               error=result.error, **common)  # fmt: skip
            measured = {"measures": result.values, "measure_verdicts": result.verdicts}
        grading = grading.with_outcome()
        status = "unstable" if grading.outcome == "unstable" else "ok"
        return _detail(task, answer, latency_ms, status=status, passed=grading.passed, score=grading.score,
                       outcome=grading.outcome, **common, **_faithfulness(task, answer), **measured)  # fmt: skip

    @plugin_collections()  # models and graders are plug-in code (goldeneval.core.collector)
    def run(self, tasks: Sequence[Task], progress: Progress | None = None) -> list[PromptDetail]:
        return [self.evaluate(task) for task in (tasks if progress is None else progress(tasks))]
