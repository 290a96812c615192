"""The typed, versioned ``details`` of a prompt run and of an answer run (the store's JSON column).

Prompt and answer runs carry ``kind: "prompts"`` or ``kind: "answers"``; the store reads
them back through :mod:`goldeneval.core.kinds` with :data:`PROMPT_DETAILS`, which the prompts
kind's declaration names.
Every model forbids unknown keys, so a renamed field fails loudly.  In ``metadata_only`` no
prompt text, answer text, judge reason, assertion message or context document id is kept:
see :meth:`PromptDetail.without_content`.

Format versions: 1 — the first; 2 — each prompt's ``outcome`` (``pass``, ``fail``,
``abstained``, ``missed_abstention``, ``over_abstention``, ``unstable``), the status
``unstable`` (an unstable judge verdict: graded, but neither a pass nor a fail), and per group
the counts ``failed``, ``over_abstentions`` and ``unstable`` (issue 24); 3 — answer runs'
faithfulness without a judge per question, ``supported_share`` and ``unsupported_facts``
(issue 42); 4 — the judge measures of ``--judge-rubrics`` per question (``measures``,
``measure_verdicts``) and in the aggregates (``measures``), absent when the run asked for none
(issue 42).  Version 1 details read as they were (no outcome; their failures count as
``failed``); versions 1 and 2 have no faithfulness; versions 1 to 3 no judge measures.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldeneval.core.forms import NO_HARD_CLASS
from goldeneval.core.kinds import DetailsKind, stored_details_error
from goldeneval.core.privacy import content_free_error, withheld
from goldeneval.core.records import Completion
from goldeneval.core.stats import Verdicts

__all__ = [
    "PROMPTS_COMPLETION",
    "PROMPT_DETAILS",
    "PROMPT_DETAILS_FORMAT_VERSION",
    "PROMPT_RATE_NAMES",
    "SLICE_KEYS",
    "AssertionOutcome",
    "MeasureSummary",
    "Outcome",
    "PromptAggregates",
    "PromptDetail",
    "PromptDetails",
    "PromptRate",
]

PROMPT_DETAILS_FORMAT_VERSION = 4
Outcome = Literal["pass", "fail", "abstained", "missed_abstention", "over_abstention", "unstable"]
"""What kind of verdict a graded prompt got: ``pass``/``fail``; on a question no document
answers, ``abstained`` (a pass) or ``missed_abstention`` (a fail: it answered anyway); on one
that a document answers, ``over_abstention`` (a fail of its own kind: it said it could not
answer); ``unstable`` (judge samples straddle the pass threshold: neither)."""
PROMPT_RATE_NAMES: Mapping[str, str] = {"pass_rate": "pass rate", "mean_score": "mean score"}
"""Prompt and answer runs (ADR-060): the same two columns as retrieval runs, the same thresholds."""


class _Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class AssertionOutcome(_Record):
    """One deterministic assertion evaluated against an answer."""

    type: str
    passed: bool
    weight: float
    negate: bool = False
    message: str | None = None
    """What was expected and found; None in ``metadata_only`` (it quotes the set and the answer)."""


class PromptDetail(_Record):
    """One prompt (or golden question, in an answer run) of a stored run."""

    id: str
    status: Literal["ok", "unstable", "error"]
    """``error``: the model call or the grading failed; never a silent pass or fail.
    ``unstable``: graded, but the judge samples straddle the threshold (``passed`` is None)."""
    stage: Literal["retrieval", "model", "grader"] | None = None
    """Where an error happened."""
    passed: bool | None
    score: float | None
    latency_ms: float
    """Wall-clock time of the model call."""
    error: str | None = None
    outcome: Outcome | None = None
    """The kind of verdict (format 2); None for an error, and in format 1 details."""
    tags: list[str] = Field(default_factory=list)
    answer: str | None = Field(default=None, exclude_if=withheld)
    """The model's answer; None in ``metadata_only``."""
    reason: str | None = Field(default=None, exclude_if=withheld)
    """The judge's reason (the first sample's); None in ``metadata_only``."""
    assertions: list[AssertionOutcome] = Field(default_factory=list)
    samples: list[float] = Field(default_factory=list)
    """Judge scores, one per successful sample."""
    spread: float | None = None
    """Largest minus smallest judge sample."""
    unstable: bool = False
    """The judge samples straddle the pass threshold."""
    retrieval_hit: bool | None = None
    """Answer runs: whether retrieval found an expected document in the context (top-3)."""
    form: str | None = None
    hard_class: str | None = None
    documents: list[str] | None = Field(default=None, exclude_if=withheld)
    """Answer runs: the context documents, best first; None in ``metadata_only``."""
    supported_share: float | None = None
    """Answer runs (format 3): faithfulness without a judge, the share of the answer's facts
    (numbers, times, dates, entities: :func:`goldeneval.prompts.facts.support.unsupported_facts`) that
    the retrieved context states; None when the answer states no fact."""
    unsupported_facts: list[str] | None = Field(default=None, exclude_if=withheld)
    """Answer runs (format 3): the answer's facts no retrieved passage states; None in
    ``metadata_only`` (they quote the answer)."""
    measures: dict[str, float | None] = Field(default_factory=dict, exclude_if=lambda value: not value)
    """Format 4: each judge measure of ``--judge-rubrics`` (:mod:`goldeneval.prompts.measures`),
    from 0 to 1, None when there was nothing to measure; absent when the run asked for none.
    Numbers only: kept in ``metadata_only``."""
    measure_verdicts: dict[str, list[float]] = Field(default_factory=dict, exclude_if=lambda value: not value)
    """Format 4: the judge's score of each unit behind a measure (answer sentences, retrieved
    documents in rank order, reference sentences), so a measure can be recomputed by hand."""

    @property
    def scored(self) -> bool:
        """Graded (a pass, a fail or an unstable verdict), not an error."""
        return self.status != "error"

    @property
    def over_abstained(self) -> bool:
        return self.outcome == "over_abstention"

    @property
    def under_abstained(self) -> bool:
        """Answered a question no document answers (a missed abstention: also a failure)."""
        return self.outcome == "missed_abstention"

    @property
    def failed(self) -> bool:
        """A wrong answer: graded, not passed, neither an over-abstention nor unstable."""
        return self.scored and self.passed is False and not self.over_abstained

    def without_content(self) -> PromptDetail:
        """The ``metadata_only`` form: ids, verdicts, scores and latencies only."""
        return self.model_copy(
            update={
                "answer": None,
                "reason": None,
                "documents": None,
                "unsupported_facts": None,
                "error": content_free_error(self.error),
                "assertions": [a.model_copy(update={"message": None}) for a in self.assertions],
            }
        )

    def to_json(self) -> dict[str, Any]:
        """As the store holds it: ``answer``, ``reason`` and ``documents`` absent when withheld."""
        return self.model_dump(mode="json")


