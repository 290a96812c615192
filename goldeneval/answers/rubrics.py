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
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from goldeneval.core.errors import InputError

__all__ = ["CORRECTNESS", "FAITHFULNESS", "RELEVANCE", "RUBRICS", "Rubric", "catalogue_identity", "rubric_named"]


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
