"""``goldeneval pool``, ``goldeneval judge`` and ``goldeneval judgments``: the labelling workflow."""

from __future__ import annotations

import getpass
import json
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import click

from goldeneval.cli.app import run_guarded
from goldeneval.cli.declared import declared_option
from goldeneval.cli.options import timeout_option
from goldeneval.cli.params import (
    corpus_option,
    existing_set_file_option,
    folder_option,
    format_option,
    key_value_option,
    parse_options,
    sets_dir_option,
    storage_default_help,
    store_option,
)
from goldeneval.core.corpus import load_corpus
from goldeneval.core.errors import InputError, printable
from goldeneval.core.storage import CACHE
from goldeneval.judgments.agreement import judgment_stats
from goldeneval.judgments.answer_judgments import answer_agreements, read_answer_judgments
from goldeneval.judgments.judgments import (
    DEFAULT_SCALE,
    DRAFT_SOURCE,
    MODEL_ASSESSOR_PREFIX,
    check_judgments,
    is_model_assessor,
    read_judgments,
)
from goldeneval.judgments.pool import (
    PoolResult,
    Rankings,
    RetrieverSource,
    pool,
    pooled_corpus,
    retriever_rankings,
    run_rankings,
)
from goldeneval.judgments.to_set import write_set
from goldeneval.retrieval.golden import load_draft_set
from goldeneval.retrieval.settings import RetrievalSettings

if TYPE_CHECKING:
    from goldeneval.judgments.suggest import SuggestResult
from goldeneval.store import StoredRun, StoreLocation, open_store, store_exists
from goldeneval.suite_storage import load_storage

judgments_path = click.Path(dir_okay=False, path_type=Path)

scale_option = click.option(
    "--scale",
    default=",".join(map(str, DEFAULT_SCALE)),
    show_default=True,
    help="Grades on the scale, comma-separated digits 0-9 (keys on the page): 0 not relevant, 1 relevant, "
    "2 highly relevant, 3 perfect.",
)


def _warn(warnings: tuple[str, ...] | list[str]) -> None:
    for warning in warnings:
        click.echo(f"goldeneval: warning: {printable(warning)}", err=True)


def _retriever_options(retrievers: tuple[str, ...], options: tuple[str, ...]) -> list[dict[str, str]]:
    """``--option [N:]KEY=VALUE``: for the N-th ``--retriever`` (from 1), or for all of them."""
    parsed: list[dict[str, str]] = [{} for _ in retrievers]
    for value in options:
        target, colon, rest = value.partition(":")
        position: int | None = None
        if colon and target.isdigit():
            position, value = int(target), rest
            if not 1 <= position <= len(retrievers):
                raise click.BadParameter(
                    f"{position} names no --retriever (there are {len(retrievers)})", param_hint="--option"
                )
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected [N:]KEY=VALUE, got {value!r}", param_hint="--option")
        for i in range(len(retrievers)):
            if position is None or position == i + 1:
                parsed[i][key] = val
    return parsed


def _read_already(rankings: Rankings) -> tuple[Rankings, list[str]]:
    """A stored run's rankings, read before pooling starts (a bad run id fails first)."""
    return rankings, []


