"""``goldeneval retrieval`` and the commands around golden sets: ``sets``, ``schema``, TREC export."""

from __future__ import annotations

import json
from pathlib import Path

import click

from goldeneval.cli.app import run_guarded
from goldeneval.cli.options import (
    RateFlags,
    RunOptions,
    chunk_separator_option,
    min_judged_option,
    run_options,
    validated,
    workers_option,
)
from goldeneval.cli.params import (
    CORPUS_HELP,
    RETRIEVER_OPTION_HELP,
    corpus_option,
    key_value_option,
    parse_cutoffs,
    parse_options,
    series_option,
    sets_dir_option,
    store_option,
)
from goldeneval.core.errors import InputError, printable
from goldeneval.retrieval import pipeline
from goldeneval.retrieval.asking import DEFAULT_BATCH_SIZE
from goldeneval.retrieval.golden import golden_set_json_schema
from goldeneval.retrieval.metrics import AVERAGE_OVER, DEFAULT_AVERAGE_OVER, DEFAULT_METRICS, DEFAULT_RELEVANCE_LEVEL
from goldeneval.retrieval.report import outcome_json, render_outcome
from goldeneval.retrieval.scoring import DEFAULT_HIT_CUTOFFS
from goldeneval.retrieval.sets import GoldenSetRegistry, resolve_golden_set
from goldeneval.retrieval.spec import (
    MAX_BATCH_SIZE,
    RunSpec,
    check_metric_names,
)
from goldeneval.retrieval.trec import qrels_lines, run_lines, write_lines
from goldeneval.store import StoreLocation, open_store, store_exists
from goldeneval.suite_storage import load_storage

RETRIEVAL_RATES = RateFlags(
    pass_flag="--max-top1-drop",
    pass_words="top-1 hit rate",
    score_flag="--max-top3-drop",
    score_words="top-3 hit rate",
    significance="a drop",
)


