"""The ``goldeneval`` command: the same runs the Dagster assets make, for CI and terminals.

Domain errors are turned into one line on stderr and a documented exit code here, and
nowhere else.  Exit codes (README.md, "Exit codes"):

0  success (no regression, or a regression without --fail-on-regression)
1  a regression, with --fail-on-regression
2  bad command-line usage
3  invalid input: a golden set, corpus or retriever that cannot be loaded; nothing is stored
4  the run is incomplete (a question errored), with --fail-on-regression; the run is stored
5  the result store cannot be opened or written
6  no numeric verdict (state mismatch or unknown), with --fail-on-regression; the run is stored
130  interrupted (Ctrl-C); nothing partial is stored
"""

from __future__ import annotations

import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from enum import IntEnum
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError
from tqdm import tqdm

from goldeneval import pipeline
from goldeneval.asking import DEFAULT_BATCH_SIZE
from goldeneval.collector import fewer_collections
from goldeneval.comparison import Baseline
from goldeneval.errors import GoldenEvalError, InputError, StoreError, printable
from goldeneval.evaluation import DEFAULT_TIMEOUT_S
from goldeneval.golden import golden_set_json_schema
from goldeneval.metrics import DEFAULT_METRICS, DEFAULT_RELEVANCE_LEVEL
from goldeneval.privacy import PrivacyMode, resolve_privacy
from goldeneval.provenance import parse_provenance
from goldeneval.regression import DEFAULT_MAX_DROP, GateDecision, RegressionThresholds, VerdictStatus
from goldeneval.report import outcome_json, render_outcome, render_runs, runs_json
from goldeneval.retention import PurgeReport, parse_duration, purge_runs
from goldeneval.retrievers.base import DEFAULT_CHUNK_SEPARATOR
from goldeneval.scoring import DEFAULT_HIT_CUTOFFS
from goldeneval.sets import GoldenSetRegistry, resolve_golden_set
from goldeneval.spec import (
    MAX_BATCH_SIZE,
    MAX_TIMEOUT_S,
    MAX_WORKERS,
    RunSpec,
    check_hit_cutoffs,
    check_metric_names,
    check_series_name,
)
from goldeneval.store import StoredRun, StoreLocation, copy_runs, open_store, resolve_store
from goldeneval.supervisor import run_supervised
from goldeneval.trec import qrels_lines, run_lines, write_lines

__all__ = ["ExitCode", "main"]

CACHE_ENV = "GOLDENEVAL_CACHE"
DEFAULT_CACHE_DIR = Path(".goldeneval") / "cache"
TABLES_ENV = "GOLDENEVAL_TABLES"
DEFAULT_TABLES_ROOT = Path(".goldeneval") / "tables"

T = TypeVar("T")


class ExitCode(IntEnum):
    OK = 0
    REGRESSION = 1
    USAGE = 2
    INVALID_INPUT = 3
    INCOMPLETE = 4
    STORE = 5
    NOT_COMPARABLE = 6
    INTERRUPTED = 130


GATE_EXIT_CODES = {
    GateDecision.PASS: ExitCode.OK,
    GateDecision.REGRESSION: ExitCode.REGRESSION,
    GateDecision.INCOMPLETE: ExitCode.INCOMPLETE,
    GateDecision.NOT_COMPARABLE: ExitCode.NOT_COMPARABLE,
}
"""What ``--fail-on-regression`` exits with for each gate decision (the decision is made in
goldeneval.regression, the same one the ``no_regression`` check uses)."""


def _fail(message: str, code: ExitCode) -> None:
    click.echo(f"goldeneval: error: {printable(message)}", err=True)
    sys.exit(int(code))


def _run_guarded(action: Callable[[], T]) -> T:
    """Convert domain errors to one line and an exit code, once, at the edge."""
    try:
        return action()
    except InputError as exc:
        _fail(str(exc), ExitCode.INVALID_INPUT)
    except StoreError as exc:
        _fail(str(exc), ExitCode.STORE)
    except GoldenEvalError as exc:
        _fail(str(exc), ExitCode.INVALID_INPUT)
    raise AssertionError("unreachable")  # pragma: no cover