@click.command("pool")
@existing_set_file_option("Golden set file; questions may lack 'expected' yet.")
@click.option("--retriever", "retrievers", multiple=True, help="Retriever id to pool from (repeatable).")
@click.option("--run", "run_ids", multiple=True, help="Stored run id (or unique prefix) to pool from (repeatable).")
@click.option(
    "--depth",
    type=click.IntRange(1, 1000),
    required=True,
    help="Distinct documents pooled per question from each source.",
)
@click.option("--out", required=True, type=judgments_path, help="Judgments file (JSON lines); appended to.")
@key_value_option(
    "--option",
    "options",
    "Retriever option [N:]KEY=VALUE: for the N-th --retriever (from 1), without N for all (repeatable).",
)
@corpus_option("Corpus for the retrievers. Default: the set's own.")
@declared_option(RetrievalSettings, "chunk_separator")
@declared_option(RetrievalSettings, "workers", help="Retrieval calls (and suggestion calls) in flight at once.")
@timeout_option(
    "Per-question timeout in seconds, and per suggestion call; a timed-out question adds nothing, "
    "a timed-out suggestion is asked again next time."
)
@folder_option("--cache-dir", "Index and embedding cache. " + storage_default_help(CACHE))
@store_option
@click.option(
    "--suggest-with",
    "suggest_with",
    default=None,
    metavar="MODEL",
    help="Ask this model (e.g. goldeneval.openai) for a suggested grade of each pooled pair not yet "
    "suggested; appended as its own assessor model:<MODEL>[/<served model>], never as a person's grade.",
)
@key_value_option("--suggest-option", "suggest_options", "Suggestion model option KEY=VALUE (repeatable).")
@click.option(
    "--suggest-samples",
    type=click.IntRange(1, 20),
    default=1,
    show_default=True,
    help="Ask the suggestion model N times per pair; the samples' spread is stored with the suggestion.",
)
def pool_command(
    set_file: Path,
    retrievers: tuple[str, ...],
    run_ids: tuple[str, ...],
    depth: int,
    out: Path,
    options: tuple[str, ...],
    corpus_path: Path | None,
    chunk_separator: str | None,
    workers: int,
    timeout_s: float,
    cache_dir: Path | None,
    store_location: StoreLocation | None,
    suggest_with: str | None,
    suggest_options: tuple[str, ...],
    suggest_samples: int,
) -> None:
    """Pool the top documents of retrievers and stored runs into a judgments file (TREC pooling).

    Appends a line for each new (question, document) pair, and one for a known pair that a new
    source also returned; grades already given are kept.  A set drafted by goldeneval draft has
    each draft's source document pooled too (source draft), to be accepted or rejected.  With
    --suggest-with, then asks the model for a grade of each pooled pair it has not suggested yet."""
    parsed = _retriever_options(retrievers, options)
    if suggest_with is None and (suggest_options or suggest_samples != 1):
        flag = "--suggest-option" if suggest_options else "--suggest-samples"
        raise click.BadParameter("needs --suggest-with", param_hint=flag)
    model_options = parse_options(suggest_options, "--suggest-option")

    def run() -> tuple[PoolResult, SuggestResult | None]:
        golden_set = load_draft_set(set_file)
        drafted = {q.id: [q.draft.source] for q in golden_set.questions if q.draft is not None}
        if not retrievers and not run_ids and not drafted:
            raise click.UsageError("give at least one --retriever or --run")
        storage = load_storage()
        suggester = None
        if suggest_with is not None:  # built first: a bad model fails before anything is written
            from goldeneval.judgments.suggest import Suggester

            suggest_corpus = pooled_corpus(corpus_path, golden_set)
            if suggest_corpus is None:
                raise InputError(
                    f"{set_file}: --suggest-with needs the documents' text: the set names no corpus; pass --corpus"
                )
            suggester = (
                Suggester(
                    suggest_with,
                    model_options,
                    samples=suggest_samples,
                    timeout_s=timeout_s,
                    cache_dir=storage.cache(cache_dir),
                ),
                suggest_corpus,
            )
        sources: list[tuple[str, Callable[[], tuple[Rankings, list[str]]]]] = []
        if retrievers:
            corpus = pooled_corpus(corpus_path, golden_set)
            for retriever_id, retriever_options in zip(retrievers, parsed, strict=True):
                source = RetrieverSource(retriever_id, retriever_options)
                sources.append(
                    (
                        source.label,
                        partial(
                            retriever_rankings,
                            golden_set,
                            source,
                            depth,
                            corpus=corpus,
                            cache_dir=storage.cache(cache_dir),
                            timeout_s=timeout_s,
                            workers=workers,
                            chunk_separator=chunk_separator,
                        ),
                    )
                )
        for run_id in run_ids:
            stored_id, rankings = run_rankings(storage.store(store_location), run_id, depth)
            sources.append((f"run:{stored_id}", partial(_read_already, rankings)))
        if drafted:  # each draft's source, to be accepted (judged relevant) or rejected on the page
            sources.append((DRAFT_SOURCE, partial(_read_already, drafted)))
        pooled = pool(out, golden_set, sources)
        if suggester is None:
            return pooled, None
        from goldeneval.judgments.suggest import suggest

        _warn(pooled.warnings)  # before the (long) suggestions
        texts = {question.id: question.text for question in golden_set.questions}
        return replace(pooled, warnings=()), suggest(out, suggester[0], texts, suggester[1], workers=workers)

    result, suggested = run_guarded(run)
    _warn(result.warnings)
    click.echo(
        f"pooled {result.pairs} pairs at depth {depth}: {result.new_pairs} new, "
        f"{result.new_sources} with a new source; appended to {out}"
    )
    if suggested is not None:
        _warn(suggested.warnings)
        failed = suggested.asked - suggested.suggested
        click.echo(
            f"suggested {suggested.suggested} of {suggested.asked} pairs not yet suggested as {suggested.assessor}"
            + (f"; {failed} failed (pooling again asks them again)" if failed else "")
        )