@click.command()
@click.option("--set", "set_ref", required=True, help="Golden set id (registered), set file, or BEIR dataset folder.")
@click.option(
    "--retriever",
    "retriever_id",
    required=True,
    help="Registered retriever id (e.g. goldeneval.lexical) or import path package.module:factory.",
)
@series_option(
    "Series name the run is stored and compared under (default: the retriever id). "
    "The same name as a retriever in goldeneval.yaml continues that nightly series."
)
@corpus_option(CORPUS_HELP)
@click.option("--beir-split", default="test", show_default=True, help="Qrels split when --set is a BEIR folder.")
@key_value_option("--option", "options", RETRIEVER_OPTION_HELP)
@click.option(
    "--slice-drop",
    "slice_drops",
    multiple=True,
    help="Threshold for a slice, SLICE=F with SLICE form:<FORM>, hard_class:<CLASS> or * (repeatable).",
)
@click.option(
    "--min-slice-questions",
    type=click.IntRange(min=1),
    default=5,
    show_default=True,
    help="A slice threshold applies only when both runs scored at least this many questions in it.",
)
@min_judged_option
@sets_dir_option
@chunk_separator_option
@workers_option("Retrieval calls in flight at once, for retrievers that wait on a network service.")
@click.option(
    "--batch-size",
    type=click.IntRange(1, MAX_BATCH_SIZE),
    default=None,
    help=f"Questions per retrieve_batch call, for retrievers that have one [default: {DEFAULT_BATCH_SIZE}; 1: never].",
)
@click.option(
    "--hit-k",
    "hit_k",
    default=",".join(map(str, DEFAULT_HIT_CUTOFFS)),
    show_default=True,
    help="Cutoffs of the reported hit@k metrics (comma-separated, 1 to 1000).",
)
@click.option(
    "--metrics",
    "metric_names",
    default=",".join(metric.name for metric in DEFAULT_METRICS),
    show_default=True,
    help="Rank metrics reported beside hit@k: ndcg@k, recall@k, mrr@k, precision@k (p@k), map@k, hit@k, "
    "rprec; k from 1 to 1000. The deepest cutoff is the measurement depth (docs/reference/metrics.md).",
)
@click.option(
    "--relevance-level",
    type=click.IntRange(min=1),
    default=DEFAULT_RELEVANCE_LEVEL,
    show_default=True,
    help="Grade from which a document counts as relevant for the binary metrics (trec_eval -l).",
)
@click.option(
    "--average-over",
    type=click.Choice(AVERAGE_OVER),
    default=DEFAULT_AVERAGE_OVER,
    show_default=True,
    help="Questions each rank metric's mean is over: with-relevant (those with an expected document) or "
    "all-judged (trec_eval's rule: every query of the qrels, one judged only with grade 0 counting 0). "
    "Part of the benchmark: runs under different rules are never compared.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (exit 3) instead of warning when expected document ids are not in the corpus.",
)
@run_options(
    RETRIEVAL_RATES,
    cache_help="Index and embedding cache.",
    timeout_help="Per-question timeout in seconds; a timed-out question is an error, not a miss.",
    persisted="no question text and no document id",
    owner="retriever",
)
def retrieval(
    set_ref: str,
    retriever_id: str,
    series: str | None,
    corpus_path: Path | None,
    beir_split: str,
    options: tuple[str, ...],
    slice_drops: tuple[str, ...],
    min_slice_questions: int,
    min_judged: float | None,
    sets_dirs: tuple[Path, ...],
    chunk_separator: str,
    workers: int,
    batch_size: int | None,
    hit_k: str,
    metric_names: str,
    relevance_level: int,
    average_over: str,
    strict: bool,
    run: RunOptions,
) -> None:
    """Run a golden set against a retriever, print and store the run, report the verdict."""
    parsed_options = parse_options(options)
    cutoffs = parse_cutoffs(hit_k)
    try:
        metrics = check_metric_names(metric_names)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--metrics") from None
    try:
        thresholds = run.thresholds(
            slice_max_drop={k: float(v) for k, v in parse_options(slice_drops, "--slice-drop").items()},
            min_slice_questions=min_slice_questions,
            min_judged=min_judged,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--slice-drop") from None
    resolved_store = run.store

    def specification() -> RunSpec:
        return validated(
            lambda: RunSpec(
                set_ref=set_ref,
                sets_dirs=sets_dirs,
                beir_split=beir_split,
                retriever_id=retriever_id,
                options=parsed_options,
                corpus=corpus_path,
                series=series or retriever_id,
                chunk_separator=chunk_separator,
                workers=workers,
                batch_size=batch_size,
                hit_cutoffs=cutoffs,
                metrics=metrics,
                relevance_level=relevance_level,
                average_over=average_over,
                strict=strict,
                **run.spec_fields(thresholds),
            )
        )

    def evaluate() -> pipeline.Outcome:
        spec = specification()
        return pipeline.run(spec, resolved_store, progress=run.progress_bar())

    outcome = run.guarded(evaluate)
    for warning in outcome.run.warnings:
        click.echo(f"goldeneval: warning: {printable(warning)}", err=True)
    run.show(
        outcome.verdict,
        outcome.gate,
        lambda: render_outcome(outcome.stored, outcome.verdict, resolved_store),
        lambda: outcome_json(
            outcome.stored, outcome.verdict, resolved_store, warnings=outcome.run.warnings, streamed=True
        ),
    )


@click.command()
@sets_dir_option
def sets(sets_dirs: tuple[Path, ...]) -> None:
    """List the registered golden question sets and where each comes from."""
    registry = run_guarded(lambda: GoldenSetRegistry.discover(sets_dirs))
    for set_id in registry.ids():
        golden_set = registry.get(set_id)
        source = registry.source(set_id)
        click.echo(f"{printable(set_id)}\t{len(golden_set.questions)} questions\t{printable(source)}")


@click.command()
def schema() -> None:
    """Print the JSON Schema of golden set files."""
    click.echo(json.dumps(golden_set_json_schema(), indent=2))


# --------------------------------------------------------------------------- TREC export


def _export_run(store_path: StoreLocation, run_id: str, out: Path) -> int:
    if not store_exists(store_path):
        raise InputError(f"run {run_id!r} not found: the store {store_path} does not exist")
    return write_lines(run_lines(open_store(store_path).find_run(run_id)), out)


@click.command("export-run")
@click.argument("run_id", metavar="RUN_ID")
@click.option("--trec", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="TREC run file.")
@store_option
def export_run(run_id: str, out: Path, store_path: StoreLocation | None) -> None:
    """Write a stored run as a TREC run file (qid Q0 docid rank score tag).

    RUN_ID is a run id or a unique prefix of one, as `goldeneval runs` prints it."""
    resolved = load_storage().store(store_path)
    count = run_guarded(lambda: _export_run(resolved, run_id, out))
    click.echo(f"wrote {count} lines to {out}")


@click.command("export-qrels")
@click.option("--set", "set_ref", required=True, help="Golden set id (registered), set file, or BEIR folder.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="TREC qrels file.")
@click.option("--beir-split", default="test", show_default=True, help="Qrels split when --set is a BEIR folder.")
@sets_dir_option
def export_qrels(set_ref: str, out: Path, beir_split: str, sets_dirs: tuple[Path, ...]) -> None:
    """Write a golden set as TREC qrels (qid 0 docid grade per expected document, 0 per judged negative).

    The grade is 1 unless the set grades the document; a document the set records as not
    relevant (not_relevant) has grade 0; a question with neither has no line."""
    count = run_guarded(
        lambda: write_lines(qrels_lines(resolve_golden_set(set_ref, sets_dirs, beir_split=beir_split)), out)
    )
    click.echo(f"wrote {count} lines to {out}")
