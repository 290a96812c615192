"""Versioned judge rubrics (issue 24): what the opt-in LLM judge is asked to score.

Without a rubric the judge grades as it always did (``judge-prompt-v1``: the task, the
criteria and the reference).  A rubric replaces those instructions:

* ``correctness`` — does the answer state what the reference answer (the gist) states;
* ``faithfulness`` — is every claim of the answer supported by the retrieved passages the
  model saw (the judge is shown those passages; an answer that contradicts them, or adds
  claims they do not make, is unfaithful even when it happens to be true);
* ``relevance`` — does the answer address the question that was asked.

A rubric's identity (name, version and a digest of its exact text) is part of the judge's
identity and so of the benchmark fingerprint: editing a rubric's text without bumping its
version still makes the next comparison a ``mismatch``, never a silent one.  A prompt may
name its own rubric (the prompt set's ``rubric`` field), overriding the run's for that prompt.

**Judge measures** (issue 42, ``--judge-rubrics``): beside the grader's verdict, a run with a
judge model can ask for several rubrics at once, each stored as its own measure per question
(:mod:`goldeneval.prompts.measures`), judged per unit as RAGAS defines them:

* ``faithfulness`` — per sentence of the answer: is it supported by the retrieved passages
  (:data:`STATEMENT_SUPPORT`); the measure is the share supported;
* ``relevance`` and ``correctness`` — the whole answer, under the rubric of that name; the
  measure is the judge's score;
* ``context_precision`` — per retrieved document, in rank order: is it useful to arrive at the
  reference answer (:data:`CONTEXT_PRECISION`); the measure is RAGAS's rank-weighted precision;
* ``context_recall`` — per sentence of the reference answer: can it be attributed to the
  retrieved passages (:data:`CONTEXT_RECALL`); the measure is the share attributable.

The measures' rubrics are not in :data:`RUBRICS` (they judge a sentence or a passage, not an
answer, so no grader uses them) and their identities join the run's protocol, not
:func:`catalogue_identity`: runs without measures keep their fingerprints.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from goldeneval.core.errors import InputError

__all__ = [
    "CONTEXT_PRECISION",
    "CONTEXT_RECALL",
    "CORRECTNESS",
    "FAITHFULNESS",
    "MEASURES",
    "RELEVANCE",
    "RUBRICS",
    "STATEMENT_SUPPORT",
    "Measure",
    "MeasureUnit",
    "Rubric",
    "catalogue_identity",
    "measure_named",
    "rubric_named",
]


@dataclass(frozen=True)
class Rubric:
    name: str
    version: int
    text: str
    """The judge's instructions (its system message, before the reply format)."""
    uses_context: bool = False
    """The judge is shown the passages the model answered from."""
    uses_reference: bool = False
    """The judge is shown the reference answer (the gist), when the prompt has one."""
    decides_abstention: bool = False
    """Its verdict on a question no document answers says whether the answer abstains in other
    words (it compares the answer with the gist that says so); any other rubric judges something
    else (faithfulness, relevance), so there only an abstention phrase counts as abstaining."""

    @property
    def identity(self) -> str:
        digest = hashlib.sha256(self.text.encode("utf-8")).hexdigest()[:16]
        return f"{self.name}/v{self.version}:sha256:{digest}"


CORRECTNESS = Rubric(
    "correctness",
    1,
    "You grade whether an answer is correct. Compare the answer with the reference answer: score 1 when "
    "it states the same facts, 0 when it contradicts them or misses them, and in between when it is "
    "partly right. Ignore wording and style. An answer that says it cannot answer is correct only when "
    "the reference says the question is not answered.",
    uses_reference=True,
    decides_abstention=True,
)
FAITHFULNESS = Rubric(
    "faithfulness",
    1,
    "You grade whether an answer is faithful to the context passages the model was given. Split the "
    "answer into its claims. Score 1 when every claim is stated in, or follows directly from, the "
    "passages; score 0 when any claim contradicts the passages or is not found in them, even if it is "
    "true in the world. An answer that says the passages do not answer the question is faithful only "
    "when they indeed do not.",
    uses_context=True,
)
RELEVANCE = Rubric(
    "relevance",
    2,  # v1 showed the judge the reference too, which its instructions say not to judge against
    "You grade whether an answer is relevant to the question. Score 1 when it addresses exactly what "
    "was asked, 0 when it answers a different question or none, and in between when it wanders. Do "
    "not judge whether it is true.",
)
RUBRICS: Mapping[str, Rubric] = {r.name: r for r in (CORRECTNESS, FAITHFULNESS, RELEVANCE)}


def rubric_named(name: str) -> Rubric:
    """The built-in rubric ``name``; an unknown name is invalid input listing the known ones."""
    try:
        return RUBRICS[name]
    except KeyError:
        raise InputError(f"unknown judge rubric {name!r} (known: {', '.join(sorted(RUBRICS))})") from None


def catalogue_identity() -> str:
    """Every built-in rubric's identity in one digest: part of the judge's identity, so a
    per-prompt rubric (named in the set, defined here) that changes is seen too."""
    encoded = "\n".join(sorted(r.identity for r in RUBRICS.values())).encode("utf-8")
    return f"rubrics:sha256:{hashlib.sha256(encoded).hexdigest()[:16]}"


STATEMENT_SUPPORT = Rubric(
    "statement_support",
    1,
    "You check one statement of an answer against the context passages the model was given. Score 1 when "
    "the statement is stated in, or follows directly from, the passages; score 0 when the passages do not "
    "state it or contradict it, even if it is true in the world.",
    uses_context=True,
)
CONTEXT_PRECISION = Rubric(
    "context_precision",
    1,
    "You judge one passage that a search returned for a question. Given the question and its reference "
    "answer, score 1 when the passage is useful to arrive at the reference answer (it states something the "
    "reference answer rests on), 0 when it is not.",
    uses_reference=True,
)
CONTEXT_RECALL = Rubric(
    "context_recall",
    1,
    "You judge whether one statement of a reference answer can be attributed to the context passages a "
    "search returned. Score 1 when the passages state it or it follows directly from them, 0 when they do "
    "not.",
    uses_context=True,
)

MeasureUnit = Literal["answer", "answer_statement", "document", "reference_statement"]
"""What one judge call judges: the whole answer, one sentence of the answer, one retrieved
document, or one sentence of the reference answer."""


@dataclass(frozen=True)
class Measure:
    """A judge measure of ``--judge-rubrics``: a rubric asked per ``unit``."""

    name: str
    rubric: Rubric
    unit: MeasureUnit
    needs_context: bool = False
    """Measured from retrieved documents: only answer runs have them."""

    @property
    def identity(self) -> str:
        return f"{self.name}[{self.unit}]={self.rubric.identity}"


MEASURES: Mapping[str, Measure] = {
    m.name: m
    for m in (
        Measure("faithfulness", STATEMENT_SUPPORT, "answer_statement", needs_context=True),
        Measure("relevance", RELEVANCE, "answer"),
        Measure("correctness", CORRECTNESS, "answer"),
        Measure("context_precision", CONTEXT_PRECISION, "document", needs_context=True),
        Measure("context_recall", CONTEXT_RECALL, "reference_statement", needs_context=True),
    )
}


def measure_named(name: str) -> Measure:
    """The judge measure ``name``; an unknown name is invalid input listing the known ones."""
    try:
        return MEASURES[name]
    except KeyError:
        raise InputError(f"unknown judge rubric {name!r} for --judge-rubrics (known: {', '.join(MEASURES)})") from None
