"""Where sets come from (folders, GOLDENEVAL_SETS_PATH, entry points), how a --set reference
resolves, and how the CLI reports a set it cannot load."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

import goldeneval.core.sets
from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import DuplicateIdError, GoldenSetError, InputError
from goldeneval.retrieval.golden import load_golden_set
from goldeneval.retrieval.sets import SETS_PATH_ENV, GoldenSetRegistry, resolve_golden_set

WriteSet = Callable[..., Path]


def a_set(set_id: str) -> dict[str, Any]:
    return {
        "id": set_id,
        "questions": [{"id": "q1", "text": "How much is a child ticket?", "form": "MATCH", "expected": ["a"]}],
    }


@pytest.fixture
def no_installed_set_providers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hide the installed ``goldeneval.golden_question_sets`` entry points: only the test's sets count."""
    monkeypatch.setattr(goldeneval.core.sets, "entry_points", lambda group: [])


# --------------------------------------------------------------------------- registry


def test_two_files_declaring_one_set_id_fail_naming_both_files(write_set: WriteSet, tmp_path: Path) -> None:
    first = write_set("sets/a.yaml", a_set("fares"))
    second = write_set("sets/nested/b.json", a_set("fares"))

    with pytest.raises(DuplicateIdError) as caught:
        GoldenSetRegistry.discover([tmp_path / "sets"], include_entry_points=False)

    assert str(caught.value) == (f"golden question set id 'fares' is declared twice: in {first} and in {second}")


def test_a_provider_and_a_file_declaring_one_set_id_fail_naming_both(write_set: WriteSet, tmp_path: Path) -> None:
    path = write_set("sets/fares.yaml", a_set("fares"))
    registry = GoldenSetRegistry()
    registry.add_provider("team.fares", lambda: [load_golden_set(path)], "team_sets:provide")

    with pytest.raises(DuplicateIdError) as caught:
        registry.add_folder(tmp_path / "sets")

    assert str(caught.value) == (
        "golden question set id 'fares' is declared twice: "
        f"in entry point 'team.fares' (team_sets:provide) and in {path}"
    )


def test_a_folder_registers_only_set_files(write_set: WriteSet, tmp_path: Path) -> None:
    write_set("sets/fares.yaml", a_set("fares"))
    write_set("sets/README.md", "# Our sets\n")

    registry = GoldenSetRegistry.discover([tmp_path / "sets"], include_entry_points=False)

    assert registry.ids() == ["fares"]


