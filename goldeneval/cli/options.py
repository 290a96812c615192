"""The options every run command shares, declared once: how the run is judged, gated, stored
and shown.

``goldeneval retrieval``, ``prompts`` and ``answers`` each add their own options (the set, the
retriever or model, the kind's settings) and take these through :func:`run_options`, which
hands the command one :class:`RunOptions` instead of a dozen keyword arguments.  Each kind
names its two rates in its own words (:class:`goldeneval.core.thresholds.RateNames`:
``--max-top1-drop`` for retrieval, ``--max-pass-drop`` for prompts); what they set is the same
pair of thresholds, declared once for each kind by :meth:`~goldeneval.core.thresholds.RateNames.settings`.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from pydantic import BaseModel, ValidationError

from goldeneval.cli.app import ExitCode, run_guarded
from goldeneval.cli.declared import Decorator, declared_option, declared_options
from goldeneval.cli.params import (
    folder_option,
    format_option,
    parse_options,
    progress_bar,
    storage_default_help,
    store_option,
)
from goldeneval.core.baseline import Baseline
from goldeneval.core.errors import InputError, printable, validation_problem
from goldeneval.core.gate import GateDecision, RegressionThresholds, VerdictStatus
from goldeneval.core.json_stream import write_json
from goldeneval.core.privacy import PrivacyMode, resolve_privacy
from goldeneval.core.settings import Flag, flagged_fields, settings_of
from goldeneval.core.spec import SpecBase
from goldeneval.core.storage import CACHE
from goldeneval.core.thresholds import RateNames, SliceThresholds

if TYPE_CHECKING:  # the CI outputs, the report and the store are imported only when a command runs
    from goldeneval.cli.outputs import CiOutputs
    from goldeneval.core.provenance import Provenance
    from goldeneval.core.regression import RegressionVerdict
    from goldeneval.report.model import RunComparison
    from goldeneval.store import StoreLocation
    from goldeneval.suite_storage import SuiteStorage

__all__ = [
    "GATE_EXIT_CODES",
    "RunOptions",
    "bundled_options",
    "declared_bundle",
    "run_options",
    "timeout_option",
    "validated",
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
class RunOptions:
    """The shared options' values, as one command received them."""

    max_pass_rate_drop: float
    max_mean_score_drop: float
    max_p: float | None
    baseline_text: str
    fail_on_regression: bool
    output_format: str
    store_location: StoreLocation | None
    cache_dir: Path | None
    timeout_s: float
    privacy_mode: str | None
    provenance_values: tuple[str, ...]
    progress: bool

    def thresholds(self, slices: SliceThresholds | None = None) -> RegressionThresholds:
        """The regression thresholds, with a kind's slice thresholds where it has them."""
        extra = settings_of(slices, SliceThresholds) if slices is not None else {}
        return RegressionThresholds(
            max_pass_rate_drop=self.max_pass_rate_drop,
            max_mean_score_drop=self.max_mean_score_drop,
            max_p=self.max_p,
            **extra,
        )

    @functools.cached_property
    def storage(self) -> SuiteStorage:
        from goldeneval.suite_storage import load_storage

        return load_storage()

    @property
    def store(self) -> StoreLocation:
        return self.storage.store(self.store_location)

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
        from goldeneval.core.provenance import parse_provenance

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
        self,
        verdict: RegressionVerdict,
        gate: GateDecision,
        text: Callable[[], str],
        document: Callable[[], Any],
        *,
        warnings: Iterable[str] = (),
        notices: Iterable[str] = (),
        outputs: CiOutputs | None = None,
        comparison: Callable[[], RunComparison] | None = None,
    ) -> None:
        """Print the run's warnings and notices on stderr and the outcome as text or JSON, write
        the files ``outputs`` asks for from ``comparison`` (the run against the earlier run its
        verdict names), then apply the gate: with ``--fail-on-regression`` exit with its code;
        without, say on stderr why a run was not compared."""
        for word, lines in (("warning", warnings), ("notice", notices)):
            for line in lines:
                click.echo(f"goldeneval: {word}: {printable(line)}", err=True)
        if self.output_format == "json":
            write_json(document(), lambda chunk: click.echo(chunk, nl=False))
        else:
            click.echo(text())
        failed = False
        if outputs is not None and comparison is not None:
            written = run_guarded(lambda: outputs.write(comparison))
            written.echo()
            failed = bool(written.failed)
        code = GATE_EXIT_CODES[gate] if self.fail_on_regression else ExitCode.OK
        if failed and code is ExitCode.OK:
            code = ExitCode.INVALID_INPUT  # an output file is missing: the run is stored, CI must notice
        if self.fail_on_regression or failed:
            sys.exit(int(code))
        if verdict.labels_short is not None:
            click.echo(f"Baseline short of labels: {printable(verdict.labels_short.reason)}", err=True)
        elif not verdict.passes_gate and verdict.status is not VerdictStatus.REGRESSION:
            click.echo(f"Not compared ({verdict.status.value}): {printable(verdict.reason)}", err=True)


_FIELDS = tuple(f.name for f in fields(RunOptions))


def timeout_option(help_text: str) -> Decorator:
    """``--timeout``: the specification's ``timeout_s`` (a finite number of seconds up to a day)."""
    return declared_option(SpecBase, "timeout_s", flag=Flag("--timeout"), help=help_text)


def run_options(
    rates: RateNames, *, cache_help: str, timeout_help: str, persisted: str, owner: str
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Add the shared options to a run command, which receives them as ``run: RunOptions``."""
    options: list[Decorator] = [
        declared_option(rates.settings(), rates.pass_key, dest="max_pass_rate_drop"),
        declared_option(rates.settings(), rates.score_key, dest="max_mean_score_drop"),
        declared_option(rates.settings(), "max_p"),
        click.option(
            "--baseline",
            "baseline_text",
            default="previous",
            show_default=True,
            help="Compare with: previous (latest earlier complete run), accepted (the series' accepted level: "
            "the last run that passed the gate, or one a person accepted with goldeneval accept), best (best "
            "comparable run), "
            "run:<id> (a run id or a unique prefix of one) or series:<name> (the latest complete run of "
            "another series, e.g. a pull request's run against main's, without joining that series).",
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
    options: Sequence[Decorator],
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


def declared_bundle(
    model: type[BaseModel], keyword: str, *, help: Mapping[str, str] | None = None
) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """Add a flag for every declared field of ``model`` (:mod:`goldeneval.cli.declared`); the
    command receives their values as one ``model`` in its argument ``keyword``."""
    return bundled_options(declared_options(model, help=help), flagged_fields(model), model, keyword)
