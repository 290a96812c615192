"""The ``goldeneval answers`` command (ADR-060): retrieve, answer from the top documents and
grade, storing the retrieval run and the answer run beside it.

It takes the model and grading options of ``prompts`` (:mod:`goldeneval.cli.prompts`) and the
retrieval target of ``retrieval`` (:mod:`goldeneval.cli.retrieval`); nothing is decided here:
it builds a run specification and calls :mod:`goldeneval.answers.answers`.
"""

from __future__ import annotations

import click

from goldeneval.answers.answers import DEFAULT_CONTEXT_DEPTH, AnswerRunSpec, AnswersOutcome, run_answers
from goldeneval.answers.report import answers_json, render_answers
from goldeneval.cli.options import RunOptions, validated
from goldeneval.cli.outputs import CiOutputs
from goldeneval.cli.params import parse_options, series_option
from goldeneval.cli.prompts import GradingFlags, comparison_of, grading_options
from goldeneval.cli.retrieval import RetrievalTarget, target_options
from goldeneval.core.baseline import Baseline

__all__ = ["answers"]


@click.command()
@target_options
@series_option(
    "Series name of the retrieval run stored beside the answers (default: the retriever id).",
    "--retriever-name",
    "retriever_name",
)
@series_option(
    "Series name of the answer run (default: <retriever id>+<model id>; a served model is openai:<its model option>)."
)
@click.option(
    "--context-depth",
    type=click.IntRange(1, 30),
    default=DEFAULT_CONTEXT_DEPTH,
    show_default=True,
    help="How many of the retrieved distinct documents the model answers from.",
)
@grading_options("Questions retrieved, and prompts asked and graded, at once (for served systems).")
def answers(
    target: RetrievalTarget,
    retriever_name: str | None,
    series: str | None,
    context_depth: int,
    grading: GradingFlags,
    run: RunOptions,
    outputs: CiOutputs,
) -> None:
    """Retrieve, answer from the top documents and grade against each question's answer_gist;
    store the retrieval run and the answer run beside it, split answer quality by retrieval hit."""
    parse_options(target.options)  # a malformed --option is a usage error before anything runs
    resolved_store = run.store

    def evaluate() -> AnswersOutcome:
        baseline = run.baseline
        retrieval = target.spec(
            retriever_name,
            cache_dir=run.cache,
            timeout_s=run.timeout_s,
            workers=grading.settings.workers,
            privacy=run.privacy,
            baseline=baseline if not baseline.pinned else Baseline(),
        )
        spec = validated(
            lambda: AnswerRunSpec(
                retrieval=retrieval,
                context_depth=context_depth,
                series=series or f"{target.retriever_id}+{grading.default_series()}",
                **grading.spec_fields(),
                **run.spec_fields(),
            )
        )
        return run_answers(spec, resolved_store, progress=run.progress_bar())

    outcome = run.guarded(evaluate)
    run.show(
        outcome.answers.verdict,
        outcome.gate,
        lambda: render_answers(outcome, resolved_store),
        lambda: answers_json(outcome, resolved_store),
        warnings=outcome.retrieval.run.warnings,
        notices=outcome.answers.run.notices,
        outputs=outputs,
        comparison=lambda: comparison_of(
            outcome.answers.stored,
            outcome.answers.verdict,
            resolved_store,
            run,
            target.source_refs(),
        ),
    )