@click.command("judge")
@click.argument(
    "judgments_file", metavar="JUDGMENTS.jsonl", type=click.Path(exists=True, dir_okay=False, path_type=Path)
)
@corpus_option("Corpus the pooled documents are shown from.", required=True)
@click.option("--assessor", default=None, help="Your name in the judgments. Default: your login name.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="Port on 127.0.0.1.")
@scale_option
@folder_option("--cache-dir", "Index cache of the page's corpus search. " + storage_default_help(CACHE))
def judge(
    judgments_file: Path, corpus_path: Path, assessor: str | None, port: int, scale: str, cache_dir: Path | None
) -> None:
    """Judge the pooled documents on a local web page (127.0.0.1); each grade is appended at once.

    The page's search box finds any document of the corpus (the lexical index) for the question
    shown; adding one pools it with the source search:<assessor>, to be judged like the others."""
    grades = _scale(scale)
    name = _person(assessor)

    def start() -> None:
        from goldeneval.judgments.page import HOST, judging_app, lexical_search, listen, serve  # starlette only here

        sock = listen(port)  # a port in use fails first, in one line, before anything is read or announced
        corpus = load_corpus(corpus_path)
        search = partial(lexical_search, corpus, load_storage().cache(cache_dir))  # built on the first search
        app = judging_app(judgments_file, corpus, name, grades, search)  # a bad file fails here
        _warn(app.state.warnings)
        click.echo(f"judging {judgments_file} as {name} at http://{HOST}:{port}/ (Ctrl-C to stop)", err=True)
        serve(app, sock)

    run_guarded(start)


def _person(assessor: str | None) -> str:
    """The assessor's name (default: the login name); never empty, never a model's."""
    name = assessor or getpass.getuser()
    if not name.strip():
        raise click.BadParameter("must not be empty", param_hint="--assessor")
    if is_model_assessor(name):
        raise click.BadParameter(
            f"{MODEL_ASSESSOR_PREFIX}... names a model's suggestions, not a person", param_hint="--assessor"
        )
    return name


def _scale(value: str) -> tuple[int, ...]:
    try:
        grades = tuple(int(part) for part in value.split(",") if part.strip())
    except ValueError:
        raise click.BadParameter(f"expected comma-separated grades, got {value!r}", param_hint="--scale") from None
    if not grades or len(set(grades)) != len(grades) or any(not 0 <= g <= 9 for g in grades):
        raise click.BadParameter(f"expected distinct grades from 0 to 9, got {value!r}", param_hint="--scale")
    return grades


@click.group("judgments")
def judgments_group() -> None:
    """Read a judgments file: progress and agreement, or a golden set built from it."""


@judgments_group.command("stats")
@click.argument("judgments_file", metavar="JUDGMENTS.jsonl", type=judgments_path)
@format_option
def stats(judgments_file: Path, output_format: str) -> None:
    """Judged and unjudged pairs per question, grades per assessor, and Cohen's kappa between assessors."""

    def compute() -> tuple[str, tuple[str, ...]]:
        read = read_judgments(judgments_file)
        found = judgment_stats(list(read.pairs), read.grades)
        text = json.dumps(found.to_dict(), indent=2) if output_format == "json" else found.to_text()
        return text, read.warnings

    text, warnings = run_guarded(compute)
    _warn(warnings)
    click.echo(text)


@judgments_group.command("answer-stats")
@click.argument("answer_judgments", metavar="ANSWER-JUDGMENTS.jsonl", type=judgments_path)
@store_option
@format_option
def answer_stats(answer_judgments: Path, store_location: StoreLocation | None, output_format: str) -> None:
    """Each judged run's grader (or judge) against people's answer verdicts: Cohen's kappa.

    ANSWER-JUDGMENTS.jsonl holds one JSON object a line: run (an id or unique prefix), question,
    verdict (correct, incorrect or abstained) and assessor."""
    resolved = load_storage().store(store_location)

    def compute() -> str:
        judgments = read_answer_judgments(answer_judgments)
        if not store_exists(resolved):
            raise InputError(f"no result store at {resolved}: the judged runs are read from it")
        store = open_store(resolved)
        runs: dict[str, StoredRun] = {}
        for ref in sorted({j.run for j in judgments}):
            run = store.get_run(store.resolve_run_id(ref))
            if run is None:
                raise InputError(f"run {ref!r} is not in {resolved}")
            runs[ref] = run
        found = answer_agreements(judgments, runs)
        if output_format == "json":
            return json.dumps({"agreements": [a.to_dict() for a in found]}, indent=2)
        header = f"{'run':<12}  {'grader':<24} {'assessor':<16} {'pairs':>6}  agree  kappa [95% interval]"
        return "\n".join([header, *(printable(a.to_text()) for a in found)])

    click.echo(run_guarded(compute))


@judgments_group.command("judge-answers")
@click.argument("run_ref", metavar="RUN")
@click.option(
    "--out", required=True, type=judgments_path, help="Answer judgments file (JSON lines); each verdict appended."
)
@click.option(
    "--set", "set_ref", default=None, help="The run's set (id or file): its questions and references. Default: "
    "the run's set id."
)  # fmt: skip
@sets_dir_option
@corpus_option("Corpus of an answer run's passages. Default: the set's own.")
@click.option("--assessor", default=None, help="Your name in the judgments. Default: your login name.")
@click.option("--port", type=click.IntRange(1, 65535), default=8765, show_default=True, help="Port on 127.0.0.1.")
@store_option
def judge_answers(
    run_ref: str,
    out: Path,
    set_ref: str | None,
    sets_dirs: tuple[Path, ...],
    corpus_path: Path | None,
    assessor: str | None,
    port: int,
    store_location: StoreLocation | None,
) -> None:
    """Judge a stored run's answers on a local web page (127.0.0.1): correct, incorrect or abstained.

    Each verdict is appended at once to the answer judgments file that `goldeneval judgments
    answer-stats` reads. A metadata_only run kept no answer to show: the page says so."""
    name = _person(assessor)
    resolved = load_storage().store(store_location)

    def start() -> None:
        from goldeneval.judgments.page import HOST, answer_judging_app, listen, serve  # starlette only here
        from goldeneval.judgments.page_answers import load_answer_review

        sock = listen(port)  # a port in use fails first, in one line
        if not store_exists(resolved):
            raise InputError(f"no result store at {resolved}: the run is read from it")
        store = open_store(resolved)
        run = store.get_run(store.resolve_run_id(run_ref))
        if run is None:
            raise InputError(f"run {run_ref!r} is not in {resolved}")
        app = answer_judging_app(load_answer_review(run, set_ref, sets_dirs, corpus_path), out, name)
        click.echo(f"judging the answers of run {run.id} as {name} at http://{HOST}:{port}/ (Ctrl-C to stop)", err=True)
        serve(app, sock)

    run_guarded(start)


@judgments_group.command("to-set")
@click.argument("judgments_file", metavar="JUDGMENTS.jsonl", type=judgments_path)
@click.option(
    "--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Golden set file to write (YAML)."
)
@existing_set_file_option("The set that was pooled: its questions' text, form, hard class and answer gist are kept.")
@click.option("--id", "set_id", default=None, help="Id of the new set. Default: the original's id with -judged.")
@click.option("--assessor", default=None, help="Use this assessor's grades only.")
@click.option(
    "--merge",
    type=click.Choice(["majority"]),
    default=None,
    help="Merge every assessor's grades: the most common grade of a pair, a tie to the lower.",
)
@click.option(
    "--no-answer-when-all-negative",
    is_flag=True,
    help="A question whose pooled documents are all judged 0 becomes a no-answer question.",
)
@scale_option
@corpus_option("Corpus every graded document must be in. Default: the set's own.")
@click.option(
    "--allow-unknown-documents",
    is_flag=True,
    help="Keep graded documents that are not in the corpus (by default such a grade is invalid input).",
)
def to_set(
    judgments_file: Path,
    out: Path,
    set_file: Path,
    set_id: str | None,
    assessor: str | None,
    merge: Literal["majority"] | None,
    no_answer_when_all_negative: bool,
    scale: str,
    corpus_path: Path | None,
    allow_unknown_documents: bool,
) -> None:
    """Write a golden set file whose expected documents are the ones judged relevant (grade >= 1).

    The documents judged 0 are kept as each question's not_relevant documents, so every run of
    the set reports judged@k (how much of what it returned was ever judged).  The judgments are
    checked as a set file is: a grade off --scale, or a graded document not in the corpus, is
    invalid input naming the file, the line and the field."""
    if assessor is not None and merge is not None:
        raise click.UsageError("give either --assessor or --merge, not both")
    grades = _scale(scale)

    def build() -> tuple[int, tuple[str, ...]]:
        read = read_judgments(judgments_file)
        _warn(read.warnings)
        original = load_draft_set(set_file)
        documents: frozenset[str] | None = None
        corpus_name = "the corpus"
        if not allow_unknown_documents:
            corpus = pooled_corpus(corpus_path, original)
            if corpus is None:
                raise InputError(
                    f"{set_file}: the set names no corpus to check the graded documents against: "
                    "pass --corpus, or --allow-unknown-documents"
                )
            documents, corpus_name = corpus.ids, f"the corpus {corpus_path or original.corpus}"
        check_judgments(judgments_file, read, scale=grades, documents=documents, corpus_name=corpus_name)
        written = write_set(
            read,
            original,
            out,
            set_id=set_id,
            assessor=assessor,
            merge=merge,
            no_answer_when_all_negative=no_answer_when_all_negative,
        )
        return len(written.golden_set.questions), written.notices

    count, notices = run_guarded(build)
    for notice in notices:
        click.echo(f"goldeneval: notice: {printable(notice)}", err=True)
    click.echo(f"wrote {count} questions to {out}")
