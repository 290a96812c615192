"""`goldeneval retrieval` and `goldeneval runs` end to end: real files, a real store, and a
retriever loaded by import path, exactly as a user's plugin would be."""

from __future__ import annotations

import json
import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import ExitCode, main
from goldeneval.store import ResultStore

PLUGIN = textwrap.dedent(
    """
    import json
    from pathlib import Path

    class FixedRankings:
        '''Answers each question text with the ranking a JSON file gives for it.'''

        def __init__(self, rankings):
            self.rankings = rankings

        def retrieve(self, question, limit):
            ranking = self.rankings[question]
            if ranking == "raise":
                raise ConnectionError("backend unreachable")
            return ranking[:limit]

    def build(context):
        return FixedRankings(json.loads(Path(context.options["rankings"]).read_text()))
    """
)

QUESTIONS = [
    {"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"], "hard_class": "normal"},
    {"id": "q2", "text": "beta", "form": "GAP", "expected": ["b"], "hard_class": "prose-free"},
    {"id": "q3", "text": "gamma", "form": "GAP", "expected": [], "hard_class": None},
]
GOOD = {"alpha": ["a#1", "a#2", "b"], "beta": ["b", "a"], "gamma": []}
WORSE = {"alpha": ["b", "a"], "beta": ["a", "c", "d", "b"], "gamma": []}


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "fixed_rankings_plugin.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    (tmp_path / "set.yaml").write_text(yaml.safe_dump({"id": "tiny", "questions": QUESTIONS}))
    return tmp_path


def evaluate(workspace: Path, rankings: Mapping[str, object], *extra: str) -> Result:
    path = workspace / "rankings.json"
    path.write_text(json.dumps(rankings))
    args = [
        "retrieval",
        "--set",
        str(workspace / "set.yaml"),
        "--retriever",
        "fixed_rankings_plugin:build",
        "--option",
        f"rankings={path}",
        "--store",
        str(workspace / "results.duckdb"),
        "--no-progress",
        *extra,
    ]
    return CliRunner().invoke(main, args)


def test_a_run_prints_questions_rates_and_both_breakdowns(workspace: Path) -> None:
    result = evaluate(workspace, GOOD)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "goldeneval retrieval: set 'tiny', retriever 'fixed_rankings_plugin:build'"
    assert any(line.split()[:5] == ["q1", "MATCH", "normal", "yes", "yes"] for line in lines)
    assert any(line.split()[:4] == ["q3", "GAP", "yes", "yes"] for line in lines)
    for heading in ("Overall:", "By form:", "By hard class:"):
        assert heading in lines
    assert any(line.split() == ["all", "3", "3", "0", "1.000", "1.000"] for line in lines)
    assert any(line.split() == ["prose-free", "1", "1", "0", "1.000", "1.000"] for line in lines)
    assert "Regression verdict: baseline: no earlier complete run: this run is the baseline" in lines


def test_a_run_is_stored_with_top1_as_pass_rate_and_top3_as_mean_score(workspace: Path) -> None:
    evaluate(workspace, WORSE)
    [stored] = ResultStore(workspace / "results.duckdb").list_runs()
    assert (stored.set_id, stored.grader, stored.status) == ("tiny", "retrieval_hit_rate", "complete")
    # WORSE: q1 top-1 miss, top-3 hit; q2 miss, miss; q3 hit, hit.
    assert (stored.pass_rate, stored.mean_score) == pytest.approx((1 / 3, 2 / 3))


def test_a_second_identical_run_passes_the_regression_gate(workspace: Path) -> None:
    evaluate(workspace, GOOD)
    result = evaluate(workspace, GOOD, "--fail-on-regression")
    assert result.exit_code == ExitCode.OK
    assert (
        "Regression verdict: pass: within thresholds: top-1 hit rate held 1.000 -> 1.000; "
        "top-3 hit rate held 1.000 -> 1.000"
    ) in result.output


def test_a_regression_fails_the_gate_and_names_the_rate(workspace: Path) -> None:
    evaluate(workspace, GOOD)
    result = evaluate(workspace, WORSE, "--fail-on-regression")
    assert result.exit_code == ExitCode.REGRESSION
    assert (
        "Regression verdict: regression: top-1 hit rate fell 1.000 -> 0.333 (-0.667, allowed -0.100); "
        "top-3 hit rate fell 1.000 -> 0.667 (-0.333, allowed -0.100)"
    ) in result.output


def test_a_regression_without_the_flag_exits_zero(workspace: Path) -> None:
    evaluate(workspace, GOOD)
    assert evaluate(workspace, WORSE).exit_code == ExitCode.OK


def test_thresholds_are_configurable(workspace: Path) -> None:
    evaluate(workspace, GOOD)
    result = evaluate(
        workspace, WORSE, "--fail-on-regression", "--max-top1-drop", "0.7", "--max-top3-drop", "0.4"
    )
    assert result.exit_code == ExitCode.OK


def test_an_incomplete_run_is_stored_and_fails_the_gate(workspace: Path) -> None:
    result = evaluate(workspace, {**GOOD, "beta": "raise"}, "--fail-on-regression")
    assert result.exit_code == ExitCode.INCOMPLETE
    assert "ERROR: ConnectionError: backend unreachable" in result.output
    [stored] = ResultStore(workspace / "results.duckdb").list_runs()
    assert (stored.status, stored.error_count, stored.pass_rate) == ("incomplete", 1, 1.0)


def test_json_output_is_machine_readable(workspace: Path) -> None:
    result = evaluate(workspace, GOOD, "--format", "json")
    document = json.loads(result.output)
    assert document["format_version"] == 1
    assert document["run"]["status"] == "complete"
    assert document["protocol"] == {
        "revision": "retrieval-hit-rate/v1",
        "top_k": 3,
        "overfetch_multiplier": 10,
        "hit_cutoffs": [1, 3, 5, 10],
    }
    assert document["questions"][0]["documents"] == ["a", "b"]
    assert document["aggregates"]["by_form"]["GAP"]["questions"] == 2
    assert document["verdict"]["status"] == "baseline"


def test_runs_lists_stored_runs_newest_first(workspace: Path) -> None:
    evaluate(workspace, GOOD)
    evaluate(workspace, WORSE)
    result = CliRunner().invoke(
        main, ["runs", "--store", str(workspace / "results.duckdb"), "--format", "json"]
    )
    rates = [r["top1_rate"] for r in json.loads(result.output)]
    assert rates == pytest.approx([1 / 3, 1.0])


def test_an_unknown_retriever_is_invalid_input_and_stores_nothing(workspace: Path) -> None:
    result = CliRunner().invoke(
        main,
        [
            "retrieval",
            "--set",
            str(workspace / "set.yaml"),
            "--retriever",
            "nope",
            "--store",
            str(workspace / "s.duckdb"),
        ],
    )
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr.startswith("goldeneval: error: unknown retriever 'nope': not a registered id")
    assert not (workspace / "s.duckdb").exists()


def test_an_unusable_store_exits_with_the_store_code(workspace: Path) -> None:
    (workspace / "blocked").write_text("a file, not a folder")
    result = evaluate(workspace, GOOD, "--store", str(workspace / "blocked" / "results.duckdb"))
    assert result.exit_code == ExitCode.STORE
    assert "cannot create its folder" in result.stderr