def _raise(exc: BaseException) -> None:
    raise exc


def _parse_options(values: Sequence[str], hint: str = "--option") -> dict[str, str]:
    options: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=hint)
        options[key] = val
    return options


def _parse_cutoffs(value: str) -> tuple[int, ...]:
    try:
        numbers = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from None
    try:
        return check_hit_cutoffs(numbers)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def _progress(enabled: bool) -> Callable[[Sequence[T]], Iterable[T]] | None:
    if not enabled:
        return None

    def wrap(items: Sequence[T]) -> Iterable[T]:
        bar: Iterable[T] = tqdm(
            items, total=len(items), desc="questions", unit="q", file=sys.stderr, delay=1.0, leave=False
        )
        return bar

    return wrap


class StoreParam(click.ParamType[StoreLocation, Any]):
    """A result store: a DuckDB file path, or a ``postgresql://`` URL (shown without its password)."""

    name = "PATH|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> StoreLocation:
        if isinstance(value, StoreLocation):
            return value
        try:
            location = StoreLocation.parse(value)
        except InputError as exc:
            self.fail(str(exc), param, ctx)
        if location.path is None:
            return location
        return StoreLocation(path=click.Path(dir_okay=False, path_type=Path).convert(value, param, ctx))


store_option = click.option(
    "--store",
    "store_path",
    type=StoreParam(),
    default=None,
    help="Result store: a DuckDB file, or a postgresql:// URL for a shared store. "
    "Default: $GOLDENEVAL_STORE, else .goldeneval/results.duckdb.",
)
sets_dir_option = click.option(
    "--sets-dir",
    "sets_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of golden set files to register (repeatable); also $GOLDENEVAL_SETS_PATH.",
)
format_option = click.option(
    "--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True
)


class _Command(click.Group):
    """Ctrl-C exits 130, as shells expect, never 1 (the regression code).  A run being
    written when it comes is rolled back whole: the store keeps only complete runs."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            with fewer_collections():  # a one-shot process: see goldeneval.collector
                return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("goldeneval: interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except GoldenEvalError as exc:  # raised before a command's guarded action: a bad $GOLDENEVAL_STORE
            return _run_guarded(partial(_raise, exc))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The console command runs under :mod:`goldeneval.supervisor`, so a plug-in that
        ends the process with ``os._exit(0)`` cannot make it exit 0.  (Tests that call
        ``main.main()`` through click's runner stay in one process.)"""

        def command() -> int:
            self.main(*args, **kwargs)  # standalone mode: always ends in SystemExit
            return 0

        run_supervised(command)


@click.group(cls=_Command, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="goldeneval")
def main() -> None:
    """Measure retrieval quality against golden question sets and catch regressions."""