def test_folders_in_the_environment_variable_are_registered(
    write_set: WriteSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write_set("one/fares.yaml", a_set("fares"))
    write_set("two/permits.json", a_set("permits"))
    monkeypatch.setenv(SETS_PATH_ENV, f"{tmp_path / 'one'}{os.pathsep}{tmp_path / 'two'}")

    registry = GoldenSetRegistry.discover(include_entry_points=False)

    assert registry.ids() == ["fares", "permits"]


def test_a_missing_folder_in_the_environment_variable_fails_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(SETS_PATH_ENV, str(tmp_path / "absent"))

    with pytest.raises(InputError) as caught:
        GoldenSetRegistry.discover(include_entry_points=False)

    assert str(caught.value) == f"golden set folder {str(tmp_path / 'absent')!r} does not exist"


def test_discovery_includes_the_bundled_sample_from_its_entry_point() -> None:
    assert "transit-sample" in GoldenSetRegistry.discover().ids()


def test_the_bundled_sample_names_its_entry_point_as_its_source() -> None:
    registry = GoldenSetRegistry.discover()

    assert registry.source("transit-sample") == (
        "entry point 'goldeneval.sample' (goldeneval.sample:golden_question_sets)"
    )


# --------------------------------------------------------------------------- resolving --set


def test_a_reference_with_a_set_suffix_resolves_as_a_file(write_set: WriteSet) -> None:
    path = write_set("elsewhere/fares.yaml", a_set("fares"))

    assert resolve_golden_set(str(path)) == load_golden_set(path)


def test_a_missing_set_file_fails_as_a_missing_file_not_as_an_unknown_id(tmp_path: Path) -> None:
    path = tmp_path / "absent.yaml"

    with pytest.raises(GoldenSetError) as caught:
        resolve_golden_set(str(path))

    assert str(caught.value) == f"{path}: file not found"


@pytest.mark.usefixtures("no_installed_set_providers")
def test_a_reference_that_is_not_a_file_resolves_as_a_registered_id(write_set: WriteSet, tmp_path: Path) -> None:
    path = write_set("sets/fares.yaml", a_set("fares"))

    assert resolve_golden_set("fares", [tmp_path / "sets"]) == load_golden_set(path)


@pytest.mark.usefixtures("no_installed_set_providers")
def test_an_unknown_id_fails_listing_the_known_ids(write_set: WriteSet, tmp_path: Path) -> None:
    write_set("sets/fares.yaml", a_set("fares"))
    write_set("sets/permits.yaml", a_set("permits"))

    with pytest.raises(InputError) as caught:
        resolve_golden_set("fairs", [tmp_path / "sets"])

    assert str(caught.value) == (
        "unknown golden question set 'fairs': not a file, and no registered set has that id (known: fares, permits)"
    )


def test_a_beir_folder_resolves_to_its_judged_queries(tmp_path: Path) -> None:
    folder = tmp_path / "tinyfact"
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text('{"_id": "d1", "title": "Fares", "text": "Child fares."}\n')
    (folder / "queries.jsonl").write_text('{"_id": "q1", "text": "child fares"}\n')
    (folder / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\n")

    golden_set = resolve_golden_set(str(folder), beir_split="dev")

    assert (golden_set.id, [q.id for q in golden_set.questions]) == ("beir-tinyfact-dev", ["q1"])


# --------------------------------------------------------------------------- the CLI edge


@pytest.fixture
def bad_set_command(write_set: WriteSet, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """``goldeneval retrieval`` arguments whose set file has an unknown form."""
    monkeypatch.chdir(tmp_path)
    bad = a_set("fares")
    bad["questions"][0]["form"] = "MAYBE"
    path = write_set("bad.yaml", bad)
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "child-fares.md").write_text("# Child fares\nChildren pay half.\n")
    return [
        "retrieval",
        "--set",
        str(path),
        "--retriever",
        "goldeneval.lexical",
        "--store",
        str(tmp_path / "s.duckdb"),
        "--corpus",
        str(tmp_path / "corpus"),
    ]


@pytest.fixture
def bad_set_result(bad_set_command: list[str]) -> Result:
    return CliRunner().invoke(main, bad_set_command)


def test_a_bad_set_file_exits_with_the_invalid_input_code(bad_set_result: Result) -> None:
    assert bad_set_result.exit_code == ExitCode.INVALID_INPUT.value == 3


def test_a_bad_set_file_prints_exactly_one_error_line(bad_set_result: Result, tmp_path: Path) -> None:
    assert bad_set_result.stderr == (
        f"goldeneval: error: {tmp_path / 'bad.yaml'}: question #1 (id 'q1'): field 'form': "
        "Input should be 'MATCH' or 'GAP' (got 'MAYBE')\n"
    )


def test_a_bad_set_file_prints_nothing_on_stdout(bad_set_result: Result) -> None:
    assert bad_set_result.stdout == ""


def test_a_bad_set_file_creates_no_store(bad_set_result: Result, tmp_path: Path) -> None:
    assert bad_set_result.exit_code != 0
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.slow  # a real goldeneval process
def test_a_real_process_reports_a_bad_set_without_a_traceback(bad_set_command: list[str], tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-m", "goldeneval.cli", *bad_set_command],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )

    assert (process.returncode, "Traceback" in process.stderr) == (3, False), process.stderr
