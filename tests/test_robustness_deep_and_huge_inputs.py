"""Defect 7: inputs that used to end in an internal error (a traceback, then "ended inside a
plug-in") are invalid input: exit 3 and one line naming the file and the field.

A grade of 10**21 (an ``OverflowError`` in the scoring), YAML nested 50,000 deep (a
``RecursionError`` while composing it), a suite file nested 30,000 deep under
``thresholds``, an integer too long for ``int()``, aliases that nest too deep."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.yaml_errors import MAX_DEPTH, describe_yaml_error, load_yaml
from tests.conftest import CliWorkspace

HUGE = 10**21


def _one_line_error(result: object) -> str:
    stderr = result.stderr  # type: ignore[attr-defined]
    assert result.exit_code == ExitCode.INVALID_INPUT, (result.exception, stderr)  # type: ignore[attr-defined]
    assert stderr.count("\n") == 1 and stderr.startswith("goldeneval: error: "), stderr[:2000]
    return str(stderr)


@pytest.mark.parametrize("suffix", [".yaml", ".json", ".jsonl"])
def test_a_huge_grade_is_invalid_input_naming_the_question_and_field(cli_workspace: CliWorkspace, suffix: str) -> None:
    question = {"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"], "grades": {"a": HUGE}}
    set_path = cli_workspace.root / f"graded{suffix}"
    document = question if suffix == ".jsonl" else {"id": "graded", "questions": [question]}
    set_path.write_text(json.dumps(document) + "\n")  # JSON is YAML too
    rankings = cli_workspace.root / "rankings.json"
    rankings.write_text(json.dumps({"alpha": ["a"]}))
    args = ["retrieval", "--set", str(set_path), "--retriever", "fixed_rankings_plugin:build"]
    args += ["--option", f"rankings={rankings}", "--store", str(cli_workspace.store), "--no-progress"]
    assert _one_line_error(CliRunner().invoke(main, args)) == (
        f"goldeneval: error: {set_path}: question #1 (id 'q1'): field 'grades': grade of 'a' must be at most "
        f"1000000 (a relevance grade) (got {{'a': {HUGE}}})\n"
    )
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_set_file_nested_50000_deep_is_invalid_input(cli_workspace: CliWorkspace) -> None:
    depth = 50_000
    cli_workspace.set_path.write_text(
        "id: deep\nquestions:\n  - {id: q1, text: alpha, form: MATCH, expected: [a], hard_class: "
        + "[" * depth
        + "]" * depth
        + "}\n"
    )
    result = cli_workspace.evaluate({"alpha": ["a"]})
    assert _one_line_error(result) == (
        f"goldeneval: error: {cli_workspace.set_path}: unsafe YAML at line 3, column 164: "
        f"nested more than {MAX_DEPTH} levels deep under 'questions.0.hard_class'\n"
    )
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("flow", [True, False], ids=["flow", "block"])
def test_a_suite_file_nested_30000_deep_under_thresholds_is_invalid_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flow: bool
) -> None:
    depth = 30_000 if flow else 500
    suite = tmp_path / "goldeneval.yaml"
    if flow:
        nested = "  slice_max_drop: " + "[" * depth + "]" * depth + "\n"
    else:
        nested = "  slice_max_drop:\n" + "".join("  " * (i + 2) + f"k{i}:\n" for i in range(depth))
    suite.write_text("sets: []\nthresholds:\n" + nested)
    monkeypatch.setenv("GOLDENEVAL_CONFIG", str(suite))
    result = CliRunner().invoke(main, ["runs"])
    line = _one_line_error(result)
    assert line.startswith(f"goldeneval: error: {suite}: unsafe YAML at line ")
    below = "0" if flow else "k0"
    assert line.endswith(f": nested more than {MAX_DEPTH} levels deep under 'thresholds.slice_max_drop.{below}'\n")


def test_an_integer_longer_than_python_converts_is_a_yaml_error_with_its_place(cli_workspace: CliWorkspace) -> None:
    cli_workspace.set_path.write_text(
        "id: s\nquestions:\n  - {id: q1, text: a, form: MATCH, expected: [a], grades: {a: " + "9" * 5000 + "}}\n"
    )
    result = cli_workspace.evaluate({"a": ["a"]})
    assert _one_line_error(result) == (
        f"goldeneval: error: {cli_workspace.set_path}: malformed YAML at line 3, column 63: "
        "an integer of 5000 characters, longer than the 4300 digits Python reads\n"
    )


def test_aliases_count_with_the_depth_they_expand_to() -> None:
    deep = "[" * 60 + "]" * 60
    with pytest.raises(yaml.YAMLError) as caught:
        load_yaml(f"a: &a {deep}\nb: [" + "[" * 50 + "*a" + "]" * 50 + "]\n")
    assert describe_yaml_error(caught.value) == (
        f"unsafe YAML at line 2, column 55: nested more than {MAX_DEPTH} levels deep under 'b.0.0'"
    )


def test_nesting_up_to_the_bound_loads() -> None:
    depth = MAX_DEPTH - 1  # the document's mapping is the first level
    loaded = load_yaml("a: " + "[" * depth + "]" * depth)["a"]
    for _ in range(depth - 1):
        [loaded] = loaded
    assert loaded == []


@pytest.mark.slow  # a real process importing the command line
def test_an_exception_nothing_converted_is_an_internal_error_not_a_plugin_ending_the_process() -> None:
    """What no guard converts (a bug) keeps its traceback, for a bug report, and ends with
    one line that says what it is, instead of blaming a plug-in for ending the process."""
    script = "from goldeneval.cli.supervisor import run_supervised\nrun_supervised(lambda: 1 // 0)\n"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == ExitCode.INVALID_INPUT
    *traceback, line = result.stderr.splitlines()
    assert traceback[0] == "Traceback (most recent call last):"
    assert line == (
        "goldeneval: error: internal error (ZeroDivisionError: integer division or modulo by zero); "
        "nothing partial was stored"
    )
