"""What a reviewer gets besides the exit code: ``--summary-md FILE``, ``--junit FILE`` and
``--report FILE``, declared once for ``retrieval``, ``answers``, ``prompts`` and ``compare``.

Each file is rendered from one :class:`~goldeneval.report.comparison.RunComparison`, built
around the verdict the command has just made (never a second decision), and written whole
or not at all.  The report modules are imported only when a file is asked for, so a run
without these flags costs nothing more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING

import click

from goldeneval.cli.declared import Decorator
from goldeneval.cli.options import bundled_options
from goldeneval.core.errors import InputError

if TYPE_CHECKING:
    from goldeneval.report.comparison import RunComparison

__all__ = ["DEFAULT_SUMMARY_LIMIT", "CiOutputs", "ci_output_options"]

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

    def write(self, comparison: Callable[[], RunComparison]) -> list[str]:
        """Write each file asked for from the comparison (built once, only when one is asked
        for); returns one line per file written, for stderr."""
        if not self.wanted:
            return []
        compared = comparison()
        try:
            return self._written(compared)
        except OSError as exc:
            raise InputError(f"cannot write {exc.filename or 'an output file'}: {exc.strerror or exc}") from None

    def _written(self, compared: RunComparison) -> list[str]:
        written = []
        if self.summary_md is not None:
            from goldeneval.report.markdown import write_summary_md

            write_summary_md(compared, self.summary_md, self.summary_limit)
            written.append(f"wrote the Markdown summary to {self.summary_md}")
        if self.junit is not None:
            from goldeneval.report.junit import write_junit

            write_junit(compared, self.junit)
            written.append(f"wrote JUnit XML to {self.junit}")
        if self.report is not None:
            from goldeneval.report.html import write_report

            write_report(compared, self.report)
            written.append(f"wrote the HTML report to {self.report}")
        return written


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
    return bundled_options(options, names, CiOutputs, "outputs")(command)
