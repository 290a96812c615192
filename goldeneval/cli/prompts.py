"""The ``goldeneval`` commands of golden prompt sets (ADR-060): ``prompts``, ``prompt-sets``,
``prompt-schema``, ``models`` and ``quality``, and the model and grading options that
``prompts`` shares with ``answers`` (:mod:`goldeneval.cli.answers`).

They are registered on the command group of :mod:`goldeneval.cli` and use its helpers: the
same exit codes, the same one-line errors, the same gate.  Nothing is decided here: each
command builds a run specification and calls :mod:`goldeneval.prompts.pipeline`.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from goldeneval.cli.app import run_guarded
from goldeneval.cli.declared import Decorator, declared_options
from goldeneval.cli.options import RunOptions, bundled_options, run_options, validated
from goldeneval.cli.outputs import CiOutputs, ci_output_options
from goldeneval.cli.params import (
    corpus_option,
    format_option,
    parse_options,
    series_option,
    store_option,
)
from goldeneval.core.errors import printable
from goldeneval.core.records import StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.core.settings import flagged_fields, settings_of
from goldeneval.prompts.golden import prompt_set_json_schema
from goldeneval.prompts.models import known_models
from goldeneval.prompts.pipeline import PromptOutcome, default_series
from goldeneval.prompts.pipeline import run as run_prompts
from goldeneval.prompts.quality import EvaluationQualityScoreProvider, QualityAwareModelSelector, quality_json
from goldeneval.prompts.registry import PromptSetRegistry
from goldeneval.prompts.report import prompt_outcome_json, render_prompt_outcome
from goldeneval.prompts.settings import PROMPT_RATES, GradingSettings, JudgeSettings
from goldeneval.prompts.spec import JudgeSpec, PromptRunSpec
from goldeneval.report.runs import SourceRefs
from goldeneval.store import StoreLocation, open_store, store_exists
from goldeneval.suite_storage import load_storage

if TYPE_CHECKING:
    from goldeneval.report.model import RunComparison

__all__ = [
    "GradingFlags",
    "comparison_of",
    "grading_options",
    "models",
    "prompt_schema",
    "prompt_sets",
    "prompts",
    "quality",
]


@dataclass(frozen=True)
class GradingFlags:
    """The model and grading options ``prompts`` and ``answers`` share, as the spec fields they
    set (:class:`goldeneval.prompts.spec.GradingSpec`): one declaration for both commands."""

    model_id: str
    model_options: dict[str, str]
    judge: JudgeSpec | None
    settings: GradingSettings

    def default_series(self) -> str:
        return default_series(self.model_id, self.model_options)

    def spec_fields(self) -> dict[str, Any]:
        return {
            "model_id": self.model_id,
            "model_options": self.model_options,
            "judge": self.judge,
            **settings_of(self.settings, GradingSettings),
        }


def _grading_flags(
    model_id: str,
    model_options: tuple[str, ...],
    judge_model: str | None,
    judge_options: tuple[str, ...],
    **declared: Any,
) -> GradingFlags:
    settings = GradingSettings(**{name: declared.pop(name) for name in flagged_fields(GradingSettings)})
    judge = JudgeSettings(**declared)
    judge_spec: JudgeSpec | None = None
    if judge_model is None:
        for given, flag in (
            (judge_options, "--judge-option"),
            (judge.rubric, "--judge-rubric"),
            (judge.rubrics, "--judge-rubrics"),
        ):
            if given:
                raise click.BadParameter(f"{flag} needs --judge-model", param_hint=flag)
    else:
        judge_spec = JudgeSpec(
            model_id=judge_model,
            options=parse_options(judge_options, "--judge-option"),
            **settings_of(judge, JudgeSettings),
        )
    return GradingFlags(
        model_id=model_id,
        model_options=parse_options(model_options, "--model-option"),
        judge=judge_spec,
        settings=settings,
    )


def grading_options(workers_help: str | None = None) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The options ``prompts`` and ``answers`` share: the model, the judge and the grader (declared
    in :mod:`goldeneval.prompts.settings`), and (through :func:`goldeneval.cli.options.run_options`)
    the gate, the store and the output.  ``workers_help`` words ``--workers`` for the command."""
    options: list[Decorator] = [
        click.option(
            "--model", "model_id", required=True, help="Model id (goldeneval models) or package.module:factory."
        ),
        click.option("--model-option", "model_options", multiple=True, help="Model option KEY=VALUE (repeatable)."),
        *declared_options(GradingSettings, help={"workers": workers_help} if workers_help else None),
        click.option("--judge-model", default=None, help="The judge's model id, for --grader llm_judge."),
        click.option("--judge-option", "judge_options", multiple=True, help="Judge model option KEY=VALUE."),
        *declared_options(JudgeSettings),
    ]
    names = ["model_id", "model_options", "judge_model", "judge_options"]
    names += flagged_fields(GradingSettings) + flagged_fields(JudgeSettings)

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        return run_options(
            PROMPT_RATES,
            cache_help="Index cache of retrieval-augmented models and the response cache of model calls.",
            timeout_help="Per-call timeout in seconds (model, judge, and the grading of each answer); a timed-out "
            "prompt is an error.",
            persisted="no prompt text, no answer text and no document id",
            owner="model",
        )(ci_output_options(bundled_options(options, names, _grading_flags, "grading")(command)))

    return decorate


