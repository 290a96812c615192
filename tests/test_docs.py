"""Docs that stay true: every command is documented, every exit code too."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeneval.cli import ExitCode, main

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(main.commands))
def test_every_command_has_help_and_a_place_in_the_readme(name: str) -> None:
    command = main.commands[name]
    assert (command.help or "").strip(), f"goldeneval {name} has no help text"
    assert f"goldeneval {name}" in README, f"README.md never mentions `goldeneval {name}`"


@pytest.mark.parametrize("code", list(ExitCode), ids=lambda c: c.name)
def test_every_exit_code_is_in_the_readme_table(code: ExitCode) -> None:
    assert f"\n| {int(code)} | " in README
