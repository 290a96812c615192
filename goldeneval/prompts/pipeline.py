"""Prompt runs through the one evaluation pipeline: evaluate here, record and judge as every run.

* :func:`evaluate` — load the prompt set, build the model (and the judge, only when
  ``llm_judge`` is chosen), ask and grade every prompt; stores nothing;
* :func:`goldeneval.history.door.record` and :func:`goldeneval.history.door.judge` — the same verbs,
  store, comparison states, thresholds and gate as retrieval runs;
* :func:`run` — the CLI's door: everything that can be refused (the set, the model, the
  judge, a pinned baseline) is checked before anything is written.

The model and the judge a spec builds are called through :class:`~goldeneval.prompts.calls.ManagedModel`
(response cache, circuit breaker, usage); every grader but the judge grades within the spec's
timeout (:mod:`goldeneval.prompts.bounded`).  Both doors — prompt runs here and answer runs in
:mod:`goldeneval.answers.answers` — build them through these functions, so both get the same policy.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypedDict

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import InputError, one_line
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import Provenance, retriever_provenance
from goldeneval.core.secret_scan import remembered_scans
from goldeneval.core.set_files import remembered_parses
from goldeneval.core.sets import corpus_for, expect_set_id
from goldeneval.core.workers import usable_workers
from goldeneval.history import door
from goldeneval.prompts.bounded import TimeBoundGrader
from goldeneval.prompts.calls import ManagedModel, call_notices
from goldeneval.prompts.details import PromptDetail
from goldeneval.prompts.evaluation import (
    PROMPT_PROTOCOL_REVISION,
    EvaluationService,
    Progress,
    PromptRun,
    Task,
    prompt_benchmark_fingerprint,
    prompt_tasks,
)
from goldeneval.prompts.golden import GoldenPromptSet, prompt_set_digest
from goldeneval.prompts.graders import Grader, GraderChoice, GradingService, Judge, is_judge
from goldeneval.prompts.measures import MeasureJudge
from goldeneval.prompts.models import Model, ModelContext, build_model
from goldeneval.prompts.openai_chat import MODEL_ID as OPENAI_MODEL_ID
from goldeneval.prompts.openai_chat import MUTABLE_ALIAS, series_name
from goldeneval.prompts.registry import resolve_prompt_set
from goldeneval.prompts.rubrics import measure_named
from goldeneval.prompts.spec import GradingSpec, PromptRunSpec
from goldeneval.prompts.workers import evaluate_tasks
from goldeneval.store import StoreLocation

__all__ = [
    "GradedFields",
    "PromptOutcome",
    "ask_and_grade",
    "build_spec_model",
    "declared_series",
    "default_series",
    "evaluate",
    "graded_identity",
    "graded_run_fields",
    "grading_choice",
    "load_prompt_set",
    "managed",
    "model_provenance",
    "protocol_for",
    "run",
    "run_call_notices",
    "run_usage",
    "served_names",
    "served_provenance",
]


MANAGED_TIMEOUT_GRACE_S = 1.0
"""How much longer than a managed model's own timeout the evaluator waits for a call."""

PromptOutcome = door.Outcome[PromptRun]
"""A stored prompt (or answer) run and its verdict."""


def load_prompt_set(spec: PromptRunSpec) -> GoldenPromptSet:
    """The set as it is now (files are read again, so a label change is seen; a YAML file's
    text read before is parsed from the cache, as :func:`remembered_parses` allows)."""
    with remembered_parses(spec.cache_dir, spec.privacy) as keep:
        prompt_set = resolve_prompt_set(spec.set_ref, spec.sets_dirs)
        keep(prompt_set.id)  # only the evaluated set's file, not every set the registry read
    return expect_set_id(prompt_set, spec.set_ref, spec.expected_set_id)


def default_series(model_id: str, options: Mapping[str, str]) -> str:
    """The series a model's runs are stored under when no name is given (``--name``).

    A served model is its served name (``openai:gpt-4o-mini``, see
    :func:`goldeneval.prompts.openai_chat.series_name`), so two served models behind one
    factory id never share a series or a quality score; any other model is its id."""
    served = options.get("model")
    if model_id == OPENAI_MODEL_ID and served:
        return series_name(served)
    return model_id


