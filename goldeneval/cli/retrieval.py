"""``goldeneval retrieval`` and the commands around golden sets: ``sets``, ``schema``, TREC export."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from goldeneval.cli.app import run_guarded
from goldeneval.cli.declared import Decorator
from goldeneval.cli.options import RunOptions, bundled_options, declared_bundle, run_options, validated
from goldeneval.cli.outputs import CiOutputs, ci_output_options
from goldeneval.cli.params import (
    corpus_option,
    key_value_option,
    parse_options,
    series_option,
    sets_dir_option,
    store_option,
    topic_field_option,
    topics_option,
)
from goldeneval.core.errors import InputError, printable
from goldeneval.core.settings import settings_of
from goldeneval.core.thresholds import SliceThresholds
from goldeneval.retrieval.settings import RETRIEVAL_RATES, RetrievalSettings

if TYPE_CHECKING:  # the run itself is imported when a command runs: its --help costs none of it
    from goldeneval.core.privacy import PrivacyMode
    from goldeneval.core.regression import RegressionVerdict
    from goldeneval.report.model import RunComparison
    from goldeneval.report.runs import SourceRefs
    from goldeneval.retrieval import pipeline
    from goldeneval.retrieval.spec import RunSpec
    from goldeneval.store import StoredRun, StoreLocation

beir_split_option = click.option(
    "--beir-split", default="test", show_default=True, help="Qrels split when --set is a BEIR folder."
)


@dataclass(frozen=True)
class RetrievalTarget:
    """What a retrieval is asked of: the set, the retriever and its options, the corpus (the
    options ``retrieval`` and ``answers`` share, declared once in :func:`target_options`)."""

    set_ref: str
    retriever_id: str
    options: tuple[str, ...]
    corpus_path: Path | None
    beir_split: str
    topics: Path | None
    topic_field: str | None
    sets_dirs: tuple[Path, ...]

    def spec(self, series: str | None, **fields: Any) -> RunSpec:
        """The run specification of this target, validated (its series by default the
        retriever id); ``fields`` set the rest."""
        from goldeneval.retrieval.spec import RunSpec

        options = parse_options(self.options)
        return validated(
            lambda: RunSpec(
                set_ref=self.set_ref,
                sets_dirs=self.sets_dirs,
                beir_split=self.beir_split,
                topics=self.topics,
                topic_field=self.topic_field,
                retriever_id=self.retriever_id,
                options=options,
                corpus=self.corpus_path,
                series=series or self.retriever_id,
                **fields,
            )
        )

    def comparison(
        self, stored: StoredRun, verdict: RegressionVerdict, location: StoreLocation, privacy: PrivacyMode
    ) -> RunComparison:
        """The comparison a run's ``--summary-md`` and ``--junit`` show: the stored run against the
        run its verdict names, with the text of this target's set and the titles of its corpus."""
        from goldeneval.report.runs import comparison_for
        from goldeneval.store import open_store

        refs = self.source_refs()
        return comparison_for(open_store(location), stored, verdict=verdict, privacy=privacy, refs=refs, trend=False)

    def source_refs(self) -> SourceRefs:
        """Where a comparison of this target's runs reads the question text and the titles."""
        from goldeneval.report.runs import SourceRefs

        return SourceRefs(
            self.set_ref, self.sets_dirs, self.corpus_path, self.beir_split, self.topics, self.topic_field
        )


def target_options(command: Callable[..., None]) -> Callable[..., None]:
    """Add the options of a :class:`RetrievalTarget`, received as ``target``."""
    options: list[Decorator] = [
        click.option(
            "--set",
            "set_ref",
            required=True,
            help="Golden set id (registered), set file, BEIR folder, or TREC qrels file (with --topics).",
        ),
        click.option(
            "--retriever",
            "retriever_id",
            required=True,
            help="Registered retriever id (e.g. goldeneval.lexical) or import path package.module:factory.",
        ),
        key_value_option("--option", "options", "Retriever option KEY=VALUE (repeatable)."),
        corpus_option("Corpus: BEIR corpus.jsonl (or its folder) or a folder of .md/.txt. Default: the set's own."),
        click.option(
            "--beir-split", default="test", show_default=True, help="Qrels split when --set is a BEIR folder."
        ),
        topics_option,
        topic_field_option,
        sets_dir_option,
    ]
    names = [field.name for field in fields(RetrievalTarget)]
    return bundled_options(options, names, RetrievalTarget, "target")(command)