def _finite(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Click's ranges let NaN through (every comparison with it is false)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def _series_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return check_series_name(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


@main.command()
@click.option("--set", "set_ref", required=True, help="Golden set id (registered), set file, or BEIR dataset folder.")
@click.option(
    "--retriever",
    "retriever_id",
    required=True,
    help="Registered retriever id (e.g. goldeneval.lexical) or import path package.module:factory.",
)
@click.option(
    "--name",
    "series",
    default=None,
    callback=_series_name,
    help="Series name the run is stored and compared under (default: the retriever id). "
    "The same name as a retriever in goldeneval.yaml continues that nightly series.",
)
@click.option(
    "--corpus",
    "corpus_path",
    type=click.Path(exists=True, path_type=Path),
    default=None,
    help="Corpus: BEIR corpus.jsonl (or its folder) or a folder of .md/.txt. Default: the set's own.",
)
@click.option("--beir-split", default="test", show_default=True, help="Qrels split when --set is a BEIR folder.")
@click.option("--option", "options", multiple=True, help="Retriever option KEY=VALUE (repeatable).")
@click.option(
    "--max-top1-drop",
    type=click.FloatRange(0, 1),
    callback=_finite,
    default=DEFAULT_MAX_DROP,
    show_default=True,
    help="Largest allowed absolute drop of the top-1 hit rate.",
)
@click.option(
    "--max-top3-drop",
    type=click.FloatRange(0, 1),
    callback=_finite,
    default=DEFAULT_MAX_DROP,
    show_default=True,
    help="Largest allowed absolute drop of the top-3 hit rate.",
)
@click.option(
    "--max-p",
    type=click.FloatRange(0, 1, min_open=True),
    callback=_finite,
    default=None,
    help="Also require significance: a drop is a regression only if its exact McNemar p < ALPHA.",
)
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
@click.option(
    "--baseline",
    "baseline_text",
    default="previous",
    show_default=True,
    help="Compare with: previous (latest earlier complete run), best (best comparable run) or "
    "run:<id> (a run id or a unique prefix of one).",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit 0 only for a baseline or a passing comparison: 1 regression, 4 incomplete, 6 not comparable.",
)
@format_option
@store_option
@sets_dir_option
@click.option(
    "--cache-dir",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Index and embedding cache. Default: $GOLDENEVAL_CACHE, else .goldeneval/cache.",
)
@click.option(
    "--chunk-separator",
    default=DEFAULT_CHUNK_SEPARATOR,
    show_default=True,
    help="Returned ids map to document ids by the prefix before this separator ('' to keep ids).",
)
@click.option(
    "--timeout",
    "timeout_s",
    type=click.FloatRange(min=0, max=MAX_TIMEOUT_S, min_open=True),
    callback=_finite,
    default=DEFAULT_TIMEOUT_S,
    show_default=True,
    help="Per-question timeout in seconds; a timed-out question is an error, not a miss.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, MAX_WORKERS),
    default=1,
    show_default=True,
    help="Retrieval calls in flight at once, for retrievers that wait on a network service.",
)
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
    "rprec; k from 1 to 1000. The deepest cutoff is the measurement depth (README, Metrics).",
)
@click.option(
    "--relevance-level",
    type=click.IntRange(min=1),
    default=DEFAULT_RELEVANCE_LEVEL,
    show_default=True,
    help="Grade from which a document counts as relevant for the binary metrics (trec_eval -l).",
)
@click.option(
    "--privacy",
    type=click.Choice([m.value for m in PrivacyMode]),
    default=None,
    help="What the run persists. Default: $GOLDENEVAL_PRIVACY, else full. "
    "metadata_only stores no question text and no document id.",
)
@click.option(
    "--provenance",
    "provenance_values",
    multiple=True,
    help="Declare a provenance field FIELD=VALUE for a retriever that cannot say it (repeatable); "
    "overrides the retriever's own declaration.",
)
@click.option(
    "--strict",
    is_flag=True,
    help="Fail (exit 3) instead of warning when expected document ids are not in the corpus.",
)
@click.option("--progress/--no-progress", default=True, help="Progress bar on stderr for runs over a second.")
def retrieval(
    set_ref: str,
    retriever_id: str,
    series: str | None,
    corpus_path: Path | None,
    beir_split: str,
    options: tuple[str, ...],
    max_top1_drop: float,
    max_top3_drop: float,
    max_p: float | None,
    slice_drops: tuple[str, ...],
    min_slice_questions: int,
    baseline_text: str,
    fail_on_regression: bool,
    output_format: str,
    store_path: StoreLocation | None,
    sets_dirs: tuple[Path, ...],
    cache_dir: Path | None,
    chunk_separator: str,
    timeout_s: float,
    workers: int,
    batch_size: int | None,
    hit_k: str,
    metric_names: str,
    relevance_level: int,
    privacy: str | None,
    provenance_values: tuple[str, ...],
    strict: bool,
    progress: bool,
) -> None:
    """Run a golden set against a retriever, print and store the run, report the verdict."""
    parsed_options = _parse_options(options)
    cutoffs = _parse_cutoffs(hit_k)
    try:
        metrics = check_metric_names(metric_names)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--metrics") from None
    try:
        thresholds = RegressionThresholds(
            max_pass_rate_drop=max_top1_drop,
            max_mean_score_drop=max_top3_drop,
            max_p=max_p,
            slice_max_drop={k: float(v) for k, v in _parse_options(slice_drops, "--slice-drop").items()},
            min_slice_questions=min_slice_questions,
        )
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--slice-drop") from None
    resolved_store = resolve_store(store_path)
    resolved_cache = cache_dir or Path(os.environ.get(CACHE_ENV) or DEFAULT_CACHE_DIR)

    def specification() -> RunSpec:
        try:
            return RunSpec(
                set_ref=set_ref,
                sets_dirs=sets_dirs,
                beir_split=beir_split,
                retriever_id=retriever_id,
                options=parsed_options,
                corpus=corpus_path,
                series=series or retriever_id,
                cache_dir=resolved_cache,
                chunk_separator=chunk_separator,
                timeout_s=timeout_s,
                workers=workers,
                batch_size=batch_size,
                hit_cutoffs=cutoffs,
                metrics=metrics,
                relevance_level=relevance_level,
                privacy=resolve_privacy(privacy),
                thresholds=thresholds,
                baseline=Baseline.parse(baseline_text),
                provenance=parse_provenance(_parse_options(provenance_values, "--provenance"), "--provenance"),
                strict=strict,
            )
        except ValidationError as exc:
            error = exc.errors()[0]
            field = ".".join(str(p) for p in error["loc"])
            raise InputError(f"{field}: {error['msg'].removeprefix('Value error, ')}") from None

    def evaluate() -> pipeline.Outcome:
        spec = specification()
        return pipeline.run(spec, resolved_store, progress=_progress(progress))

    outcome = _run_guarded(evaluate)
    for warning in outcome.run.warnings:
        click.echo(f"goldeneval: warning: {printable(warning)}", err=True)
    if output_format == "json":
        document = outcome_json(outcome.stored, outcome.verdict, resolved_store, warnings=outcome.run.warnings)
        click.echo(json.dumps(document, indent=2))
    else:
        click.echo(render_outcome(outcome.stored, outcome.verdict, resolved_store))
    if fail_on_regression:
        sys.exit(int(GATE_EXIT_CODES[outcome.gate]))
    if not outcome.verdict.passes_gate and outcome.verdict.status is not VerdictStatus.REGRESSION:
        click.echo(f"Not compared ({outcome.verdict.status.value}): {outcome.verdict.reason}", err=True)


