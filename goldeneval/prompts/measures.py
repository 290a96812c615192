"""Judge measures (issue 42): several rubrics in one run, each stored as its own measure.

``--judge-rubrics faithfulness,relevance,context_precision,context_recall`` (the suite file's
``judge: rubrics:``) asks the judge model, beside whatever grader decides pass or fail, for
each named measure of :data:`goldeneval.prompts.rubrics.MEASURES`, per question, as RAGAS
defines it.  A judge call scores one unit; a unit counts as a *yes* (supported, useful,
attributable) when its score is at least :data:`VERDICT_THRESHOLD`:

* ``faithfulness`` — each sentence of the answer against the retrieved passages: the share
  supported (RAGAS: supported claims over claims; a sentence stands for a claim here);
* ``relevance``, ``correctness`` — the whole answer, once: the judge's score;
* ``context_precision`` — each retrieved document, in rank order, against the question and the
  reference answer: ``v_k`` is 1 when the k-th document is useful.  The measure is RAGAS's
  ``sum_k(precision@k * v_k) / sum_k(v_k)`` (the mean of precision@k over the useful ranks),
  0 when no document is useful; None when nothing was retrieved;
* ``context_recall`` — each sentence of the reference answer against the retrieved passages:
  the share attributable (RAGAS: attributable reference statements over all of them); 0 with
  no passage (nothing is attributable, no judge call).

A measure is a number in [0, 1] or None (nothing to measure: an answer without a sentence, no
retrieved document).  It is never averaged with the grader's score or pass rate.  A failed
judge call or a malformed verdict makes the question a grading error naming the measure (never
a silent gap).  Each unit's score is kept (``measure_verdicts``), so a measure can be checked
by hand.  The measures' identity (each rubric's name, version and digest, the unit, the judge
model's revision and the threshold) is part of the run's protocol and so of its fingerprint.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from goldeneval.core.errors import InputError
from goldeneval.core.provenance import Provenance
from goldeneval.core.spec import DEFAULT_TIMEOUT_S
from goldeneval.prompts.graders import CONTEXT_HEADING, REPLY_FORMAT, GradingItem, ask_judge, judge_messages
from goldeneval.prompts.models import ChatMessage, ChatRequest, Model
from goldeneval.prompts.rubrics import Measure, measure_named

__all__ = [
    "MEASURES_REVISION",
    "VERDICT_THRESHOLD",
    "MeasureJudge",
    "Measured",
    "check_measure_names",
    "context_precision",
    "sentences",
    "share",
]

MEASURES_REVISION = "judge-measures/v1"
VERDICT_THRESHOLD = 0.5
"""A unit's judge score from which it counts as supported, useful or attributable."""
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])|\n+")
_WORD = re.compile(r"\w")


def sentences(text: str) -> tuple[str, ...]:
    """The sentences of ``text``: split after ``.``, ``!`` or ``?`` before a capital or a digit,
    and at line breaks; pieces without a letter or digit are dropped ("7.80" stays whole)."""
    return tuple(piece.strip() for piece in _SENTENCE_END.split(text) if _WORD.search(piece))


def share(verdicts: Sequence[float]) -> float | None:
    """The share of units judged yes (score >= :data:`VERDICT_THRESHOLD`); None for no unit."""
    if not verdicts:
        return None
    return sum(1 for v in verdicts if v >= VERDICT_THRESHOLD) / len(verdicts)


def context_precision(verdicts: Sequence[float]) -> float | None:
    """RAGAS's context precision of documents judged in rank order: the mean of precision@k
    over the ranks k whose document is useful, 0 when none is; None for no document."""
    if not verdicts:
        return None
    useful = [v >= VERDICT_THRESHOLD for v in verdicts]
    hits = 0
    total = 0.0
    for k, yes in enumerate(useful, start=1):
        if yes:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