def _prompt_sets_dir_option(command: Callable[..., None]) -> Callable[..., None]:
    """``--prompt-sets-dir``: folders of prompt set files to register."""
    return click.option(
        "--prompt-sets-dir",
        "sets_dirs",
        multiple=True,
        type=click.Path(file_okay=False, path_type=Path),
        help="Folder of prompt set files to register (repeatable); also $GOLDENEVAL_PROMPT_SETS_PATH.",
    )(command)


@click.command()
@click.option("--set", "set_ref", required=True, help="Golden prompt set id (goldeneval prompt-sets) or set file.")
@series_option("Series name (default: the model id; a served model is openai:<its model option>).")
@corpus_option("Corpus of a retrieval-augmented model (goldeneval.extractive). Default: the set's own.")
@_prompt_sets_dir_option
@grading_options()
def prompts(
    set_ref: str,
    series: str | None,
    corpus_path: Path | None,
    sets_dirs: tuple[Path, ...],
    grading: GradingFlags,
    run: RunOptions,
    outputs: CiOutputs,
) -> None:
    """Run a golden prompt set against a model, grade, print and store the run, report the verdict."""
    resolved_store = run.store

    def evaluate() -> PromptOutcome:
        spec = validated(
            lambda: PromptRunSpec(
                set_ref=set_ref,
                sets_dirs=sets_dirs,
                corpus=corpus_path,
                series=series or grading.default_series(),
                **grading.spec_fields(),
                **run.spec_fields(),
            )
        )
        return run_prompts(spec, resolved_store, progress=run.progress_bar())

    outcome = run.guarded(evaluate)
    run.show(
        outcome.verdict,
        outcome.gate,
        lambda: render_prompt_outcome(outcome, resolved_store),
        lambda: prompt_outcome_json(outcome, resolved_store),
        notices=outcome.run.notices,
        outputs=outputs,
        comparison=lambda: comparison_of(
            outcome.stored, outcome.verdict, resolved_store, run, SourceRefs(set_ref, sets_dirs, corpus_path)
        ),
    )


def comparison_of(
    stored: StoredRun, verdict: RegressionVerdict, location: StoreLocation, run: RunOptions, refs: SourceRefs
) -> RunComparison:
    """The comparison ``--summary-md`` and ``--junit`` show: the answer (or prompt) run against
    the run its verdict names."""
    from goldeneval.report.runs import comparison_for

    return comparison_for(open_store(location), stored, verdict=verdict, privacy=run.privacy, refs=refs, trend=False)


@click.command("prompt-sets")
@_prompt_sets_dir_option
def prompt_sets(sets_dirs: tuple[Path, ...]) -> None:
    """List the registered golden prompt sets and where each comes from."""
    registry = run_guarded(lambda: PromptSetRegistry.discover(sets_dirs))
    for set_id in registry.ids():
        count = len(registry.get(set_id).prompts)
        click.echo(f"{printable(set_id)}\t{count} prompts\t{printable(registry.source(set_id))}")


@click.command("prompt-schema")
def prompt_schema() -> None:
    """Print the JSON Schema of golden prompt set files."""
    click.echo(json.dumps(prompt_set_json_schema(), indent=2))


@click.command()
def models() -> None:
    """List the registered model ids (entry-point group goldeneval.models)."""
    for model_id in known_models():
        click.echo(model_id)


@click.command()
@click.argument("candidates", nargs=-1, required=True, metavar="MODEL...")
@click.option(
    "--grader",
    "grader_id",
    default="deterministic",
    show_default=True,
    help="The one grader whose runs count (its prompt runs and answer runs); graders are never averaged.",
)
@store_option
@format_option
def quality(
    candidates: tuple[str, ...], grader_id: str, store_location: StoreLocation | None, output_format: str
) -> None:
    """Re-rank candidate models (series names) by their stored quality score, best first.

    The score is the mean of each model's latest complete prompt or answer run per set by one
    grader (--grader); models without one keep their order after the scored ones."""
    resolved = load_storage().store(store_location)

    def ranked() -> list[tuple[str, float | None]]:
        if not store_exists(resolved):
            return [(model, None) for model in candidates]
        provider = EvaluationQualityScoreProvider(open_store(resolved), grader=grader_id)
        selector = QualityAwareModelSelector(provider)
        return [(entry.model, entry.score) for entry in selector.ranked(candidates)]

    order = run_guarded(ranked)
    if output_format == "json":
        click.echo(json.dumps(quality_json(order), indent=2))
        return
    for rank, (model, score) in enumerate(order, start=1):
        click.echo(f"{rank}\t{printable(model)}\t{'no score' if score is None else f'{score:.3f}'}")
