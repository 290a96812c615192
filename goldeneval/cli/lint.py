"""``goldeneval lint``: what a golden set gets wrong that loading it does not catch."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import click

from goldeneval.cli.app import ExitCode, run_guarded
from goldeneval.cli.params import corpus_option, format_option, sets_dir_option
from goldeneval.cli.retrieval import beir_split_option
from goldeneval.core.errors import printable
from goldeneval.core.sets import corpus_for
from goldeneval.judgments.judgments import found_by_retrieval, read_judgments
from goldeneval.retrieval.golden import SET_FILE_SUFFIXES, load_draft_set
from goldeneval.retrieval.lint import LINT_RULES, Finding, lint_set
from goldeneval.retrieval.sets import resolve_golden_set


@click.command("lint")
@click.option("--set", "set_ref", required=True, help="Golden set id (registered), set file, or BEIR folder.")
@corpus_option("Corpus to check the set against. Default: the set's own.")
@click.option(
    "--judgments",
    "judgments_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    default=None,
    help="The judgments file the set was pooled into: report questions whose targets no source found.",
)
@click.option("--strict", is_flag=True, help="Exit 3 when there is any finding (default: exit 0 with findings).")
@format_option
@beir_split_option
@sets_dir_option
def lint(
    set_ref: str,
    corpus_path: Path | None,
    judgments_file: Path | None,
    strict: bool,
    output_format: str,
    beir_split: str,
    sets_dirs: tuple[Path, ...],
) -> None:
    """Report what a golden set gets wrong that loading it does not catch, one line each.

    Declared forms that disagree with the measured vocabulary overlap (vocabulary-overlap/v1),
    expected ids missing from the corpus, duplicate and near-duplicate questions,
    near-duplicate documents among a question's targets, and (with --judgments) questions
    whose targets no pooled source found.  Exit 0 with findings unless --strict."""

    def run() -> tuple[str, str | None, list[Finding]]:
        path = Path(set_ref)
        # a drafted set is what most needs checking: read it as pooling does (its drafts included)
        drafted = path.is_file() and path.suffix.lower() in SET_FILE_SUFFIXES
        golden_set = load_draft_set(path) if drafted else resolve_golden_set(set_ref, sets_dirs, beir_split=beir_split)
        corpus = corpus_for(corpus_path, golden_set.corpus)
        pooled: dict[str, set[str]] | None = None
        if judgments_file is not None:
            read = read_judgments(judgments_file)
            pooled = {}
            for (question, document), sources in read.pairs.items():
                if any(found_by_retrieval(s.source) for s in sources):  # a search or a draft's source found nothing
                    pooled.setdefault(question, set()).add(document)
        corpus_name = str(corpus_path or golden_set.corpus) if corpus is not None else None
        return golden_set.id, corpus_name, lint_set(golden_set, corpus, pooled)

    set_id, corpus_name, findings = run_guarded(run)
    counts = Counter(finding.kind for finding in findings)
    if output_format == "json":
        document = {
            "set": set_id,
            "corpus": corpus_name,
            "rules": dict(LINT_RULES),
            "counts": dict(sorted(counts.items())),
            "findings": [finding.to_dict() for finding in findings],
        }
        click.echo(json.dumps(document, indent=2, ensure_ascii=False))
    else:
        for finding in findings:
            click.echo(printable(finding.line()))
        summary = ", ".join(f"{kind} {n}" for kind, n in sorted(counts.items()))
        click.echo(f"{len(findings)} finding(s) in set {set_id!r}" + (f": {summary}" if summary else ""))
    if corpus_name is None:
        click.echo(
            "goldeneval: notice: the set names no corpus: forms, missing ids and near-duplicate targets were not "
            "checked (pass --corpus)",
            err=True,
        )
    if strict and findings:
        sys.exit(int(ExitCode.INVALID_INPUT))
