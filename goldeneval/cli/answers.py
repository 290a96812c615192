"""The ``goldeneval`` commands of answer evaluation (ADR-060): ``prompts``, ``answers``,
``prompt-sets``, ``prompt-schema``, ``models`` and ``quality``.

They are registered on the command group of :mod:`goldeneval.cli` and use its helpers: the
same exit codes, the same one-line errors, the same gate.  Nothing is decided here: each
command builds a run specification and calls :mod:`goldeneval.answers.pipeline` or
:mod:`goldeneval.rag.answers`.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import click

from goldeneval.answers.breaker import DEFAULT_MAX_CONSECUTIVE_FAILURES
from goldeneval.answers.golden import prompt_set_json_schema
from goldeneval.answers.graders import DEFAULT_PASS_THRESHOLD, DETERMINISTIC, MAX_JUDGE_SAMPLES
from goldeneval.answers.models import known_models
from goldeneval.answers.pipeline import PromptOutcome, default_series
from goldeneval.answers.pipeline import run as run_prompts
from goldeneval.answers.quality import EvaluationQualityScoreProvider, QualityAwareModelSelector, quality_json
from goldeneval.answers.registry import PromptSetRegistry
from goldeneval.answers.report import prompt_outcome_json, render_prompt_outcome
from goldeneval.answers.rubrics import RUBRICS
from goldeneval.answers.spec import JudgeSpec, PromptRunSpec
from goldeneval.cli.app import run_guarded
from goldeneval.cli.options import RateFlags, RunOptions, bundled_options, run_options, validated, workers_option
from goldeneval.cli.params import (
    CORPUS_HELP,
    RETRIEVER_OPTION_HELP,
    corpus_option,
    finite,
    format_option,
    key_value_option,
    parse_options,
    series_option,
    sets_dir_option,
    store_option,
)
from goldeneval.core.comparison import Baseline
from goldeneval.core.errors import printable
from goldeneval.rag.answers import DEFAULT_CONTEXT_DEPTH, AnswerRunSpec, AnswersOutcome, run_answers
from goldeneval.rag.report import answers_json, render_answers
from goldeneval.retrieval.spec import RunSpec
from goldeneval.store import StoreLocation, open_store, store_exists
from goldeneval.suite_storage import load_storage

__all__ = ["answers", "models", "prompt_schema", "prompt_sets", "prompts", "quality"]


@dataclass(frozen=True)
class GradingFlags:
    """The model and grading options ``prompts`` and ``answers`` share, as the spec fields they
    set (:class:`goldeneval.answers.spec.GradingSpec`): one declaration for both commands."""

    model_id: str
    model_options: dict[str, str]
    grader: str
    judge: JudgeSpec | None
    pass_threshold: float
    response_cache: bool
    max_consecutive_failures: int
    fail_on_unstable: bool
    abstention_phrases: tuple[str, ...]

    def default_series(self) -> str:
        return default_series(self.model_id, self.model_options)

    def spec_fields(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


def _grading_flags(
    *,
    model_id: str,
    model_options: tuple[str, ...],
    grader: str,
    judge_model: str | None,
    judge_options: tuple[str, ...],
    judge_samples: int,
    judge_rubric: str | None,
    pass_threshold: float,
    no_response_cache: bool,
    max_consecutive_failures: int,
    fail_on_unstable: bool,
    abstention_phrases: tuple[str, ...],
) -> GradingFlags:
    judge: JudgeSpec | None = None
    if judge_model is None:
        for given, flag in ((judge_options, "--judge-option"), (judge_rubric, "--judge-rubric")):
            if given:
                raise click.BadParameter(f"{flag} needs --judge-model", param_hint=flag)
    else:
        judge = JudgeSpec(
            model_id=judge_model,
            options=parse_options(judge_options, "--judge-option"),
            samples=judge_samples,
            rubric=judge_rubric,
        )
    return GradingFlags(
        model_id=model_id,
        model_options=parse_options(model_options, "--model-option"),
        grader=grader,
        judge=judge,
        pass_threshold=pass_threshold,
        response_cache=not no_response_cache,
        max_consecutive_failures=max_consecutive_failures,
        fail_on_unstable=fail_on_unstable,
        abstention_phrases=tuple(abstention_phrases),
    )


_GRADING_PARAMETERS = tuple(inspect.signature(_grading_flags).parameters)


PROMPT_RATES = RateFlags(
    pass_flag="--max-pass-drop",
    pass_words="pass rate",
    score_flag="--max-score-drop",
    score_words="mean score",
    significance="a pass-rate drop",
)


def _grading_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options ``prompts`` and ``answers`` share: the model and the grader, and (through
    :func:`goldeneval.cli.options.run_options`) the gate, the store and the output."""
    options = [
        click.option(
            "--model", "model_id", required=True, help="Model id (goldeneval models) or package.module:factory."
        ),
        click.option("--model-option", "model_options", multiple=True, help="Model option KEY=VALUE (repeatable)."),
        click.option(
            "--grader",
            default=DETERMINISTIC,
            show_default=True,
            help="deterministic (assertions or SQuAD token F1, no model call), semantic (MiniLM similarity, the "
            "dense extra), llm_judge or llm_judge:<rubric> (needs --judge-model), a registered goldeneval.graders "
            "id or package.module:factory. An unknown plain id falls back to deterministic, with a notice.",
        ),
        click.option("--judge-model", default=None, help="The judge's model id, for --grader llm_judge."),
        click.option("--judge-option", "judge_options", multiple=True, help="Judge model option KEY=VALUE."),
        click.option(
            "--judge-samples",
            type=click.IntRange(1, MAX_JUDGE_SAMPLES),
            default=1,
            show_default=True,
            help="Ask the judge N times; the spread is stored and a prompt whose samples straddle the "
            "pass threshold is reported as unstable.",
        ),
        click.option(
            "--pass-threshold",
            type=click.FloatRange(0, 1),
            callback=finite,
            default=DEFAULT_PASS_THRESHOLD,
            show_default=True,
            help="Score at which a judged (or reference-graded) answer passes.",
        ),
        click.option(
            "--no-cache",
            "no_response_cache",
            is_flag=True,
            default=False,
            help="Call the model (and the judge) for every prompt; by default a deterministic request "
            "(temperature 0) to a declared model revision is answered from the response cache under the "
            "cache folder when it holds the answer.",
        ),
        click.option(
            "--max-consecutive-failures",
            type=click.IntRange(0, 10_000),
            default=DEFAULT_MAX_CONSECUTIVE_FAILURES,
            show_default=True,
            help="Stop calling an endpoint (model or judge) after N consecutive failed calls; the prompts "
            "left are errors saying why. 0: never stop.",
        ),
        click.option(
            "--judge-rubric",
            type=click.Choice(sorted(RUBRICS)),
            default=None,
            help="Judge with a versioned rubric instead of the default prompt: correctness (against the "
            "reference or gist), faithfulness (every claim supported by the passages the model saw; answers), "
            "relevance. The grader becomes llm_judge:<rubric>.",
        ),
        click.option(
            "--fail-on-unstable",
            is_flag=True,
            default=False,
            help="An unstable judge verdict (samples straddling --pass-threshold) is a grading error: the run "
            "is incomplete and the gate fails. Default: its own status, not a pass.",
        ),
        click.option(
            "--abstention-phrase",
            "abstention_phrases",
            multiple=True,
            help="A phrase marking an answer as an abstention (repeatable; replaces the default list, see "
            "docs/guide/answers.md); whole words after normalisation, in answers of at most 50 words.",
        ),
    ]

    wrapped = bundled_options(options, _GRADING_PARAMETERS, _grading_flags, "grading")(command)
    return run_options(
        PROMPT_RATES,
        cache_help="Index cache of retrieval-augmented models and the response cache of model calls.",
        timeout_help="Per-call timeout in seconds (model, judge, and the grading of each answer); a timed-out "
        "prompt is an error.",
        persisted="no prompt text, no answer text and no document id",
        owner="model",
    )(wrapped)