class PromptRate(_Record):
    """Counts and rates of a group of prompts."""

    prompts: int
    graded: int
    errors: int
    passed: int
    pass_rate: float | None
    """Passed over graded: an unstable verdict is graded and is not a pass."""
    mean_score: float | None
    failed: int = 0
    """Wrong answers (a missed abstention included); over-abstentions are counted apart."""
    over_abstentions: int = 0
    under_abstentions: int = 0
    """Answer runs: questions no document answers that the model answered anyway (missed
    abstentions); they are also counted in ``failed``."""
    unstable: int = 0


class MeasureSummary(_Record):
    """A judge measure over a run: its mean over the graded questions that have a value."""

    questions: int
    """Graded questions with a value of this measure."""
    mean: float | None


class PromptAggregates(_Record):
    overall: PromptRate
    unstable: int = 0
    mean_latency_ms: float | None = None
    by_retrieval: dict[str, PromptRate] = Field(default_factory=dict)
    """Answer runs: ``hit`` / ``miss`` (retrieval found an expected document or not)."""
    by_form: dict[str, PromptRate] = Field(default_factory=dict)
    by_hard_class: dict[str, PromptRate] = Field(default_factory=dict)
    measures: dict[str, MeasureSummary] = Field(default_factory=dict, exclude_if=lambda value: not value)
    """Format 4: each judge measure's mean (``--judge-rubrics``), beside and never mixed into the
    pass rate and the mean score; absent when the run asked for none."""


def _retrieval_slice(detail: PromptDetail) -> str | None:
    return None if detail.retrieval_hit is None else ("hit" if detail.retrieval_hit else "miss")


