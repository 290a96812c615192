"""Prompt runs through the one evaluation pipeline: evaluate here, record and judge as every run.

* :func:`evaluate` — load the prompt set, build the model (and the judge, only when
  ``llm_judge`` is chosen), ask and grade every prompt; stores nothing;
* :func:`goldeneval.core.door.record` and :func:`goldeneval.core.door.judge` — the same verbs,
  store, comparison states, thresholds and gate as retrieval runs;
* :func:`run` — the CLI's door: everything that can be refused (the set, the model, the
  judge, a pinned baseline) is checked before anything is written.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from goldeneval.answers.evaluation import (
    PROMPT_PROTOCOL_REVISION,
    EvaluationService,
    Progress,
    PromptRun,
    prompt_benchmark_fingerprint,
    prompt_tasks,
)
from goldeneval.answers.golden import GoldenPromptSet, prompt_set_digest
from goldeneval.answers.graders import LLM_JUDGE, Grader, GraderChoice, GradingService
from goldeneval.answers.models import Model, ModelContext, build_model
from goldeneval.answers.registry import resolve_prompt_set
from goldeneval.answers.spec import GradingSpec, PromptRunSpec
from goldeneval.core import door
from goldeneval.core.corpus import Corpus
from goldeneval.core.provenance import Provenance, retriever_provenance
from goldeneval.core.sets import corpus_for, expect_set_id
from goldeneval.store import StoreLocation

__all__ = [
    "PromptOutcome",
    "build_spec_model",
    "evaluate",
    "grading_choice",
    "load_prompt_set",
    "model_provenance",
    "protocol_for",
    "run",
]


PromptOutcome = door.Outcome[PromptRun]
"""A stored prompt (or answer) run and its verdict."""


def load_prompt_set(spec: PromptRunSpec) -> GoldenPromptSet:
    """The set as it is now (files are read again, so a label change is seen)."""
    return expect_set_id(resolve_prompt_set(spec.set_ref, spec.sets_dirs), spec.set_ref, spec.expected_set_id)


def model_provenance(model: Model, model_id: str) -> Provenance:
    """What the model declares (the same capability as a retriever's), or all unknown."""
    return retriever_provenance(model, f"model {model_id!r}")


def build_spec_model(
    spec: GradingSpec, corpus: Corpus | None, *, context_supplied: bool = False
) -> tuple[Model, Provenance]:
    """The spec's model and its provenance (the spec's declaration overrides it, field by field)."""
    model = build_model(
        ModelContext(
            model_id=spec.model_id,
            options=spec.model_options,
            corpus=corpus,
            cache_dir=spec.cache_dir,
            context_supplied=context_supplied,
        )
    )
    return model, model_provenance(model, spec.model_id).merged_with(spec.provenance)


def grading_choice(spec: GradingSpec) -> GraderChoice:
    """The grader the spec asks for.  The judge model is built only for ``llm_judge``, so no
    model is ever called for grading unless one is configured."""
    judge_model: Model | None = None
    judge_provenance: Provenance | None = None
    if spec.grader == LLM_JUDGE and spec.judge is not None:
        judge_model = build_model(
            ModelContext(model_id=spec.judge.model_id, options=spec.judge.options, cache_dir=spec.cache_dir)
        )
        judge_provenance = model_provenance(judge_model, spec.judge.model_id)
    service = GradingService(
        judge_model=judge_model,
        judge_provenance=judge_provenance,
        judge_samples=spec.judge.samples if spec.judge is not None else 1,
        pass_threshold=spec.pass_threshold,
        timeout_s=spec.timeout_s,
    )
    return service.select(spec.grader)


def protocol_for(grader: Grader) -> str:
    return f"{PROMPT_PROTOCOL_REVISION}[{grader.identity}]"


def evaluate(
    spec: PromptRunSpec,
    *,
    prompt_set: GoldenPromptSet | None = None,
    choice: GraderChoice | None = None,
    progress: Progress | None = None,
) -> PromptRun:
    """Build the model and the grader, ask and grade every prompt.  Stores nothing."""
    prompt_set = prompt_set or load_prompt_set(spec)
    choice = choice or grading_choice(spec)
    model, provenance = build_spec_model(spec, corpus_for(spec.corpus, prompt_set.corpus))
    grader = choice.grader
    started_at = datetime.now(UTC)
    results = EvaluationService(model, grader, spec.timeout_s).run(prompt_tasks(prompt_set), progress)
    digest = prompt_set_digest(prompt_set)
    protocol = protocol_for(grader)
    return PromptRun(
        kind="prompts",
        set_id=prompt_set.id,
        series=spec.series,
        model_id=spec.model_id,
        grader=grader.id,
        grader_identity=grader.identity,
        pass_threshold=grader.pass_threshold,
        results=tuple(results),
        started_at=started_at,
        label_digest=digest,
        protocol=protocol,
        benchmark_fingerprint=prompt_benchmark_fingerprint(digest, protocol),
        provenance=provenance,
        requested_grader=choice.requested if choice.notice else None,
        judge_samples=spec.judge.samples if grader.id == LLM_JUDGE and spec.judge is not None else None,
        notices=(choice.notice,) if choice.notice else (),
    )


def run(spec: PromptRunSpec, store_path: StoreLocation | Path, *, progress: Progress | None = None) -> PromptOutcome:
    """Evaluate, record and judge one prompt run spec: the CLI's door."""
    location = StoreLocation.parse(store_path)
    prompt_set = load_prompt_set(spec)
    choice = grading_choice(spec)
    pinned = door.pinned_baseline(location, spec, prompt_set.id, choice.grader.id)
    evaluated = evaluate(spec, prompt_set=prompt_set, choice=choice, progress=progress)
    return door.record_and_judge(location, evaluated, spec, pinned=pinned)
