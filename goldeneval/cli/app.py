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

This module holds the group and what every command family shares: the exit codes, the one
conversion of domain errors, and the shared options.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterable, Sequence
from enum import IntEnum
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import click
from tqdm import tqdm

from goldeneval.cli.supervisor import run_supervised
from goldeneval.core.collector import fewer_collections
from goldeneval.core.errors import GoldenEvalError, InputError, StoreError, printable
from goldeneval.core.regression import GateDecision
from goldeneval.core.storage import STORE, StorageSetting
from goldeneval.retrieval.spec import (
    check_hit_cutoffs,
    check_series_name,
)
from goldeneval.store import StoreLocation
from goldeneval.suite import CONFIG_ENV, CONFIG_FILE_NAME

__all__ = [
    "GATE_EXIT_CODES",
    "ExitCode",
    "fail",
    "format_option",
    "main",
    "run_guarded",
    "sets_dir_option",
    "storage_default_help",
    "store_option",
]

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
goldeneval.core.regression, the same one the ``no_regression`` check uses)."""


def fail(message: str, code: ExitCode) -> None:
    click.echo(f"goldeneval: error: {printable(message)}", err=True)
    sys.exit(int(code))


def run_guarded(action: Callable[[], T]) -> T:
    """Convert domain errors to one line and an exit code, once, at the edge."""
    try:
        return action()
    except InputError as exc:
        fail(str(exc), ExitCode.INVALID_INPUT)
    except StoreError as exc:
        fail(str(exc), ExitCode.STORE)
    except GoldenEvalError as exc:
        fail(str(exc), ExitCode.INVALID_INPUT)
    raise AssertionError("unreachable")  # pragma: no cover


def reraise(exc: BaseException) -> None:
    raise exc


def parse_options(values: Sequence[str], hint: str = "--option") -> dict[str, str]:
    options: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=hint)
        options[key] = val
    return options


def parse_cutoffs(value: str) -> tuple[int, ...]:
    try:
        numbers = [int(part) for part in value.split(",") if part.strip()]
    except ValueError:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from None
    try:
        return check_hit_cutoffs(numbers)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


def progress_bar(enabled: bool) -> Callable[[Sequence[T]], Iterable[T]] | None:
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


def storage_default_help(setting: StorageSetting) -> str:
    """The ``Default:`` of a storage option's help: goldeneval.core.storage's order after the flag."""
    return (
        f"Default: ${setting.env}, else storage.{setting.key} of the suite file "
        f"(${CONFIG_ENV}, else ./{CONFIG_FILE_NAME}), else {setting.default.as_posix()}."
    )


store_option = click.option(
    "--store",
    "store_path",
    type=StoreParam(),
    default=None,
    help="Result store: a DuckDB file, or a postgresql:// URL for a shared store. " + storage_default_help(STORE),
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
            with fewer_collections():  # a one-shot process: see goldeneval.core.collector
                return super().invoke(ctx)
        except KeyboardInterrupt:
            click.echo("goldeneval: interrupted", err=True)
            ctx.exit(int(ExitCode.INTERRUPTED))
        except GoldenEvalError as exc:  # raised before a command's guarded action: a bad $GOLDENEVAL_STORE
            return run_guarded(partial(reraise, exc))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """The console command runs under :mod:`goldeneval.cli.supervisor`, so a plug-in that
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


def finite(_ctx: click.Context, param: click.Parameter, value: float | None) -> float | None:
    """Click's ranges let NaN through (every comparison with it is false)."""
    if value is not None and not math.isfinite(value):
        raise click.BadParameter(f"{value} is not a finite number")
    return value


def series_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    try:
        return check_series_name(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
