"""The reference pages in docs/reference/ are generated from the code and must match it.

Each page holds cog blocks that call docs/generate.py.  Here cog runs on each page in check
mode, exactly as ``bash scripts/docs.sh --check`` does: a page that no longer matches what
the code generates (a new option, a renamed column, a new JSON key) fails, naming the page
and the command that regenerates it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "docs" / "reference"
PAGES = ("cli.md", "dagster.md", "json-output.md", "metrics.md", "store.md", "suite.md")
REGENERATE = "bash scripts/docs.sh"


def cog_check(page: Path) -> subprocess.CompletedProcess[str]:
    """``cog --check -I docs PAGE`` from the project folder, as scripts/docs.sh runs it."""
    return subprocess.run(
        [sys.executable, "-m", "cogapp", "--check", "-I", "docs", str(page.relative_to(ROOT))],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_reference_folder_holds_exactly_the_generated_pages() -> None:
    assert sorted(path.name for path in REFERENCE.glob("*.md")) == sorted(PAGES)


@pytest.mark.parametrize("name", PAGES)
def test_every_reference_page_is_generated_by_a_cog_block(name: str) -> None:
    text = (REFERENCE / name).read_text(encoding="utf-8")
    assert "<!-- [[[cog" in text and "import generate" in text and "<!-- [[[end]]] -->" in text


@pytest.mark.slow  # cog runs docs/generate.py in a child process per page: 2-5 s each; CI runs it
@pytest.mark.parametrize("name", PAGES)
def test_the_reference_page_matches_what_the_code_generates(name: str) -> None:
    result = cog_check(REFERENCE / name)
    if result.returncode != 0:
        pytest.fail(
            f"docs/reference/{name} does not match the code (cog exited {result.returncode}); "
            f"regenerate it with `{REGENERATE}` and commit the page.\n{result.stdout}{result.stderr}"
        )


def test_the_docs_script_regenerates_every_reference_page() -> None:
    script = (ROOT / "scripts" / "docs.sh").read_text(encoding="utf-8")
    assert ".venv/bin/cog" in script and "-I docs docs/reference/*.md" in script