SERVED_SEPARATOR = "; served="


def served_names(model: Model) -> tuple[str, ...]:
    """The model names a server returned in this run (``served_models()``, as
    :class:`~goldeneval.prompts.openai_chat.OpenAIChatModel` records them); empty when none."""
    served = getattr(model, "served_models", None)
    names = served() if callable(served) else ()
    if isinstance(names, tuple) and all(isinstance(n, str) and n for n in names):
        return names
    return ()


def served_provenance(provenance: Provenance, model: Model) -> Provenance:
    """The provenance with the served names joined to a mutable alias (issue 42):
    ``gpt-4o-mini (mutable alias); served=gpt-4o-mini-2024-07-18``.  The variant fingerprint
    covers the model revision, so a snapshot change behind an alias is a treatment change that
    the comparison shows.  A declared revision is the operator's word and is kept (its answers
    may come from the response cache, which sees no server); so is an unknown one, and a value
    the provenance rules refuse."""
    names = served_names(model)
    revision = provenance.model_revision
    if not names or revision is None or not revision.endswith(MUTABLE_ALIAS):
        return provenance
    joined = (revision + SERVED_SEPARATOR + ",".join(names))[:200]
    try:
        return provenance.merged_with(Provenance(model_revision=joined))
    except ValueError:
        return provenance


def declared_series(series: str, model_id: str, options: Mapping[str, str], model: Model) -> str:
    """The run's series when the model declares what it serves (``served_model``) and the series
    is the default one: ``<model id>:<served model>`` (so two served models behind one plug-in
    id are two series), or the answers default ``<retriever>+<model id>:<served model>``."""
    declared = getattr(model, "served_model", None)
    default = default_series(model_id, options)
    if not isinstance(declared, str) or not declared.strip() or default != model_id:
        return series
    named = f"{model_id}:{one_line(declared, 80)}"
    if series == default:
        return named
    if series.endswith("+" + default):
        return series[: -len(default)] + named
    return series


def model_provenance(model: Model, model_id: str) -> Provenance:
    """What the model declares (the same capability as a retriever's), or all unknown."""
    return retriever_provenance(model, f"model {model_id!r}")


def _cache_off_reason(spec: GradingSpec) -> str | None:
    if not spec.response_cache:
        return "--no-cache"
    if spec.privacy is PrivacyMode.METADATA_ONLY:
        return "metadata_only privacy persists no answer"
    return None


def managed(
    spec: GradingSpec, model: Model, provenance: Provenance, model_id: str, *, cache: bool = True
) -> ManagedModel:
    """``model`` called under the spec's policy: response cache, circuit breaker, usage."""
    reason = _cache_off_reason(spec) if cache else "judge samples are asked anew"
    return ManagedModel(
        model,
        provenance,
        model_id=model_id,
        cache_dir=spec.cache_dir if reason is None else None,
        max_consecutive_failures=spec.max_consecutive_failures,
        cache_off_reason=reason,
        timeout_s=spec.timeout_s,
    )


def build_spec_model(
    spec: GradingSpec, corpus: Corpus | None, *, context_supplied: bool = False
) -> tuple[Model, Provenance]:
    """The spec's model, called through :class:`~goldeneval.prompts.calls.ManagedModel`, and
    its provenance (the spec's declaration overrides it, field by field)."""
    model = build_model(
        ModelContext(
            model_id=spec.model_id,
            options=spec.model_options,
            corpus=corpus,
            cache_dir=spec.cache_dir,
            context_supplied=context_supplied,
        )
    )
    with remembered_scans(spec.cache_dir):  # the model's provenance is the same run after run
        provenance = model_provenance(model, spec.model_id).merged_with(spec.provenance)
    return managed(spec, model, provenance, spec.model_id), provenance


