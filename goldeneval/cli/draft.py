"""``goldeneval draft``: questions drafted from a corpus by a model, forms measured, marked drafts."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

import click

from goldeneval.cli.app import run_guarded
from goldeneval.cli.options import timeout_option
from goldeneval.cli.params import folder_option, key_value_option, parse_options, storage_default_help
from goldeneval.core.corpus import load_corpus
from goldeneval.core.errors import printable
from goldeneval.core.storage import CACHE
from goldeneval.suite_storage import load_storage


@click.command("draft")
@click.option(
    "--corpus",
    "corpus_path",
    required=True,
    type=click.Path(exists=True, path_type=Path),
    help="Corpus to draft questions from (a BEIR corpus.jsonl or a folder of .md/.txt).",
)
@click.option("--model", "model_id", required=True, help="Model id that drafts (e.g. goldeneval.openai).")
@key_value_option("--model-option", "model_options", "Model option KEY=VALUE (repeatable).")
@click.option(
    "--per-document",
    type=click.IntRange(1, 20),
    default=2,
    show_default=True,
    help="Questions of each form (MATCH and GAP) asked for per document.",
)
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Set file to write.")
@click.option("--id", "set_id", default=None, help="Id of the set. Default: the corpus's name with -drafts.")
@click.option(
    "--mismatch",
    type=click.Choice(["relabel", "drop"]),
    default="relabel",
    show_default=True,
    help="A draft whose claimed form the measured overlap contradicts: relabel it to the measured form, or drop it.",
)
@timeout_option("Per-call timeout in seconds.")
@folder_option("--cache-dir", "Response cache. " + storage_default_help(CACHE))
def draft(
    corpus_path: Path,
    model_id: str,
    model_options: tuple[str, ...],
    per_document: int,
    out: Path,
    set_id: str | None,
    mismatch: Literal["relabel", "drop"],
    timeout_s: float,
    cache_dir: Path | None,
) -> None:
    """Draft questions from every document of a corpus with a model; forms measured, never trusted.

    Each document is asked for --per-document questions of each form; the form is measured
    (vocabulary-overlap/v1) and a contradicted claim relabelled or dropped, near-duplicates are
    removed, and each draft expects its source document and is marked a draft: no run scores it
    until a person accepts it (goldeneval pool, goldeneval judge, goldeneval judgments to-set)."""
    options = parse_options(model_options, "--model-option")
    from goldeneval.report.files import OutputFileError, check_output_path

    try:  # before a single paid call: an --out no file can be written to is a usage error
        check_output_path(out)
    except OutputFileError as exc:
        raise click.BadParameter(str(exc), param_hint="--out") from None

    def run() -> tuple[int, object]:
        from goldeneval.judgments.draft import draft_questions, drafting_model, write_drafts

        corpus = load_corpus(corpus_path)
        model = drafting_model(model_id, options, cache_dir=load_storage().cache(cache_dir), timeout_s=timeout_s)
        result = draft_questions(corpus, model.complete, per_document, model_id=model_id, mismatch=mismatch)
        result.usage = model.totals().describe()
        name = corpus_path.stem if corpus_path.is_file() and corpus_path.name != "corpus.jsonl" else corpus_path.name
        relative = os.path.relpath(corpus_path.resolve(), out.resolve().parent)
        written = write_drafts(out, result, set_id=set_id or f"{name}-drafts", corpus=relative)
        return len(written.questions), result

    count, found = run_guarded(run)
    from goldeneval.judgments.draft import DraftResult

    assert isinstance(found, DraftResult)
    for warning in found.warnings:
        click.echo(f"goldeneval: warning: {printable(warning)}", err=True)
    click.echo(
        f"drafted {count} questions from {found.asked} documents into {out} ({found.relabelled} relabelled to their "
        f"measured form, {found.dropped_form} dropped for their form, {found.dropped_duplicates} near-duplicates "
        f"dropped); model calls: {found.usage}"
    )
    click.echo(
        f"no run scores a draft until it is accepted: goldeneval pool --set {out} --retriever ... --depth N "
        "--out JUDGMENTS.jsonl, then goldeneval judge and goldeneval judgments to-set"
    )
