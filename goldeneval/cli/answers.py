"""The ``goldeneval`` commands of answer evaluation (ADR-060): ``prompts``, ``answers``,
``prompt-sets``, ``prompt-schema``, ``models`` and ``quality``.

They are registered on the command group of :mod:`goldeneval.cli` and use its helpers: the
same exit codes, the same one-line errors, the same gate.  Nothing is decided here: each
command builds a run specification and calls :mod:`goldeneval.answers.pipeline` or
:mod:`goldeneval.rag.answers`.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import click
from pydantic import ValidationError

from goldeneval.answers.evaluation import DEFAULT_TIMEOUT_S
from goldeneval.answers.golden import prompt_set_json_schema
from goldeneval.answers.graders import DEFAULT_PASS_THRESHOLD, DETERMINISTIC, MAX_JUDGE_SAMPLES
from goldeneval.answers.models import known_models
from goldeneval.answers.pipeline import PromptOutcome
from goldeneval.answers.pipeline import run as run_prompts
from goldeneval.answers.quality import EvaluationQualityScoreProvider, QualityAwareModelSelector
from goldeneval.answers.registry import PromptSetRegistry
from goldeneval.answers.report import prompt_outcome_json, render_prompt_outcome
from goldeneval.answers.spec import JudgeSpec, PromptRunSpec
from goldeneval.cli.app import (
    GATE_EXIT_CODES,
    finite,
    format_option,
    main,
    parse_options,
    progress_bar,
    run_guarded,
    series_name,
    sets_dir_option,
    storage_default_help,
    store_option,
)
from goldeneval.core.comparison import Baseline
from goldeneval.core.errors import InputError, printable
from goldeneval.core.privacy import PrivacyMode, resolve_privacy
from goldeneval.core.provenance import parse_provenance
from goldeneval.core.regression import DEFAULT_MAX_DROP, RegressionThresholds, VerdictStatus
from goldeneval.core.storage import CACHE
from goldeneval.rag.answers import DEFAULT_CONTEXT_DEPTH, AnswerRunSpec, AnswersOutcome, run_answers
from goldeneval.rag.report import answers_json, render_answers
from goldeneval.retrieval.spec import MAX_TIMEOUT_S, RunSpec
from goldeneval.store import StoreLocation, open_store, store_exists
from goldeneval.suite import load_storage

__all__ = ["answers", "models", "prompt_schema", "prompt_sets", "prompts", "quality"]

S = TypeVar("S")


def _validated(build: Callable[[], S]) -> S:
    """A run specification, its validation errors as invalid input naming the field."""
    try:
        return build()
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"])
        raise InputError(f"{field}: {error['msg'].removeprefix('Value error, ')}") from None


def _judge(judge_model: str | None, judge_options: tuple[str, ...], judge_samples: int) -> JudgeSpec | None:
    if judge_model is None:
        if judge_options:
            raise click.BadParameter("--judge-option needs --judge-model", param_hint="--judge-option")
        return None
    return JudgeSpec(
        model_id=judge_model, options=parse_options(judge_options, "--judge-option"), samples=judge_samples
    )


def _thresholds(max_pass_drop: float, max_score_drop: float, max_p: float | None) -> RegressionThresholds:
    return RegressionThresholds(max_pass_rate_drop=max_pass_drop, max_mean_score_drop=max_score_drop, max_p=max_p)


def _not_compared(status: VerdictStatus, passes: bool, reason: str) -> None:
    if not passes and status is not VerdictStatus.REGRESSION:
        click.echo(f"Not compared ({status.value}): {printable(reason)}", err=True)


def _grading_options(command: Callable[..., None]) -> Callable[..., None]:
    """The options ``prompts`` and ``answers`` share: the model, the grader, the gate, the store."""
    options = [
        click.option(
            "--model", "model_id", required=True, help="Model id (goldeneval models) or package.module:factory."
        ),
        click.option("--model-option", "model_options", multiple=True, help="Model option KEY=VALUE (repeatable)."),
        click.option(
            "--grader",
            default=DETERMINISTIC,
            show_default=True,
            help="deterministic (assertions, no model call) or llm_judge (needs --judge-model). "
            "An unknown id falls back to deterministic, with a notice.",
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
            "--max-pass-drop",
            type=click.FloatRange(0, 1),
            callback=finite,
            default=DEFAULT_MAX_DROP,
            show_default=True,
            help="Largest allowed absolute drop of the pass rate.",
        ),
        click.option(
            "--max-score-drop",
            type=click.FloatRange(0, 1),
            callback=finite,
            default=DEFAULT_MAX_DROP,
            show_default=True,
            help="Largest allowed absolute drop of the mean score.",
        ),
        click.option(
            "--max-p",
            type=click.FloatRange(0, 1, min_open=True),
            callback=finite,
            default=None,
            help="Also require significance: a pass-rate drop is a regression only if its McNemar p < ALPHA.",
        ),
        click.option(
            "--baseline",
            "baseline_text",
            default="previous",
            show_default=True,
            help="Compare with: previous, best or run:<id> (a run id or a unique prefix of one).",
        ),
        click.option(
            "--fail-on-regression",
            is_flag=True,
            help="Exit 0 only for a baseline or a passing comparison: 1 regression, 4 incomplete, 6 not comparable.",
        ),
        format_option,
        store_option,
        click.option(
            "--cache-dir",
            type=click.Path(file_okay=False, path_type=Path),
            default=None,
            help="Index cache of retrieval-augmented models. " + storage_default_help(CACHE),
        ),
        click.option(
            "--timeout",
            "timeout_s",
            type=click.FloatRange(min=0, max=MAX_TIMEOUT_S, min_open=True),
            callback=finite,
            default=DEFAULT_TIMEOUT_S,
            show_default=True,
            help="Per-call timeout in seconds (model and judge); a timed-out prompt is an error.",
        ),
        click.option(
            "--privacy",
            type=click.Choice([m.value for m in PrivacyMode]),
            default=None,
            help="What the run persists. Default: $GOLDENEVAL_PRIVACY, else full. "
            "metadata_only stores no prompt text, no answer text and no document id.",
        ),
        click.option(
            "--provenance",
            "provenance_values",
            multiple=True,
            help="Declare a provenance field FIELD=VALUE (repeatable); overrides the model's own.",
        ),
        click.option("--progress/--no-progress", default=True, help="Progress bar on stderr for runs over a second."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@main.command()
@click.option("--set", "set_ref", required=True, help="Golden prompt set id (goldeneval prompt-sets) or set file.")
@click.option("--name", "series", default=None, callback=series_name, help="Series name (default: the model id).")
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Corpus of a retrieval-augmented model (goldeneval.extractive). Default: the set's own.",
)
@click.option(
    "--prompt-sets-dir",
    "sets_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of prompt set files to register (repeatable); also $GOLDENEVAL_PROMPT_SETS_PATH.",
)
@_grading_options
def prompts(
    set_ref: str,
    series: str | None,
    corpus_path: Path | None,
    sets_dirs: tuple[Path, ...],
    model_id: str,
    model_options: tuple[str, ...],
    grader: str,
    judge_model: str | None,
    judge_options: tuple[str, ...],
    judge_samples: int,
    pass_threshold: float,
    max_pass_drop: float,
    max_score_drop: float,
    max_p: float | None,
    baseline_text: str,
    fail_on_regression: bool,
    output_format: str,
    store_path: StoreLocation | None,
    cache_dir: Path | None,
    timeout_s: float,
    privacy: str | None,
    provenance_values: tuple[str, ...],
    progress: bool,
) -> None:
    """Run a golden prompt set against a model, grade, print and store the run, report the verdict."""
    parsed_model_options = parse_options(model_options, "--model-option")
    judge = _judge(judge_model, judge_options, judge_samples)
    thresholds = _thresholds(max_pass_drop, max_score_drop, max_p)
    storage = load_storage()
    resolved_store = storage.store(store_path)

    def evaluate() -> PromptOutcome:
        spec = _validated(
            lambda: PromptRunSpec(
                set_ref=set_ref,
                sets_dirs=sets_dirs,
                corpus=corpus_path,
                model_id=model_id,
                model_options=parsed_model_options,
                series=series or model_id,
                grader=grader,
                judge=judge,
                pass_threshold=pass_threshold,
                cache_dir=storage.cache(cache_dir),
                timeout_s=timeout_s,
                privacy=resolve_privacy(privacy),
                thresholds=thresholds,
                baseline=Baseline.parse(baseline_text),
                provenance=parse_provenance(parse_options(provenance_values, "--provenance"), "--provenance"),
            )
        )
        return run_prompts(spec, resolved_store, progress=progress_bar(progress))

    outcome = run_guarded(evaluate)
    for notice in outcome.run.notices:
        click.echo(f"goldeneval: notice: {printable(notice)}", err=True)
    if output_format == "json":
        click.echo(json.dumps(prompt_outcome_json(outcome, resolved_store), indent=2))
    else:
        click.echo(render_prompt_outcome(outcome, resolved_store))
    if fail_on_regression:
        sys.exit(int(GATE_EXIT_CODES[outcome.gate]))
    _not_compared(outcome.verdict.status, outcome.verdict.passes_gate, outcome.verdict.reason)


@main.command()
@click.option("--set", "set_ref", required=True, help="Golden question set id (registered), set file, or BEIR folder.")
@click.option("--retriever", "retriever_id", required=True, help="Retriever id or package.module:factory.")
@click.option("--option", "options", multiple=True, help="Retriever option KEY=VALUE (repeatable).")
@click.option(
    "--retriever-name",
    default=None,
    callback=series_name,
    help="Series name of the retrieval run stored beside the answers (default: the retriever id).",
)
@click.option(
    "--name",
    "series",
    default=None,
    callback=series_name,
    help="Series name of the answer run (default: <retriever id>+<model id>).",
)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Corpus: BEIR corpus.jsonl (or its folder) or a folder of .md/.txt. Default: the set's own.",
)
@click.option(
    "--context-depth",
    type=click.IntRange(1, 30),
    default=DEFAULT_CONTEXT_DEPTH,
    show_default=True,
    help="How many of the retrieved distinct documents the model answers from.",
)
@sets_dir_option
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
    model_id: str,
    model_options: tuple[str, ...],
    grader: str,
    judge_model: str | None,
    judge_options: tuple[str, ...],
    judge_samples: int,
    pass_threshold: float,
    max_pass_drop: float,
    max_score_drop: float,
    max_p: float | None,
    baseline_text: str,
    fail_on_regression: bool,
    output_format: str,
    store_path: StoreLocation | None,
    cache_dir: Path | None,
    timeout_s: float,
    privacy: str | None,
    provenance_values: tuple[str, ...],
    progress: bool,
) -> None:
    """Retrieve, answer from the top documents and grade against each question's answer_gist;
    store the retrieval run and the answer run beside it, split answer quality by retrieval hit."""
    parsed_options = parse_options(options)
    parsed_model_options = parse_options(model_options, "--model-option")
    judge = _judge(judge_model, judge_options, judge_samples)
    thresholds = _thresholds(max_pass_drop, max_score_drop, max_p)
    storage = load_storage()
    resolved_store = storage.store(store_path)

    def evaluate() -> AnswersOutcome:
        mode = resolve_privacy(privacy)
        baseline = Baseline.parse(baseline_text)
        retrieval = _validated(
            lambda: RunSpec(
                set_ref=set_ref,
                sets_dirs=sets_dirs,
                retriever_id=retriever_id,
                options=parsed_options,
                corpus=corpus_path,
                series=retriever_name or retriever_id,
                cache_dir=storage.cache(cache_dir),
                timeout_s=timeout_s,
                privacy=mode,
                baseline=baseline if baseline.kind != "run" else Baseline(),
            )
        )
        spec = _validated(
            lambda: AnswerRunSpec(
                retrieval=retrieval,
                context_depth=context_depth,
                model_id=model_id,
                model_options=parsed_model_options,
                series=series or f"{retriever_id}+{model_id}",
                grader=grader,
                judge=judge,
                pass_threshold=pass_threshold,
                cache_dir=storage.cache(cache_dir),
                timeout_s=timeout_s,
                privacy=mode,
                thresholds=thresholds,
                baseline=baseline,
                provenance=parse_provenance(parse_options(provenance_values, "--provenance"), "--provenance"),
            )
        )
        return run_answers(spec, resolved_store, progress=progress_bar(progress))

    outcome = run_guarded(evaluate)
    for warning in outcome.retrieval.run.warnings:
        click.echo(f"goldeneval: warning: {printable(warning)}", err=True)
    for notice in outcome.answers.run.notices:
        click.echo(f"goldeneval: notice: {printable(notice)}", err=True)
    if output_format == "json":
        click.echo(json.dumps(answers_json(outcome, resolved_store), indent=2))
    else:
        click.echo(render_answers(outcome, resolved_store))
    if fail_on_regression:
        sys.exit(int(GATE_EXIT_CODES[outcome.gate]))
    verdict = outcome.answers.verdict
    _not_compared(verdict.status, verdict.passes_gate, verdict.reason)


@main.command("prompt-sets")
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


@main.command("prompt-schema")
def prompt_schema() -> None:
    """Print the JSON Schema of golden prompt set files."""
    click.echo(json.dumps(prompt_set_json_schema(), indent=2))


@main.command()
def models() -> None:
    """List the registered model ids (entry-point group goldeneval.models)."""
    for model_id in known_models():
        click.echo(model_id)


@main.command()
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
        click.echo(json.dumps([{"model": model, "quality_score": score} for model, score in order], indent=2))
        return
    for rank, (model, score) in enumerate(order, start=1):
        click.echo(f"{rank}\t{printable(model)}\t{'no score' if score is None else f'{score:.3f}'}")