@main.command()
@store_option
@click.option("--set", "set_id", default=None, help="Only runs of this set.")
@click.option("--model", "--retriever", "model", default=None, help="Only runs of this series name or retriever id.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many (newest first).")
@format_option
def runs(
    store_path: StoreLocation | None, set_id: str | None, model: str | None, limit: int | None, output_format: str
) -> None:
    """List stored runs, newest first."""
    resolved = resolve_store(store_path)

    def listed() -> list[StoredRun]:
        if not resolved.exists():  # nothing stored yet: say so, create nothing
            return []
        return open_store(resolved).list_runs(set_id=set_id, retriever=model, limit=limit)

    stored = _run_guarded(listed)
    if output_format == "json":
        click.echo(json.dumps(runs_json(stored), indent=2))
    else:
        click.echo(render_runs(stored))


@main.command()
@click.option("--older-than", required=True, help="Delete runs created longer ago than this: 90m, 12h, 30d, 8w.")
@click.option("--set", "set_id", default=None, help="Only runs of this set.")
@click.option("--dry-run", is_flag=True, help="Report what would be deleted; delete nothing.")
@click.option(
    "--tables-root",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Also delete the Parquet table files the runs were built from, below this folder. "
    "Default: $GOLDENEVAL_TABLES, else .goldeneval/tables.",
)
@store_option
def purge(
    older_than: str, set_id: str | None, dry_run: bool, tables_root: Path | None, store_path: StoreLocation | None
) -> None:
    """Delete whole runs (store rows and their Parquet table files) older than a duration."""
    resolved = resolve_store(store_path)
    root = tables_root or Path(os.environ.get(TABLES_ENV) or DEFAULT_TABLES_ROOT)

    def run() -> PurgeReport:
        duration = parse_duration(older_than)
        if not resolved.exists():  # nothing stored yet: nothing to delete, nothing created
            return PurgeReport((), (), dry_run)
        return purge_runs(open_store(resolved), duration, set_id=set_id, tables_root=root, dry_run=dry_run)

    report = _run_guarded(run)
    verb = "Would delete" if report.dry_run else "Deleted"
    click.echo(f"{verb} {len(report.runs)} run(s) and {len(report.table_files)} Parquet table file(s).")
    for stored in report.runs:
        click.echo(f"  {stored.id}  {stored.created_at:%Y-%m-%d %H:%M:%S}  {stored.set_id}  {stored.model}")


