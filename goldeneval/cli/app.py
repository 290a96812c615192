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

This module holds the group and what every command family shares: the exit codes and the one
conversion of domain errors.  The group knows its commands by name and summary
(:data:`SHARED_COMMANDS`, and each run kind's, :mod:`goldeneval.kinds`) and imports a command's
module only when that command runs or shows its own help, so ``goldeneval --help`` costs click
and nothing of the domain.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from functools import partial
from typing import Any, TypeVar

import click

from goldeneval.cli.supervisor import run_supervised
from goldeneval.core.collector import fewer_collections
from goldeneval.core.errors import GoldenEvalError, InputError, StoreError, printable
from goldeneval.kinds import KindDeclaration, built_in_kinds, declared_kinds

__all__ = ["COMMANDS", "SHARED_COMMANDS", "ExitCode", "LazyCommand", "declared_commands", "fail", "main", "run_guarded"]

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


@dataclass(frozen=True)
class LazyCommand:
    """Where a command is defined (``module:attribute``) and the first paragraph of its help,
    which ``goldeneval --help`` shows without importing the module.
    ``tests/test_startup_imports.py`` holds each summary to the command's own help."""

    target: str
    summary: str

    def load(self) -> click.Command:
        module, _, attribute = self.target.partition(":")
        command = getattr(importlib.import_module(module), attribute)
        if not isinstance(command, click.Command):  # pragma: no cover - a wrong entry in COMMANDS
            raise TypeError(f"{self.target} is not a click command")
        return command


SHARED_COMMANDS: Mapping[str, LazyCommand] = {
    "accept": LazyCommand(
        "goldeneval.cli.store:accept",
        "Accept a stored run as its series' level (baseline: accepted, the nightly's default).",
    ),
    "answers": LazyCommand(
        "goldeneval.cli.answers:answers",
        "Retrieve, answer from the top documents and grade against each question's answer_gist; "
        "store the retrieval run and the answer run beside it, split answer quality by retrieval hit.",
    ),
    "compare": LazyCommand(
        "goldeneval.cli.compare:compare",
        "Compare two stored runs: the gate's verdict, every rate and rank metric with its change, the "
        "paired test and bootstrap interval, the slices, and per question both runs' outcomes and top "
        "documents, newly failing and newly passing.",
    ),
    "draft": LazyCommand(
        "goldeneval.cli.draft:draft",
        "Draft questions from every document of a corpus with a model; forms measured, never trusted.",
    ),
    "export-qrels": LazyCommand(
        "goldeneval.cli.retrieval:export_qrels",
        "Write a golden set as TREC qrels (qid 0 docid grade per expected document, 0 per judged negative).",
    ),
    "judge": LazyCommand(
        "goldeneval.cli.judgments:judge",
        "Judge the pooled documents on a local web page (127.0.0.1); each grade is appended at once.",
    ),
    "judgments": LazyCommand(
        "goldeneval.cli.judgments:judgments_group",
        "Read a judgments file: progress and agreement, or a golden set built from it.",
    ),
    "lint": LazyCommand(
        "goldeneval.cli.lint:lint",
        "Report what a golden set gets wrong that loading it does not catch, one line each.",
    ),
    "pool": LazyCommand(
        "goldeneval.cli.judgments:pool_command",
        "Pool the top documents of retrievers and stored runs into a judgments file (TREC pooling).",
    ),
    "purge": LazyCommand(
        "goldeneval.cli.store:purge",
        "Delete whole runs (store rows and their Parquet table files) older than a duration.",
    ),
    "report": LazyCommand(
        "goldeneval.cli.compare:report",
        "Write a self-contained HTML report of a stored run against an earlier one: the verdict and why, "
        "rates with intervals by form and hard class, the series' trend, and every question with both "
        "rankings side by side. Nothing is stored.",
    ),
    "runs": LazyCommand("goldeneval.cli.store:runs", "List stored runs, newest first."),
    "store": LazyCommand(
        "goldeneval.cli.store:store_group",
        "Maintain result stores: move history between DuckDB files and PostgreSQL databases, and "
        "store the runs kept in the spool when a store could not be written.",
    ),
}
"""The commands that belong to no run kind: the store, comparisons, judgments, sets' tools."""


def kind_commands(kinds: Iterable[KindDeclaration]) -> dict[str, LazyCommand]:
    """The commands the run kinds declare (:attr:`KindDeclaration.commands`), by name; a name
    a shared command has already fails, naming the kind."""
    found: dict[str, LazyCommand] = {}
    for kind in kinds:
        for name, command in kind.commands.items():
            if name in SHARED_COMMANDS:
                raise ValueError(f"run kind {kind.name!r}: command {name!r} is a goldeneval command already")
            found[name] = LazyCommand(command.target, command.summary)
    return found


COMMANDS: Mapping[str, LazyCommand] = {**SHARED_COMMANDS, **kind_commands(built_in_kinds())}
"""Every command of ``goldeneval`` that goldeneval ships, by name: one per command family
module; the commands of kinds other packages declare (:func:`declared_commands`) join them."""


def declared_commands() -> Mapping[str, LazyCommand]:
    """:data:`COMMANDS` and the commands of every declared kind (the entry points are read
    only when a name is not one of goldeneval's own, or for the whole list)."""
    return {**COMMANDS, **kind_commands(declared_kinds())}


class _Command(click.Group):
    """Ctrl-C exits 130, as shells expect, never 1 (the regression code).  A run being
    written when it comes is rolled back whole: the store keeps only complete runs.

    The commands of :data:`COMMANDS` are imported on first use (click's lazy-group pattern)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *declared_commands()})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            known = COMMANDS if cmd_name in COMMANDS else declared_commands()
            if cmd_name in known:
                command = known[cmd_name].load()
                self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's listing, with a command not imported yet described by its summary."""
        names = self.list_commands(ctx)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows = []
        known = declared_commands()
        for name in names:
            loaded = self.commands.get(name)
            if loaded is None:
                rows.append((name, click.Command(name, help=known[name].summary).get_short_help_str(limit)))
            elif not loaded.hidden:
                rows.append((name, loaded.get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)

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
