"""The options every run command shares, declared once: how the run is judged, gated, stored
and shown.

``goldeneval retrieval``, ``prompts`` and ``answers`` each add their own options (the set, the
retriever or model, the kind's settings) and take these through :func:`run_options`, which
hands the command one :class:`RunOptions` instead of a dozen keyword arguments.  Each kind
names its two rates in its own words (``--max-top1-drop`` for retrieval, ``--max-pass-drop``
for prompts); what they set is the same pair of thresholds.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TypeVar

import click
from pydantic import ValidationError

from goldeneval.cli.app import ExitCode, run_guarded
from goldeneval.cli.params import (
    finite,
    folder_option,
    format_option,
    parse_options,
    progress_bar,
    storage_default_help,
    store_option,
)
from goldeneval.core.comparison import Baseline
from goldeneval.core.errors import InputError, printable, validation_problem
from goldeneval.core.json_stream import write_json
from goldeneval.core.privacy import PrivacyMode, resolve_privacy
from goldeneval.core.provenance import Provenance, parse_provenance
from goldeneval.core.regression import (
    DEFAULT_MAX_DROP,
    MIN_JUDGED_DESCRIPTION,
    GateDecision,
    RegressionThresholds,
    RegressionVerdict,
    VerdictStatus,
)
from goldeneval.core.spec import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from goldeneval.core.storage import CACHE
from goldeneval.core.workers import MAX_WORKERS
from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR
from goldeneval.store import StoreLocation
from goldeneval.suite_storage import SuiteStorage, load_storage

__all__ = [
    "GATE_EXIT_CODES",
    "RateFlags",
    "RunOptions",
    "bundled_options",
    "chunk_separator_option",
    "min_judged_option",
    "run_options",
    "timeout_option",
    "validated",
    "workers_option",
]

T = TypeVar("T")

GATE_EXIT_CODES = {
    GateDecision.PASS: ExitCode.OK,
    GateDecision.REGRESSION: ExitCode.REGRESSION,
    GateDecision.INCOMPLETE: ExitCode.INCOMPLETE,
    GateDecision.NOT_COMPARABLE: ExitCode.NOT_COMPARABLE,
}
"""What ``--fail-on-regression`` exits with for each gate decision (the decision is made in
goldeneval.core.regression, the same one the ``no_regression`` check uses)."""


def validated(build: Callable[[], T]) -> T:
    """A run specification, its first validation error as invalid input naming the field."""
    try:
        return build()
    except ValidationError as exc:
        field, problem = validation_problem(exc)
        raise InputError(f"{field}: {problem}") from None


@dataclass(frozen=True)
class RateFlags:
    """How one kind's commands name its two stored rates on the command line."""

    pass_flag: str
    pass_words: str
    score_flag: str
    score_words: str
    significance: str
    """What ``--max-p`` tests, in words."""


@dataclass(frozen=True)
class RunOptions:
    """The shared options' values, as one command received them."""

    max_pass_drop: float
    max_score_drop: float
    max_p: float | None
    baseline_text: str
    fail_on_regression: bool
    output_format: str
    store_path: StoreLocation | None
    cache_dir: Path | None
    timeout_s: float
    privacy_mode: str | None
    provenance_values: tuple[str, ...]
    progress: bool

    def thresholds(self, **slices: Any) -> RegressionThresholds:
        """The regression thresholds (a kind's slice thresholds as keywords)."""
        return RegressionThresholds(
            max_pass_rate_drop=self.max_pass_drop, max_mean_score_drop=self.max_score_drop, max_p=self.max_p, **slices
        )

    @functools.cached_property
    def storage(self) -> SuiteStorage:
        return load_storage()

    @property
    def store(self) -> StoreLocation:
        return self.storage.store(self.store_path)

    @property
    def cache(self) -> Path:
        return self.storage.cache(self.cache_dir)

    @property
    def baseline(self) -> Baseline:
        return Baseline.parse(self.baseline_text)

    @property
    def privacy(self) -> PrivacyMode:
        return resolve_privacy(self.privacy_mode)

    @property
    def provenance(self) -> Provenance:
        return parse_provenance(parse_options(self.provenance_values, "--provenance"), "--provenance")

    def progress_bar(self) -> Callable[[Sequence[T]], Iterable[T]] | None:
        return progress_bar(self.progress)

    def spec_fields(self, thresholds: RegressionThresholds | None = None) -> dict[str, Any]:
        """The fields of :class:`goldeneval.core.spec.SpecBase` these options set (all but the
        series, which each command names)."""
        return {
            "cache_dir": self.cache,
            "timeout_s": self.timeout_s,
            "privacy": self.privacy,
            "thresholds": thresholds or self.thresholds(),
            "baseline": self.baseline,
            "provenance": self.provenance,
        }

    def guarded(self, evaluate: Callable[[], T]) -> T:
        """Run the evaluation at the edge (:func:`goldeneval.cli.app.run_guarded`).  With
        ``--format json`` whatever plug-ins print meanwhile (a factory's banner, a framework's
        notice) goes to stderr: stdout holds the one JSON document and nothing else."""
        if self.output_format != "json":
            return run_guarded(evaluate)
        with contextlib.redirect_stdout(sys.stderr):
            return run_guarded(evaluate)

    def show(
        self, verdict: RegressionVerdict, gate: GateDecision, text: Callable[[], str], document: Callable[[], Any]
    ) -> None:
        """Print the outcome as text or JSON, then apply the gate: with ``--fail-on-regression``
        exit with its code; without, say on stderr why a run was not compared."""
        if self.output_format == "json":
            write_json(document(), lambda chunk: click.echo(chunk, nl=False))
        else:
            click.echo(text())
        if self.fail_on_regression:
            sys.exit(int(GATE_EXIT_CODES[gate]))
        if not verdict.passes_gate and verdict.status is not VerdictStatus.REGRESSION:
            click.echo(f"Not compared ({verdict.status.value}): {printable(verdict.reason)}", err=True)