def check_measure_names(value: object) -> tuple[str, ...]:
    """Measure names (``faithfulness,context_recall``, or a list), each once, in order; an
    unknown one is refused listing the known ones."""
    if isinstance(value, str):
        names = [name.strip() for name in value.split(",")]
    elif isinstance(value, list | tuple) and all(isinstance(name, str) for name in value):
        names = [part.strip() for name in value for part in name.split(",")]
    else:
        raise ValueError(f"expected a list of rubric names or comma-separated text, got {type(value).__name__}")
    kept: list[str] = []
    for name in names:
        if not name or name in kept:
            continue
        try:
            measure_named(name)
        except InputError as exc:
            raise ValueError(str(exc)) from None
        kept.append(name)
    return tuple(kept)


@dataclass(frozen=True)
class Measured:
    """One question's measures: each value (None: nothing to measure) and the unit scores
    behind it; ``error`` set when a judge call failed."""

    values: dict[str, float | None]
    verdicts: dict[str, list[float]]
    error: str | None = None


def _passages(item: GradingItem) -> str:
    passages = [f"[{n}] {text}" for n, text in enumerate(item.context, start=1)]
    return CONTEXT_HEADING + "\n" + ("\n\n".join(passages) if passages else "(no passages)")


def unit_messages(measure: Measure, item: GradingItem, answer: str, unit: str) -> tuple[ChatMessage, ...]:
    """The judge's messages for one unit of ``measure``: the rubric, the question, and what the
    unit is judged against (the passages, or the reference answer)."""
    if measure.unit == "answer":
        return judge_messages(item, answer, measure.rubric)
    parts = [f"Question:\n{item.prompt}"]
    if measure.unit == "document":
        parts += [f"Reference answer:\n{item.reference or ''}", f"Passage to judge:\n{unit}"]
    elif measure.unit == "answer_statement":
        parts += [_passages(item), f"Statement of the answer to check:\n{unit}"]
    else:
        parts += [_passages(item), f"Statement of the reference answer to check:\n{unit}"]
    return (ChatMessage("system", f"{measure.rubric.text} {REPLY_FORMAT}"), ChatMessage("user", "\n\n".join(parts)))


@dataclass(frozen=True)
class MeasureJudge:
    """The judge model asked for each measure of ``--judge-rubrics``, one call per unit."""

    model: Model
    provenance: Provenance
    measures: tuple[Measure, ...]
    timeout_s: float | None = DEFAULT_TIMEOUT_S

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(m.name for m in self.measures)

    @property
    def identity(self) -> str:
        judge = self.provenance
        return (
            f"{MEASURES_REVISION}({','.join(m.identity for m in self.measures)};"
            f"model={judge.model_revision or 'unknown'};pipeline={judge.pipeline_identity or 'unknown'};"
            f"yes>={VERDICT_THRESHOLD:g})"
        )

    def units(self, measure: Measure, item: GradingItem, answer: str) -> tuple[str, ...]:
        """What ``measure`` judges one by one for this answer."""
        if measure.unit == "answer":
            return (answer,)
        if measure.unit == "answer_statement":
            return sentences(answer)
        if measure.unit == "document":
            return item.context
        return sentences(item.reference or "") if item.context else ()

    def measure(self, item: GradingItem, answer: str) -> Measured:
        values: dict[str, float | None] = {}
        verdicts: dict[str, list[float]] = {}
        for measure in self.measures:
            scores: list[float] = []
            for unit in self.units(measure, item, answer):
                request = ChatRequest(messages=unit_messages(measure, item, answer, unit), question=item.prompt)
                try:
                    score, _reason = ask_judge(self.model, request, self.timeout_s)
                except ValueError as exc:
                    return Measured(values, verdicts, f"judge measure {measure.name!r}: {exc}")
                scores.append(score)
            verdicts[measure.name] = scores
            values[measure.name] = self._value(measure, item, scores)
        return Measured(values, verdicts)

    @staticmethod
    def _value(measure: Measure, item: GradingItem, scores: Sequence[float]) -> float | None:
        if measure.unit == "answer":
            return scores[0]
        if measure.unit == "document":
            return context_precision(scores)
        if measure.unit == "reference_statement" and not item.context:
            return 0.0 if sentences(item.reference or "") else None
        return share(scores)