@click.command()
@click.option("--set", "set_ref", required=True, help="Golden prompt set id (goldeneval prompt-sets) or set file.")
@series_option("Series name (default: the model id; a served model is openai:<its model option>).")
@corpus_option("Corpus of a retrieval-augmented model (goldeneval.extractive). Default: the set's own.")
@click.option(
    "--prompt-sets-dir",
    "sets_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of prompt set files to register (repeatable); also $GOLDENEVAL_PROMPT_SETS_PATH.",
)
@workers_option("Prompts asked and graded at once (for a served model that answers requests in parallel).")
@_grading_options
def prompts(
    set_ref: str,
    series: str | None,
    corpus_path: Path | None,
    sets_dirs: tuple[Path, ...],
    workers: int,
    grading: GradingFlags,
    run: RunOptions,
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
                workers=workers,
                **grading.spec_fields(),
                **run.spec_fields(),
            )
        )
        return run_prompts(spec, resolved_store, progress=run.progress_bar())

    outcome = run.guarded(evaluate)
    for notice in outcome.run.notices:
        click.echo(f"goldeneval: notice: {printable(notice)}", err=True)
    run.show(
        outcome.verdict,
        outcome.gate,
        lambda: render_prompt_outcome(outcome, resolved_store),
        lambda: prompt_outcome_json(outcome, resolved_store),
    )