_FIELDS = tuple(f.name for f in fields(RunOptions))


def timeout_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--timeout``: a finite number of seconds up to a day (click's ranges let NaN through)."""
    return click.option(
        "--timeout",
        "timeout_s",
        type=click.FloatRange(min=0, max=MAX_TIMEOUT_S, min_open=True),
        callback=finite,
        default=DEFAULT_TIMEOUT_S,
        show_default=True,
        help=help_text,
    )


def workers_option(help_text: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """``--workers``: retrieval calls in flight at once."""
    return click.option("--workers", type=click.IntRange(1, MAX_WORKERS), default=1, show_default=True, help=help_text)


min_judged_option = click.option(
    "--min-judged",
    type=click.FloatRange(0, 1),
    callback=finite,
    default=None,
    help=MIN_JUDGED_DESCRIPTION,
)
"""``--min-judged F``: the suite's ``thresholds.min_judged``, for the run commands whose sets can
record judged negatives (retrieval)."""

chunk_separator_option = click.option(
    "--chunk-separator",
    default=DEFAULT_CHUNK_SEPARATOR,
    show_default=True,
    help="Returned ids map to document ids by the prefix before this separator ('' to keep ids).",
)


def _drop_option(flag: str, name: str, words: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A run's largest allowed absolute drop of one rate (``--max-top1-drop``, ``--max-score-drop``)."""
    return click.option(
        flag,
        name,
        type=click.FloatRange(0, 1),
        callback=finite,
        default=DEFAULT_MAX_DROP,
        show_default=True,
        help=f"Largest allowed absolute drop of the {words}.",
    )


def run_options(
    rates: RateFlags, *, cache_help: str, timeout_help: str, persisted: str, owner: str
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Add the shared options to a run command, which receives them as ``run: RunOptions``."""
    options: list[Callable[[Callable[..., Any]], Callable[..., Any]]] = [
        _drop_option(rates.pass_flag, "max_pass_drop", rates.pass_words),
        _drop_option(rates.score_flag, "max_score_drop", rates.score_words),
        click.option(
            "--max-p",
            type=click.FloatRange(0, 1, min_open=True),
            callback=finite,
            default=None,
            help=f"Also require significance: {rates.significance} is a regression only if its exact McNemar "
            "p < ALPHA.",
        ),
        click.option(
            "--baseline",
            "baseline_text",
            default="previous",
            show_default=True,
            help="Compare with: previous (latest earlier complete run), best (best comparable run) or "
            "run:<id> (a run id or a unique prefix of one).",
        ),
        click.option(
            "--fail-on-regression",
            is_flag=True,
            help="Exit 0 only for a baseline or a passing comparison: 1 regression, 4 incomplete, 6 not comparable.",
        ),
        format_option,
        store_option,
        folder_option("--cache-dir", f"{cache_help} " + storage_default_help(CACHE)),
        timeout_option(timeout_help),
        click.option(
            "--privacy",
            "privacy_mode",
            type=click.Choice([m.value for m in PrivacyMode]),
            default=None,
            help=f"What the run persists. Default: $GOLDENEVAL_PRIVACY, else full. metadata_only stores {persisted}.",
        ),
        click.option(
            "--provenance",
            "provenance_values",
            multiple=True,
            help=f"Declare a provenance field FIELD=VALUE (repeatable); overrides the {owner}'s own declaration.",
        ),
        click.option("--progress/--no-progress", default=True, help="Progress bar on stderr for runs over a second."),
    ]

    return bundled_options(options, _FIELDS, RunOptions, "run")


def bundled_options(
    options: Sequence[Callable[[Callable[..., Any]], Callable[..., Any]]],
    names: Sequence[str],
    build: Callable[..., Any],
    keyword: str,
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Add ``options`` to a command, which receives the values of the parameters ``names``
    as one object, ``build(**values)``, in its argument ``keyword``: a group of options is
    declared once and arrives as one typed value instead of a dozen keyword arguments."""

    def decorate(command: Callable[..., None]) -> Callable[..., None]:
        @functools.wraps(command)
        def with_bundle(**kwargs: Any) -> None:
            bundle = build(**{name: kwargs.pop(name) for name in names})
            command(**{keyword: bundle}, **kwargs)

        wrapped: Callable[..., None] = with_bundle
        for option in reversed(options):
            wrapped = option(wrapped)
        return wrapped

    return decorate
