"""Docs that stay true: every command is documented, every exit code too, the metric table
lists the registry, and every link and module path the docs name exists.

The README keeps the command list and the exit codes; the manual lives under docs/ (guides
by hand, reference pages generated from the code: see tests/test_docs_generated.py)."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import click
import pytest

from goldeneval.cli import ExitCode, main
from goldeneval.retrieval.metrics import METRIC_KINDS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
DOCS = ROOT / "docs"
METRICS_PAGE = (DOCS / "reference" / "metrics.md").read_text(encoding="utf-8")
CLI_PAGE = (DOCS / "reference" / "cli.md").read_text(encoding="utf-8")
PAGES = [ROOT / "README.md", ROOT / "CHANGELOG.md", *sorted(DOCS.rglob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MODULE_PATH = re.compile(r"`(goldeneval(?:\.[A-Za-z_][A-Za-z0-9_]*){2,})(?:\(\))?`")
"""A dotted path of three or more parts in backticks (two-part names such as
``goldeneval.lexical`` are registered ids and entry-point groups, not modules)."""
FILE_PATH = re.compile(r"`((?:goldeneval|tests|scripts|benchmarks|pipelines|assets|resources|deploy|docs)/[^`\s<>]*)`")
"""A path of the project in backticks, such as ``tests/test_metrics_crosscheck.py`` (a ``*`` globs)."""


def command_at(path: tuple[str, ...]) -> click.Command:
    """The command ``goldeneval PATH...`` runs (the group imports a command on first use)."""
    command: click.Command = main
    for name in path:
        assert isinstance(command, click.Group)
        found = command.get_command(click.Context(command), name)
        assert found is not None, name
        command = found
    return command


def subcommands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = []
    for name in group.list_commands(click.Context(group)):
        command = command_at((*prefix, name))
        found.append((*prefix, name))
        if isinstance(command, click.Group):
            found += subcommands(command, (*prefix, name))
    return found


def slug(heading: str) -> str:
    """GitHub's anchor of a Markdown heading."""
    text = heading.strip().lower().replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return {slug(line.lstrip("#")) for line in text.splitlines() if line.startswith("#")}


def local_links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.DOTALL)
    return [target for target in LINK.findall(text) if "://" not in target and not target.startswith("mailto:")]


@pytest.mark.parametrize("name", main.list_commands(click.Context(main)))
def test_every_command_has_help_and_a_place_in_the_readme(name: str) -> None:
    command = command_at((name,))
    assert (command.help or "").strip(), f"goldeneval {name} has no help text"
    assert f"goldeneval {name}" in README, f"README.md never mentions `goldeneval {name}`"


@pytest.mark.parametrize("path", subcommands(main), ids=" ".join)
def test_every_command_and_subcommand_has_help_and_a_section_in_the_cli_reference(path: tuple[str, ...]) -> None:
    group = command_at(path)
    title = " ".join(("goldeneval", *path))
    assert (group.help or "").strip(), f"{title} has no help text"
    assert f"\n## {title}\n" in CLI_PAGE, f"docs/reference/cli.md has no section `## {title}`"


@pytest.mark.parametrize("code", list(ExitCode), ids=lambda c: c.name)
def test_every_exit_code_is_in_the_readme_table(code: ExitCode) -> None:
    assert f"\n| {int(code)} | " in README


def test_the_metrics_reference_table_lists_the_registry() -> None:
    """Each row of the metric reference's table is one registry entry, in registry order."""
    table = METRICS_PAGE.split("<!-- metrics-table")[1].split("<!-- end metrics-table -->")[0]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == len(METRIC_KINDS)
    for row, kind in zip(rows, METRIC_KINDS.values(), strict=True):
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        name = f"`{kind.key}@k`" if kind.takes_cutoff else f"`{kind.key}`"
        relevance = "graded" if kind.graded else "binary"
        assert cells == [name, kind.label, relevance, kind.definition, f"`{kind.trec_eval}`", kind.citation]


def test_the_retrieval_help_names_every_metric_kind() -> None:
    options = {flag: param for param in command_at(("retrieval",)).params for flag in param.opts}
    help_text = getattr(options["--metrics"], "help", None) or ""
    for kind in METRIC_KINDS.values():
        assert kind.key in help_text, kind.key


def test_the_readme_is_short_and_keeps_the_two_set_up_commands() -> None:
    assert len(README.splitlines()) < 250
    assert "bash scripts/main.sh" in README and "bash scripts/test.sh" in README


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_local_link_of_a_page_points_to_a_file_and_heading_that_exist(page: Path) -> None:
    broken = []
    for target in local_links(page):
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target} (no file {linked.relative_to(ROOT) if linked.is_relative_to(ROOT) else linked})")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target} (no heading #{anchor} in {linked.relative_to(ROOT)})")
    assert broken == [], f"{page.relative_to(ROOT)}: broken links: {broken}"


def resolves(dotted: str) -> bool:
    """Whether ``dotted`` is a module, or an attribute of one (a class, a function, a method)."""
    parts = dotted.split(".")
    for split in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:split]))
        except ImportError:
            continue
        for name in parts[split:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "CHANGELOG.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_module_path_a_page_names_exists(page: Path) -> None:
    """The changelog is left out: it names modules as they were when each change was made."""
    named = sorted(set(MODULE_PATH.findall(page.read_text(encoding="utf-8"))))
    assert [dotted for dotted in named if not resolves(dotted)] == [], page.relative_to(ROOT)


@pytest.mark.parametrize("page", [p for p in PAGES if p.name != "CHANGELOG.md"], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_project_file_a_page_names_exists(page: Path) -> None:
    named = sorted(set(FILE_PATH.findall(page.read_text(encoding="utf-8"))))
    assert [path for path in named if not any(ROOT.glob(path.rstrip("/")))] == [], page.relative_to(ROOT)