@click.command()
@click.option("--set", "set_ref", required=True, help="Golden question set id (registered), set file, or BEIR folder.")
@click.option("--retriever", "retriever_id", required=True, help="Retriever id or package.module:factory.")
@key_value_option("--option", "options", RETRIEVER_OPTION_HELP)
@series_option(
    "Series name of the retrieval run stored beside the answers (default: the retriever id).",
    "--retriever-name",
    "retriever_name",
)
@series_option(
    "Series name of the answer run (default: <retriever id>+<model id>; a served model is openai:<its model option>)."
)
@corpus_option(CORPUS_HELP)
@click.option(
    "--context-depth",
    type=click.IntRange(1, 30),
    default=DEFAULT_CONTEXT_DEPTH,
    show_default=True,
    help="How many of the retrieved distinct documents the model answers from.",
)
@sets_dir_option
@workers_option("Questions retrieved, and prompts asked and graded, at once (for served systems).")
@_grading_options
def answers(
    set_ref: str,
    retriever_id: str,
    options: tuple[str, ...],
    retriever_name: str | None,
    series: str | None,
    corpus_path: Path | None,
    context_depth: int,
    sets_dirs: tuple[Path, ...],
    workers: int,
    grading: GradingFlags,
    run: RunOptions,
) -> None:
    """Retrieve, answer from the top documents and grade against each question's answer_gist;
    store the retrieval run and the answer run beside it, split answer quality by retrieval hit."""
    parsed_options = parse_options(options)
    resolved_store = run.store

    def evaluate() -> AnswersOutcome:
        mode = run.privacy
        baseline = run.baseline
        retrieval = validated(
            lambda: RunSpec(
                set_ref=set_ref,
                sets_dirs=sets_dirs,
                retriever_id=retriever_id,
                options=parsed_options,
                corpus=corpus_path,
                series=retriever_name or retriever_id,
                cache_dir=run.cache,
                timeout_s=run.timeout_s,
                workers=workers,
                privacy=mode,
                baseline=baseline if baseline.kind != "run" else Baseline(),
            )
        )
        spec = validated(
            lambda: AnswerRunSpec(
                retrieval=retrieval,
                context_depth=context_depth,
                series=series or f"{retriever_id}+{grading.default_series()}",
                workers=workers,
                **grading.spec_fields(),
                **run.spec_fields(),
            )
        )
        return run_answers(spec, resolved_store, progress=run.progress_bar())

    outcome = run.guarded(evaluate)
    for warning in outcome.retrieval.run.warnings:
        click.echo(f"goldeneval: warning: {printable(warning)}", err=True)
    for notice in outcome.answers.run.notices:
        click.echo(f"goldeneval: notice: {printable(notice)}", err=True)
    run.show(
        outcome.answers.verdict,
        outcome.gate,
        lambda: render_answers(outcome, resolved_store),
        lambda: answers_json(outcome, resolved_store),
    )


@click.command("prompt-sets")
@click.option(
    "--prompt-sets-dir",
    "sets_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of prompt set files to register (repeatable); also $GOLDENEVAL_PROMPT_SETS_PATH.",
)
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
@store_option
@format_option
def quality(candidates: tuple[str, ...], store_path: StoreLocation | None, output_format: str) -> None:
    """Re-rank candidate models (series names) by their stored quality score, best first.

    The score is the mean of each model's latest complete prompt or answer run per set;
    models without one keep their order after the scored ones."""
    resolved = load_storage().store(store_path)

    def ranked() -> list[tuple[str, float | None]]:
        if not store_exists(resolved):
            return [(model, None) for model in candidates]
        selector = QualityAwareModelSelector(EvaluationQualityScoreProvider(open_store(resolved)))
        return [(entry.model, entry.score) for entry in selector.ranked(candidates)]

    order = run_guarded(ranked)
    if output_format == "json":
        click.echo(json.dumps(quality_json(order), indent=2))
        return
    for rank, (model, score) in enumerate(order, start=1):
        click.echo(f"{rank}\t{printable(model)}\t{'no score' if score is None else f'{score:.3f}'}")