@main.command()
@sets_dir_option
def sets(sets_dirs: tuple[Path, ...]) -> None:
    """List the registered golden question sets and where each comes from."""
    registry = _run_guarded(lambda: GoldenSetRegistry.discover(sets_dirs))
    for set_id in registry.ids():
        golden_set = registry.get(set_id)
        source = registry.source(set_id)
        click.echo(f"{printable(set_id)}\t{len(golden_set.questions)} questions\t{printable(source)}")


@main.command()
def schema() -> None:
    """Print the JSON Schema of golden set files."""
    click.echo(json.dumps(golden_set_json_schema(), indent=2))


# --------------------------------------------------------------------------- TREC export


def _export_run(store_path: StoreLocation, run_id: str, out: Path) -> int:
    if not store_path.exists():
        raise InputError(f"run {run_id!r} not found: the store {store_path} does not exist")
    return write_lines(run_lines(open_store(store_path).find_run(run_id)), out)


@main.command("export-run")
@click.argument("run_id", metavar="RUN_ID")
@click.option("--trec", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="TREC run file.")
@store_option
def export_run(run_id: str, out: Path, store_path: StoreLocation | None) -> None:
    """Write a stored run as a TREC run file (qid Q0 docid rank score tag).

    RUN_ID is a run id or a unique prefix of one, as `goldeneval runs` prints it."""
    resolved = resolve_store(store_path)
    count = _run_guarded(lambda: _export_run(resolved, run_id, out))
    click.echo(f"wrote {count} lines to {out}")


@main.command("export-qrels")
@click.option("--set", "set_ref", required=True, help="Golden set id (registered), set file, or BEIR folder.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="TREC qrels file.")
@click.option("--beir-split", default="test", show_default=True, help="Qrels split when --set is a BEIR folder.")
@sets_dir_option
def export_qrels(set_ref: str, out: Path, beir_split: str, sets_dirs: tuple[Path, ...]) -> None:
    """Write a golden set as TREC qrels (qid 0 docid 1 per expected document)."""
    count = _run_guarded(
        lambda: write_lines(qrels_lines(resolve_golden_set(set_ref, sets_dirs, beir_split=beir_split)), out)
    )
    click.echo(f"wrote {count} lines to {out}")


# --------------------------------------------------------------------------- store maintenance


@main.group("store")
def store_group() -> None:
    """Maintain result stores: move history between DuckDB files and PostgreSQL databases."""


@store_group.command("copy")
@click.option("--from", "source", required=True, type=StoreParam(), help="Store to copy from: DuckDB path or URL.")
@click.option("--to", "target", required=True, type=StoreParam(), help="Store to copy into (created if new).")
def store_copy(source: StoreLocation, target: StoreLocation) -> None:
    """Copy every run (ids, fingerprints, privacy, details, slices, as stored) into another store.

    Copying again copies nothing new; a run id the target holds with different content
    refuses the whole copy (exit 5)."""

    def copy() -> tuple[int, int]:
        if not source.exists():
            raise InputError(f"store copy: the source store {source} does not exist")
        report = copy_runs(open_store(source), open_store(target))
        return report.copied, report.already_there

    copied, already = _run_guarded(copy)
    click.echo(f"Copied {copied} run(s) from {source} to {target}; {already} already there.")


import goldeneval.prompt_cli  # noqa: E402, F401  (registers prompts, answers & co. on `main`; it imports the helpers above)

if __name__ == "__main__":  # pragma: no cover
    main()