@click.command()
@target_options
@series_option(
    "Series name the run is stored and compared under (default: the retriever id). "
    "The same name as a retriever in goldeneval.yaml continues that nightly series."
)
@declared_bundle(SliceThresholds, "slices")
@declared_bundle(RetrievalSettings, "settings")
@run_options(
    RETRIEVAL_RATES,
    cache_help="Index and embedding cache.",
    timeout_help="Per-question timeout in seconds; a timed-out question is an error, not a miss.",
    persisted="no question text and no document id",
    owner="retriever",
)
@ci_output_options
def retrieval(
    target: RetrievalTarget,
    series: str | None,
    slices: SliceThresholds,
    settings: RetrievalSettings,
    run: RunOptions,
    outputs: CiOutputs,
) -> None:
    """Run a golden set against a retriever, print and store the run, report the verdict."""
    from goldeneval.retrieval import pipeline
    from goldeneval.retrieval.report import outcome_json, render_outcome

    parse_options(target.options)  # a malformed --option is a usage error before anything runs
    thresholds = run.thresholds(slices)
    resolved_store = run.store

    def evaluate() -> pipeline.Outcome:
        spec = target.spec(series, **settings_of(settings, RetrievalSettings), **run.spec_fields(thresholds))
        return pipeline.run(spec, resolved_store, progress=run.progress_bar())

    outcome = run.guarded(evaluate)
    run.show(
        outcome.verdict,
        outcome.gate,
        lambda: render_outcome(outcome.stored, outcome.verdict, resolved_store),
        lambda: outcome_json(
            outcome.stored, outcome.verdict, resolved_store, warnings=outcome.run.warnings, streamed=True
        ),
        warnings=outcome.run.warnings,
        outputs=outputs,
        comparison=lambda: target.comparison(outcome.stored, outcome.verdict, resolved_store, run.privacy),
    )


@click.command()
@sets_dir_option
def sets(sets_dirs: tuple[Path, ...]) -> None:
    """List the registered golden question sets and where each comes from."""
    from goldeneval.retrieval.sets import GoldenSetRegistry

    registry = run_guarded(lambda: GoldenSetRegistry.discover(sets_dirs))
    for set_id in registry.ids():
        golden_set = registry.get(set_id)
        source = registry.source(set_id)
        click.echo(f"{printable(set_id)}\t{len(golden_set.questions)} questions\t{printable(source)}")


@click.command()
def schema() -> None:
    """Print the JSON Schema of golden set files."""
    from goldeneval.retrieval.golden import golden_set_json_schema

    click.echo(json.dumps(golden_set_json_schema(), indent=2))


# --------------------------------------------------------------------------- TREC export


def _export_run(store_location: StoreLocation, run_id: str, out: Path) -> tuple[int, Path | None]:
    """The run's lines written to ``out``, and its replay notes beside it when it needs them
    (a stale notes file of an earlier export to ``out`` removed when it does not)."""
    from goldeneval.retrieval.trec import REPLAY_NOTES_SUFFIX, replay_notes, run_lines, write_lines
    from goldeneval.store import open_store, store_exists

    if not store_exists(store_location):
        raise InputError(f"run {run_id!r} not found: the store {store_location} does not exist")
    stored = open_store(store_location).find_run(run_id)
    count = write_lines(run_lines(stored), out)
    notes = replay_notes(stored)
    beside = out.with_name(out.name + REPLAY_NOTES_SUFFIX)
    if notes is None:
        if beside.is_file():
            beside.unlink()
        return count, None
    from goldeneval.report.files import write_whole

    write_whole(beside, (notes.to_json(stored.id) + "\n").encode())
    return count, beside


@click.command("export-run")
@click.argument("run_id", metavar="RUN_ID")
@click.option("--trec", "out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="TREC run file.")
@store_option
def export_run(run_id: str, out: Path, store_location: StoreLocation | None) -> None:
    """Write a stored run as a TREC run file (qid Q0 docid rank score tag).

    RUN_ID is a run id or a unique prefix of one, as `goldeneval runs` prints it."""
    from goldeneval.suite_storage import load_storage

    resolved = load_storage().store(store_location)
    count, notes = run_guarded(lambda: _export_run(resolved, run_id, out))
    click.echo(f"wrote {count} lines to {out}")
    if notes is not None:
        click.echo(f"wrote the replay notes to {notes} (keep them beside the file: a replay reads its top-3 misses)")


@click.command("export-qrels")
@click.option("--set", "set_ref", required=True, help="Golden set id (registered), set file, or BEIR folder.")
@click.option("--out", required=True, type=click.Path(dir_okay=False, path_type=Path), help="TREC qrels file.")
@beir_split_option
@sets_dir_option
def export_qrels(set_ref: str, out: Path, beir_split: str, sets_dirs: tuple[Path, ...]) -> None:
    """Write a golden set as TREC qrels (qid 0 docid grade per expected document, 0 per judged negative).

    The grade is 1 unless the set grades the document; a document the set records as not
    relevant (not_relevant) has grade 0; a question with neither has no line."""
    from goldeneval.retrieval.sets import resolve_golden_set
    from goldeneval.retrieval.trec import qrels_lines, write_lines

    count = run_guarded(
        lambda: write_lines(qrels_lines(resolve_golden_set(set_ref, sets_dirs, beir_split=beir_split)), out)
    )
    click.echo(f"wrote {count} lines to {out}")
