"""What a reviewer gets besides the exit code: ``--summary-md FILE``, ``--junit FILE`` and
``--report FILE``, declared once for ``retrieval``, ``answers``, ``prompts`` and ``compare``.

Each file is rendered from one :class:`~goldeneval.report.model.RunComparison`, built
around the verdict the command has just made (never a second decision), and written whole
or not at all (:mod:`goldeneval.report.files`).  Paths are checked before anything is
evaluated (a folder, or a path below a file, is bad usage: exit 2); a file that still cannot be
written at the end (a full disk) is one error line, the others are written all the same, and
the command exits 3 unless the gate already chose another failing code: the run is stored.
The report modules are imported only when a file is asked for, so a run without these flags
costs nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

import click

from goldeneval.cli.declared import Decorator
from goldeneval.cli.options import bundled_options

if TYPE_CHECKING:
    from goldeneval.report.model import RunComparison

__all__ = ["DEFAULT_SUMMARY_LIMIT", "CiOutputs", "Written", "ci_output_options"]

DEFAULT_SUMMARY_LIMIT = 20
"""Newly failing questions a Markdown summary lists by default."""


@dataclass(frozen=True)
class CiOutputs:
    """The output files a command was asked for (None: not asked)."""

    summary_md: Path | None
    summary_limit: int
    junit: Path | None
    report: Path | None

    @property
    def wanted(self) -> bool:
        return any(path is not None for path in (self.summary_md, self.junit, self.report))

    def paths(self) -> list[tuple[str, Path]]:
        return [
            (flag, path)
            for flag, path in (("--summary-md", self.summary_md), ("--junit", self.junit), ("--report", self.report))
            if path is not None
        ]

    def check(self) -> None:
        """Refuse, before anything is evaluated or stored, an output path no file can be
        written to (a folder, a path below a file, an unwritable folder): bad usage, exit 2."""
        from goldeneval.report.files import OutputFileError, check_output_path

        for flag, path in self.paths():
            try:
                check_output_path(path)
            except OutputFileError as exc:
                raise click.BadParameter(str(exc), param_hint=flag) from None

    def write(self, comparison: Callable[[], RunComparison]) -> Written:
        """Write each file asked for from the comparison (built once, only when one is asked
        for).  A file that cannot be written does not stop the others: each is one line of
        :class:`Written`."""
        if not self.wanted:
            return Written()
        compared = comparison()
        from goldeneval.report.files import OutputFileError
        from goldeneval.report.html import write_report
        from goldeneval.report.junit import write_junit
        from goldeneval.report.markdown import write_summary_md

        writers: dict[str, tuple[str, Callable[[Path], object]]] = {
            "--summary-md": ("the Markdown summary", lambda p: write_summary_md(compared, p, self.summary_limit)),
            "--junit": ("JUnit XML", lambda p: write_junit(compared, p)),
            "--report": ("the HTML report", lambda p: write_report(compared, p)),
        }
        done = Written()
        for flag, path in self.paths():
            what, write = writers[flag]
            try:
                write(path)
            except OutputFileError as exc:
                done.failed.append(f"{flag}: {exc}")
            else:
                done.written.append(f"wrote {what} to {path}")
        return done


@dataclass
class Written:
    """What :meth:`CiOutputs.write` wrote, and what it could not (one line each)."""

    written: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)

    def echo(self) -> None:
        for line in self.written:
            click.echo(f"goldeneval: {line}", err=True)
        for line in self.failed:
            click.echo(f"goldeneval: error: {line}", err=True)


_FILE = click.Path(dir_okay=False, writable=True, path_type=Path)


def ci_output_options(command: Callable[..., None]) -> Callable[..., None]:
    """Add ``--summary-md``, ``--summary-limit``, ``--junit`` and ``--report``, received as ``outputs``."""
    options: list[Decorator] = [
        click.option(
            "--summary-md",
            type=_FILE,
            default=None,
            help="Write a Markdown summary (verdict, rates with changes and p-values, the newly failing "
            "questions with their text and top documents, privacy permitting): for $GITHUB_STEP_SUMMARY "
            "or a pull-request comment.",
        ),
        click.option(
            "--summary-limit",
            type=click.IntRange(min=0),
            default=DEFAULT_SUMMARY_LIMIT,
            show_default=True,
            help="Newly failing questions the Markdown summary lists.",
        ),
        click.option(
            "--junit",
            type=_FILE,
            default=None,
            help="Write JUnit XML: one test case per question (failed when newly failing against the "
            "baseline) and one for the gate, the rates as properties.",
        ),
        click.option(
            "--report",
            type=_FILE,
            default=None,
            help="Write the self-contained HTML report of the comparison (opens offline).",
        ),
    ]
    names = [field.name for field in fields(CiOutputs)]
    return bundled_options(options, names, _checked, "outputs")(command)


def _checked(**values: object) -> CiOutputs:
    """The outputs asked for, their paths checked before the command does anything."""
    outputs = CiOutputs(**values)  # type: ignore[arg-type]
    outputs.check()
    return outputs