SLICE_KEYS: Mapping[str, Callable[[PromptDetail], str | None]] = {
    "retrieval": _retrieval_slice,
    "form": lambda detail: detail.form,
    "hard_class": lambda detail: detail.hard_class or NO_HARD_CLASS,
}
"""An answer run's slices (a prompt run has none): each prompt's group by whether retrieval
found an expected document, by form and by hard class; None: in no group of that kind."""


class PromptDetails(_Record):
    """The ``details`` of a prompt run (``kind: prompts``) or an answer run (``kind: answers``)."""

    kind: Literal["prompts", "answers"]
    format_version: int = Field(default=PROMPT_DETAILS_FORMAT_VERSION, ge=1, le=PROMPT_DETAILS_FORMAT_VERSION)
    protocol: str
    """The grading protocol and the grader's identity: part of the benchmark fingerprint."""
    grader: str
    """The grader that graded (after any fallback)."""
    requested_grader: str | None = None
    """The grader asked for, when it was unknown and the deterministic grader stood in."""
    grader_identity: str
    pass_threshold: float
    judge_samples: int | None = None
    model_id: str
    """The model id (registered or package.module:factory) behind the series name."""
    retriever_id: str | None = None
    """Answer runs: the retriever that found the context."""
    retrieval_run_id: str | None = None
    """Answer runs: the retrieval run stored beside this one."""
    retrieval_benchmark_fingerprint: str | None = None
    tables_run_id: str | None = None
    usage: dict[str, dict[str, Any]] | None = Field(default=None, exclude_if=lambda value: value is None)
    """The run's model calls by role (``model``, ``judge``): calls made, answered from the
    cache, tokens reported and their cost (``goldeneval.prompts.usage.UsageTotals``); absent
    when the run made no managed call, so details written before it are unchanged."""
    aggregates: PromptAggregates
    prompts: list[PromptDetail]

    @property
    def unit(self) -> str:
        """What the run asked, for messages: ``prompts`` (a prompt run) or ``questions`` (an
        answer run, over a golden question set)."""
        return "prompts" if self.kind == "prompts" else "questions"

    @property
    def questions(self) -> list[PromptDetail]:
        """The prompts, under the name the retrieval details use."""
        return self.prompts

    def passes(self) -> dict[str, bool]:
        """Per prompt id, whether it passed (graded prompts only, an unstable one as not passed,
        as in the pass rate): the paired outcome of regressions."""
        return {p.id: p.passed is True for p in self.prompts if p.scored}

    def slice_of(self, kind: str) -> Mapping[str, str] | None:
        """Each prompt's value in the slices of ``kind`` (:data:`SLICE_KEYS`)."""
        key = SLICE_KEYS.get(kind)
        if key is None:
            return None
        return {p.id: value for p in self.prompts if (value := key(p)) is not None}

    @property
    def rate_names(self) -> Mapping[str, str]:
        return PROMPT_RATE_NAMES

    def paired_outcomes(self, rate: str) -> Verdicts | None:
        """The pass rate is a share of passes; the mean score is a mean, with no paired outcome."""
        return Verdicts.of(self.passes()) if rate == "pass_rate" else None

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def to_json_text(self) -> str:
        """:meth:`to_json` as one JSON string, serialised without a Python object per value."""
        return self.model_dump_json()

    def to_dataframe(self) -> Any:
        """One row per prompt (pandas): for notebooks."""
        import pandas as pd  # type: ignore[import-untyped]

        return pd.DataFrame([p.model_dump(exclude={"assertions"}) for p in self.prompts])


def read_prompt_details(text: str | bytes, where: str) -> PromptDetails:
    """Stored prompt or answer details; a mismatch names the run and the field."""
    try:
        return PromptDetails.model_validate_json(text)
    except ValidationError as exc:
        raise stored_details_error(exc, where) from None


PROMPTS_COMPLETION = Completion(unit="prompts", done="answered and graded", failed="failed (model call or grading)")
"""A prompt run is complete when every prompt was answered and graded."""

PROMPT_DETAILS = DetailsKind(names=("prompts", "answers"), read=read_prompt_details)
"""How prompt and answer runs' details are read back, named by the prompts kind's declaration
(:mod:`goldeneval.kinds.prompts`)."""