def grading_choice(spec: GradingSpec) -> GraderChoice:
    """The grader the spec asks for.  The judge model is built only for ``llm_judge``, so no
    model is ever called for grading unless one is configured.  Every other grader grades each
    answer within the spec's ``timeout_s`` (:mod:`goldeneval.prompts.bounded`): ``--timeout``
    covers grading as it covers the model call."""
    judge: Judge | None = None
    if spec.judge is not None and (is_judge(spec.grader) or spec.judge.rubrics):
        judge_model = build_model(
            ModelContext(model_id=spec.judge.model_id, options=spec.judge.options, cache_dir=spec.cache_dir)
        )
        with remembered_scans(spec.cache_dir):
            judge_provenance = model_provenance(judge_model, spec.judge.model_id)
        # several samples of one prompt must each be asked: a cached verdict would hide instability
        managed_judge = managed(spec, judge_model, judge_provenance, spec.judge.model_id, cache=spec.judge.samples == 1)
        judge = Judge(managed_judge, judge_provenance, samples=spec.judge.samples, rubric=spec.judge.rubric)
    service = GradingService(
        judge=judge,
        pass_threshold=spec.pass_threshold,
        timeout_s=spec.timeout_s,
        fail_on_unstable=spec.fail_on_unstable,
        abstention=spec.abstention_rules(),
    )
    choice = service.select(spec.grader)
    if judge is not None and spec.judge is not None and spec.judge.rubrics:
        measures = tuple(measure_named(name) for name in spec.judge.rubrics)
        choice = replace(choice, measures=MeasureJudge(judge.model, judge.provenance, measures, spec.timeout_s))
    if is_judge(choice.grader.id):
        return choice  # each judge call is bounded by timeout_s already
    return replace(choice, grader=TimeBoundGrader(choice.grader, spec.timeout_s))


def graded_identity(choice: GraderChoice) -> str:
    """What grades the run, for its protocol: the grader's identity, then the judge measures'
    (:mod:`goldeneval.prompts.measures`) when it asks any, so that a run's fingerprint covers
    every rubric it asked (a run without measures keeps the fingerprint it had)."""
    if choice.measures is None:
        return choice.grader.identity
    return f"{choice.grader.identity}+{choice.measures.identity}"


def protocol_for(choice: GraderChoice) -> str:
    return f"{PROMPT_PROTOCOL_REVISION}[{graded_identity(choice)}]"


def evaluate(
    spec: PromptRunSpec,
    *,
    prompt_set: GoldenPromptSet | None = None,
    choice: GraderChoice | None = None,
    progress: Progress | None = None,
) -> PromptRun:
    """Build the model and the grader, ask and grade every prompt.  Stores nothing."""
    prompt_set = prompt_set or load_prompt_set(spec)
    digest = prompt_set_digest(prompt_set)  # first: a code check that cannot be imported stops the run here
    choice = choice or grading_choice(spec)
    if choice.measures is not None:
        context = [m.name for m in choice.measures.measures if m.needs_context]
        if context:
            raise InputError(
                f"--judge-rubrics {','.join(context)}: a prompt run has no retrieved documents to judge; "
                "measure them on goldeneval answers"
            )
    model, provenance = build_spec_model(spec, corpus_for(spec.corpus, prompt_set.corpus))
    graded = graded_run_fields(spec, model, choice, prompt_tasks(prompt_set), progress)
    protocol = protocol_for(choice)
    return PromptRun(
        kind="prompts",
        set_id=prompt_set.id,
        grader=choice.grader.id,
        label_digest=digest,
        protocol=protocol,
        benchmark_fingerprint=prompt_benchmark_fingerprint(digest, protocol),
        provenance=served_provenance(provenance, model),
        **graded,
    )


class GradedFields(TypedDict):
    """The fields of a :class:`~goldeneval.prompts.evaluation.PromptRun` that asking and
    grading decide, alike for both doors (prompt runs and answer runs)."""

    series: str
    model_id: str
    grader_identity: str
    pass_threshold: float
    results: tuple[PromptDetail, ...]
    started_at: datetime
    requested_grader: str | None
    judge_samples: int | None
    notices: tuple[str, ...]
    usage: dict[str, dict[str, Any]] | None


