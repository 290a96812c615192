"""Docs that stay true: every command is documented, every exit code too."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeneval.cli import ExitCode, main
from goldeneval.retrieval.metrics import METRIC_KINDS

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_has_help_and_a_place_in_the_readme(name: str) -> None:
    command = main.commands[name]
    assert (command.help or "").strip(), f"goldeneval {name} has no help text"
    assert f"goldeneval {name}" in README, f"README.md never mentions `goldeneval {name}`"


@pytest.mark.parametrize("code", list(ExitCode), ids=lambda c: c.name)
def test_every_exit_code_is_in_the_readme_table(code: ExitCode) -> None:
    assert f"\n| {int(code)} | " in README


def test_the_readme_metrics_table_lists_the_registry() -> None:
    """Each row of the README's metrics table is one registry entry, in registry order."""
    table = README.split("<!-- metrics-table")[1].split("<!-- end metrics-table -->")[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == len(METRIC_KINDS)
    for row, kind in zip(rows, METRIC_KINDS.values(), strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        name = f"`{kind.key}@k`" if kind.takes_cutoff else f"`{kind.key}`"
        relevance = "graded" if kind.graded else "binary"
        assert cells == [name, kind.label, relevance, kind.definition, f"`{kind.trec_eval}`", kind.citation]


def test_the_retrieval_help_names_every_metric_kind() -> None:
    options = {param.name: param for param in main.commands["retrieval"].params}
    help_text = options["metric_names"].help or ""
    for kind in METRIC_KINDS.values():
        assert kind.key in help_text, kind.key
