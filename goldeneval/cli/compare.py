"""``goldeneval compare`` and ``goldeneval report``: what changed between two stored runs.

Both judge the pair as the gate does (:mod:`goldeneval.report.runs`) and show the one
comparison: ``compare`` as a table or JSON (and the CI files of :mod:`goldeneval.cli.outputs`),
``report`` as a self-contained HTML file.  Neither stores anything.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from goldeneval.cli.app import ExitCode, run_guarded
from goldeneval.cli.options import GATE_EXIT_CODES, declared_bundle
from goldeneval.cli.outputs import CiOutputs, ci_output_options
from goldeneval.cli.params import format_option, sets_dir_option, store_option, topic_field_option, topics_option
from goldeneval.core.baseline import Baseline
from goldeneval.core.errors import InputError, printable
from goldeneval.core.gate import DEFAULT_MAX_DROP, RegressionThresholds
from goldeneval.core.json_stream import write_json
from goldeneval.core.privacy import PrivacyMode, resolve_privacy
from goldeneval.core.settings import settings_of
from goldeneval.core.thresholds import SliceThresholds
from goldeneval.store import StoreLocation, open_store, store_exists
from goldeneval.suite_storage import load_storage

if TYPE_CHECKING:  # the report is imported when a command runs, not at start-up
    from goldeneval.report.model import RunComparison

BASELINE_WORDS = ("previous", "accepted", "best")
"""``--against`` values that name how a baseline is chosen rather than a run."""


def _against(text: str) -> tuple[Baseline | None, str | None]:
    """``previous``, ``accepted``, ``best``, ``run:<id>``, ``series:<name>`` (a baseline), or a run id or prefix."""
    if text in BASELINE_WORDS or text.startswith(("run:", "series:")):
        return Baseline.parse(text), None
    return None, text


def _source_options(command: Callable[..., None]) -> Callable[..., None]:
    for option in reversed(
        [
            click.option(
                "--set",
                "set_ref",
                default=None,
                help="Where the question text comes from: a set id, file, BEIR folder or TREC qrels (with --topics). "
                "Default: the registered set of the run's set id.",
            ),
            sets_dir_option,
            click.option(
                "--corpus",
                "corpus_path",
                type=click.Path(exists=True, path_type=Path),
                default=None,
                help="Corpus for document titles and snippets. Default: the set's own.",
            ),
            click.option(
                "--beir-split", default="test", show_default=True, help="Qrels split when --set is a BEIR folder."
            ),
            topics_option,
            topic_field_option,
            click.option(
                "--max-drop",
                type=click.FloatRange(0.0, 1.0),
                default=DEFAULT_MAX_DROP,
                show_default=True,
                help="Largest allowed drop of either stored rate (retrieval: top-1 and top-3 hit rates; "
                "prompts and answers: pass rate and mean score) for the verdict.",
            ),
            click.option(
                "--max-p",
                type=click.FloatRange(0.0, 1.0, min_open=True),
                default=None,
                help="A drop is a regression only if its exact McNemar p-value is below this.",
            ),
            click.option(
                "--privacy",
                "privacy_mode",
                type=click.Choice([m.value for m in PrivacyMode]),
                default=None,
                help="What the output may show. Default: $GOLDENEVAL_PRIVACY, else full; never more than "
                "either run was stored with (metadata_only: no question text, document ids or answers).",
            ),
            store_option,
        ]
    ):
        command = option(command)
    return declared_bundle(SliceThresholds, "slices")(command)


JUDGED_AGAIN = (
    "judged here with the thresholds of this command (--max-drop {max_drop:g}{max_p}{slices}); a run "
    "records its verdict's outcome, not the thresholds it was gated with: pass the same ones to see its verdict"
)
"""The note of every comparison ``compare`` and ``report`` judge themselves."""


def _judged_here(comparison: RunComparison, options: dict[str, Any]) -> RunComparison:
    """The comparison with the note that says with which thresholds this command judged it."""
    slices = options["slices"].slice_max_drop
    note = JUDGED_AGAIN.format(
        max_drop=options["max_drop"],
        max_p="" if options["max_p"] is None else f", --max-p {options['max_p']:g}",
        slices="".join(f", --slice-drop {key}={value:g}" for key, value in slices.items()),
    )
    return dataclasses.replace(comparison, notes=(*comparison.notes, note))


def _comparison(
    store_location: StoreLocation | None,
    first: str,
    second: str | None,
    against: str | None,
    options: dict[str, Any],
) -> RunComparison:
    """The comparison the arguments name: two runs, or one run against its baseline or a run,
    with the note that says how it was judged."""
    from goldeneval.report.runs import SourceRefs, compare_named, comparison_for

    location = load_storage().store(store_location)
    if not store_exists(location):
        raise InputError(f"run {first!r} not found: the store {location} does not exist")
    store = open_store(location)
    thresholds = RegressionThresholds(
        max_pass_rate_drop=options["max_drop"],
        max_mean_score_drop=options["max_drop"],
        max_p=options["max_p"],
        **settings_of(options["slices"], SliceThresholds),
    )
    refs = SourceRefs(
        options["set_ref"],
        options["sets_dirs"],
        options["corpus_path"],
        options["beir_split"],
        options["topics"],
        options["topic_field"],
    )
    privacy = resolve_privacy(options["privacy_mode"])
    baseline, run_id = _against(against or "previous") if second is None else (None, second)
    if run_id is not None:  # two runs: the first named is the earlier (with --against RUN, that run)
        earlier, later = (first, run_id) if second is not None else (run_id, first)
        compared = compare_named(store, earlier, later, thresholds=thresholds, privacy=privacy, refs=refs)
    else:
        assert baseline is not None
        current = store.find_run(first)
        compared = comparison_for(store, current, against=baseline, thresholds=thresholds, privacy=privacy, refs=refs)
    return _judged_here(compared, options)


@click.command()
@click.argument("run_a", metavar="RUN_A")
@click.argument("run_b", metavar="[RUN_B]", required=False)
@click.option(
    "--against",
    default=None,
    help="With one run: compare it with previous (its series' latest earlier complete run, the "
    "default), accepted (its series' accepted level), best, run:<id>, series:<name> (another series' "
    "latest complete run), or a run id.",
)
@click.option(
    "--limit",
    type=click.IntRange(min=0),
    default=50,
    show_default=True,
    help="Flipped questions the table lists of each kind (the JSON lists every question).",
)
@click.option(
    "--fail-on-regression",
    is_flag=True,
    help="Exit as a run's gate does: 0 only for a baseline or a passing comparison; 1 regression, "
    "4 incomplete, 6 not comparable.",
)
@format_option
@ci_output_options
@_source_options
def compare(
    run_a: str,
    run_b: str | None,
    against: str | None,
    limit: int,
    fail_on_regression: bool,
    output_format: str,
    outputs: CiOutputs,
    store_location: StoreLocation | None,
    **options: Any,
) -> None:
    """Compare two stored runs: the gate's verdict, every rate and rank metric with its change,
    the paired test and bootstrap interval, the slices, and per question both runs' outcomes
    and top documents, newly failing and newly passing.

    RUN_A is the earlier run and RUN_B the later one (ids or unique prefixes, as `goldeneval runs`
    prints them).  With RUN_A alone it is compared with the run --against chooses.  On a
    mismatch there is no numeric verdict; the questions are still compared, marked
    informational.  Nothing is stored."""
    if run_b is not None and against is not None:
        raise click.UsageError("--against chooses the earlier run of one run: give RUN_B or --against, not both")
    comparison = run_guarded(lambda: _comparison(store_location, run_a, run_b, against, options))
    if output_format == "json":
        from goldeneval.report.text import comparison_json

        write_json(comparison_json(comparison), lambda chunk: click.echo(chunk, nl=False))
    else:
        from goldeneval.report.text import render_comparison

        click.echo(render_comparison(comparison, limit=limit))
    written = run_guarded(lambda: outputs.write(lambda: comparison))
    written.echo()
    gate = comparison.verdict.gate(comparison.current.complete)
    code = GATE_EXIT_CODES[gate] if fail_on_regression else ExitCode.OK
    if written.failed and code is ExitCode.OK:
        code = ExitCode.INVALID_INPUT
    if code is not ExitCode.OK:
        sys.exit(int(code))


@click.command()
@click.argument("run_id", metavar="RUN")
@click.option(
    "--against",
    default=None,
    help="The earlier run: previous (the default), accepted, best, run:<id>, series:<name>, or a run id or prefix.",
)
@click.option(
    "--out",
    required=True,
    type=click.Path(dir_okay=False, writable=True, path_type=Path),
    help="The HTML file to write (one self-contained file: it opens offline).",
)
@_source_options
def report(run_id: str, against: str | None, out: Path, store_location: StoreLocation | None, **options: Any) -> None:
    """Write a self-contained HTML report of a stored run against an earlier one: the verdict and
    why, rates with intervals by form and hard class, the series' trend, and every question with
    both rankings side by side.  Nothing is stored.

    RUN is a run id or a unique prefix of one, as `goldeneval runs` prints it."""
    from goldeneval.report.files import OutputFileError, check_output_path

    try:
        check_output_path(out)
    except OutputFileError as exc:
        raise click.BadParameter(str(exc), param_hint="--out") from None
    comparison = run_guarded(lambda: _comparison(store_location, run_id, None, against, options))

    def written() -> Path:
        from goldeneval.report.html import write_report

        try:
            return write_report(comparison, out)
        except OutputFileError as exc:
            raise InputError(str(exc)) from None

    path = run_guarded(written)
    click.echo(f"wrote {path} ({printable(comparison.verdict.summary)})")