def graded_run_fields(
    spec: GradingSpec,
    model: Model,
    choice: GraderChoice,
    tasks: Sequence[Task],
    progress: Progress | None,
    *,
    notices: Sequence[str] = (),
) -> GradedFields:
    """Ask and grade every task (:func:`ask_and_grade`), starting the run's clock, and what the
    door's run records of it.  ``notices`` are the door's own: shown after the grader's and
    the workers' notices and before those about the model calls."""
    grader = choice.grader
    started_at = datetime.now(UTC)
    results, workers_notice = ask_and_grade(spec, model, grader, tasks, progress, choice.measures)
    return GradedFields(
        series=declared_series(spec.series, spec.model_id, spec.model_options, model),
        model_id=spec.model_id,
        grader_identity=grader.identity,
        pass_threshold=grader.pass_threshold,
        results=tuple(results),
        started_at=started_at,
        requested_grader=choice.requested if choice.notice else None,
        judge_samples=spec.judge.samples if is_judge(grader.id) and spec.judge is not None else None,
        notices=(
            *(n for n in (choice.notice, workers_notice) if n),
            *notices,
            *run_call_notices(model, grader, choice.measures),
        ),
        usage=run_usage(model, grader, choice.measures),
    )


def ask_and_grade(
    spec: GradingSpec,
    model: Model,
    grader: Grader,
    tasks: Sequence[Task],
    progress: Progress | None,
    measures: MeasureJudge | None = None,
) -> tuple[list[PromptDetail], str | None]:
    """Ask and grade every task, ``spec.workers`` at once (one at a time when the model, the
    judge or the grader is not thread-safe: then with the notice saying so).  Both doors
    (prompt runs and answer runs) call this."""
    workers, notice = usable_workers(
        spec.workers, "prompts", model=model, judge=_judge_model(grader, measures), grader=grader
    )
    timeout_s = spec.timeout_s
    if isinstance(model, ManagedModel) and model.timeout_s is not None:
        # The managed model times its calls out itself (and its breaker counts them before the
        # next prompt is asked); the evaluator's bound is the safety net behind it.
        timeout_s = model.timeout_s + MANAGED_TIMEOUT_GRACE_S
    service = EvaluationService(model, grader, timeout_s, measures)
    return evaluate_tasks(service, tasks, progress, workers), notice


def _judge_model(grader: Grader, measures: MeasureJudge | None) -> Model | None:
    """The run's judge model: the judge grader's, else the judge measures' (one model for both)."""
    judge: Model | None = getattr(grader, "model", None)
    return judge if judge is not None else (measures.model if measures is not None else None)


def run_usage(model: Model, grader: Grader, measures: MeasureJudge | None = None) -> dict[str, dict[str, Any]] | None:
    """The run's managed calls by role, for the details: what :func:`run_call_notices` shows."""
    usage = {
        role: part.totals().to_json()
        for role, part in (("model", model), ("judge", _judge_model(grader, measures)))
        if isinstance(part, ManagedModel)
    }
    return usage or None


def run_call_notices(model: Model, grader: Grader, measures: MeasureJudge | None = None) -> tuple[str, ...]:
    """What the run output says about the run's model calls and its judge's: usage, cost, the
    response cache, an open circuit breaker (shown by each door, never stored)."""
    return call_notices(model) + call_notices(_judge_model(grader, measures), "judge")


def run(
    spec: PromptRunSpec, store_location: StoreLocation | Path, *, progress: Progress | None = None
) -> PromptOutcome:
    """Evaluate, record and judge one prompt run spec: the CLI's door."""
    location = StoreLocation.parse(store_location)
    prompt_set = load_prompt_set(spec)
    choice = grading_choice(spec)
    pinned = door.pinned_baseline(location, spec, prompt_set.id, choice.grader.id)
    evaluated = evaluate(spec, prompt_set=prompt_set, choice=choice, progress=progress)
    return door.record_and_judge(location, evaluated, spec, pinned=pinned)
