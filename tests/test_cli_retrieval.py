"""`goldeneval retrieval` and `goldeneval runs` end to end: real files, a real store, and a
retriever loaded by import path, exactly as a user's plugin would be."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import ExitCode, main
from goldeneval.store import ResultStore
from tests.conftest import CliWorkspace

GOOD = {"alpha": ["a#1", "a#2", "b"], "beta": ["b", "a"], "gamma": []}
WORSE = {"alpha": ["b", "a"], "beta": ["a", "c", "d", "b"], "gamma": []}


@pytest.fixture
def workspace(cli_workspace: CliWorkspace) -> CliWorkspace:
    return cli_workspace


def evaluate(workspace: CliWorkspace, rankings: Mapping[str, object], *extra: str) -> Result:
    return workspace.evaluate(rankings, *extra)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_prints_questions_rates_and_both_breakdowns(workspace: CliWorkspace) -> None:
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
    assert (
        "Regression verdict: baseline: first complete run of series 'fixed_rankings_plugin:build' on set 'tiny': "
        "this run is the baseline"
    ) in lines


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_is_stored_with_top1_as_pass_rate_and_top3_as_mean_score(workspace: CliWorkspace) -> None:
    evaluate(workspace, WORSE)
    [stored] = ResultStore(workspace.store).list_runs()
    assert (stored.set_id, stored.grader, stored.status) == ("tiny", "retrieval_hit_rate", "complete")
    # WORSE: q1 top-1 miss, top-3 hit; q2 miss, miss; q3 hit, hit.
    assert (stored.pass_rate, stored.mean_score) == pytest.approx((1 / 3, 2 / 3))


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_second_identical_run_passes_the_regression_gate(workspace: CliWorkspace) -> None:
    evaluate(workspace, GOOD)
    result = evaluate(workspace, GOOD, "--fail-on-regression")
    assert result.exit_code == ExitCode.OK
    assert (
        "Regression verdict: pass: within thresholds: top-1 hit rate held 1.000 -> 1.000; "
        "top-3 hit rate held 1.000 -> 1.000"
    ) in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_regression_fails_the_gate_and_names_the_rate(workspace: CliWorkspace) -> None:
    evaluate(workspace, GOOD)
    result = evaluate(workspace, WORSE, "--fail-on-regression")
    assert result.exit_code == ExitCode.REGRESSION
    assert (
        "Regression verdict: regression: top-1 hit rate fell 1.000 -> 0.333 (-0.667, allowed -0.100); "
        "top-3 hit rate fell 1.000 -> 0.667 (-0.333, allowed -0.100)"
    ) in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_regression_without_the_flag_exits_zero(workspace: CliWorkspace) -> None:
    evaluate(workspace, GOOD)
    assert evaluate(workspace, WORSE).exit_code == ExitCode.OK


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_thresholds_are_configurable(workspace: CliWorkspace) -> None:
    evaluate(workspace, GOOD)
    result = evaluate(workspace, WORSE, "--fail-on-regression", "--max-top1-drop", "0.7", "--max-top3-drop", "0.4")
    assert result.exit_code == ExitCode.OK


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_incomplete_run_is_stored_and_fails_the_gate(workspace: CliWorkspace) -> None:
    result = evaluate(workspace, {**GOOD, "beta": "raise"}, "--fail-on-regression")
    assert result.exit_code == ExitCode.INCOMPLETE
    assert "ERROR: ConnectionError: backend unreachable" in result.output
    [stored] = ResultStore(workspace.store).list_runs()
    assert (stored.status, stored.error_count, stored.pass_rate) == ("incomplete", 1, 1.0)


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_json_output_is_machine_readable(workspace: CliWorkspace) -> None:
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


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_runs_lists_stored_runs_newest_first(workspace: CliWorkspace) -> None:
    evaluate(workspace, GOOD)
    evaluate(workspace, WORSE)
    result = CliRunner().invoke(main, ["runs", "--store", str(workspace.store), "--format", "json"])
    rates = [r["top1_rate"] for r in json.loads(result.output)]
    assert rates == pytest.approx([1 / 3, 1.0])


def test_an_unknown_retriever_is_invalid_input_and_stores_nothing(workspace: CliWorkspace) -> None:
    result = CliRunner().invoke(
        main,
        [
            "retrieval",
            "--set",
            str(workspace.set_path),
            "--retriever",
            "nope",
            "--store",
            str(workspace.root / "s.duckdb"),
        ],
    )
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr.startswith("goldeneval: error: unknown retriever 'nope': not a registered id")
    assert not (workspace.root / "s.duckdb").exists()


def test_an_unusable_store_exits_with_the_store_code(workspace: CliWorkspace) -> None:
    (workspace.root / "blocked").write_text("a file, not a folder")
    result = evaluate(workspace, GOOD, "--store", str(workspace.root / "blocked" / "results.duckdb"))
    assert result.exit_code == ExitCode.STORE
    assert "cannot create its folder" in result.stderr


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_name_sets_the_series_and_keeps_the_retriever_id(workspace: CliWorkspace) -> None:
    result = evaluate(workspace, GOOD, "--name", "nightly-fixed", "--format", "json")
    run = json.loads(result.output)["run"]
    assert (run["retriever"], run["retriever_id"]) == ("nightly-fixed", "fixed_rankings_plugin:build")
    [stored] = ResultStore(workspace.store).list_runs()
    assert (stored.model, stored.retriever_id) == ("nightly-fixed", "fixed_rankings_plugin:build")


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_two_names_for_one_retriever_are_two_series(workspace: CliWorkspace) -> None:
    evaluate(workspace, GOOD, "--name", "a")
    result = evaluate(workspace, GOOD, "--name", "b", "--format", "json")
    assert json.loads(result.output)["verdict"]["state"] == "baseline"


@pytest.mark.parametrize("name", ["", "has space", "x" * 201], ids=["empty", "whitespace", "too-long"])
def test_a_malformed_name_is_a_usage_error(workspace: CliWorkspace, name: str) -> None:
    result = evaluate(workspace, GOOD, "--name", name)
    assert result.exit_code == 2
    assert "series name" in result.stderr
    assert not workspace.store.exists()


CRASHING_PLUGIN = """
from goldeneval.core.provenance import Provenance


class Fine:
    def retrieve(self, question, limit):
        return []

    def provenance(self):
        raise RuntimeError("provenance backend down\\n" + "x" * 1000)


def build_raises(context):
    raise ValueError("cannot reach the index\\nsecond line")


def build_provenance_raises(context):
    return Fine()
"""


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        pytest.param(
            "build_raises",
            "retriever 'crashing_plugin:build_raises': its factory raised ValueError: "
            "cannot reach the index second line",
            id="factory",
        ),
        pytest.param(
            "build_provenance_raises",
            "crashing_plugin:build_provenance_raises: provenance() raised RuntimeError: provenance backend down x",
            id="provenance",
        ),
    ],
)
def test_a_plugin_that_raises_is_invalid_input_with_one_line_and_nothing_stored(
    workspace: CliWorkspace, monkeypatch: pytest.MonkeyPatch, factory: str, message: str
) -> None:
    (workspace.root / "crashing_plugin.py").write_text(CRASHING_PLUGIN)
    args = ["retrieval", "--set", str(workspace.set_path), "--retriever", f"crashing_plugin:{factory}"]
    result = CliRunner().invoke(main, [*args, "--store", str(workspace.store), "--no-progress"])
    assert result.exit_code == ExitCode.INVALID_INPUT
    [line] = result.stderr.splitlines()
    assert line.startswith(f"goldeneval: error: {message}")
    assert len(line) < 400
    assert not workspace.store.exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_runs_filters_by_series_name_or_retriever_id(workspace: CliWorkspace) -> None:
    evaluate(workspace, GOOD, "--name", "nightly-fixed")
    for value in ("nightly-fixed", "fixed_rankings_plugin:build"):
        listing = CliRunner().invoke(main, ["runs", "--store", str(workspace.store), "--retriever", value])
        assert "nightly-fixed" in listing.output, value


@pytest.mark.parametrize(
    "args",
    [["runs"], ["purge", "--older-than", "30d", "--dry-run"], ["purge", "--older-than", "30d"]],
    ids=["runs", "purge-dry-run", "purge"],
)
def test_reading_commands_on_a_store_that_does_not_exist_create_nothing(tmp_path: Path, args: list[str]) -> None:
    store = tmp_path / "nowhere" / "results.duckdb"
    result = CliRunner().invoke(main, [*args, "--store", str(store)])
    assert result.exit_code == ExitCode.OK, result.output
    assert not store.parent.exists()


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--max-top1-drop", "nan"),
        ("--max-top3-drop", "nan"),
        ("--max-p", "nan"),
        ("--timeout", "nan"),
        ("--timeout", "inf"),
        ("--timeout", "1e308"),
    ],
)
def test_a_non_finite_or_absurd_number_is_a_usage_error_naming_its_option(
    workspace: CliWorkspace, option: str, value: str
) -> None:
    result = evaluate(workspace, GOOD, option, value)
    assert result.exit_code == 2
    assert f"Invalid value for '{option}'" in result.stderr
    assert not workspace.store.exists()


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0,3", "hit cutoffs must be whole numbers from 1 to 1000"),
        ("1,1001", "hit cutoffs must be whole numbers from 1 to 1000"),
        ("1,x", "expected comma-separated integers, got '1,x'"),
    ],
    ids=["zero", "too-deep", "not-a-number"],
)
def test_a_bad_hit_cutoff_is_a_usage_error(workspace: CliWorkspace, value: str, message: str) -> None:
    result = evaluate(workspace, GOOD, "--hit-k", value)
    assert result.exit_code == 2
    assert message in result.stderr


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--metrics", "ndcg@10,gmap", "unknown metric 'gmap'"),
        ("--metrics", "recall@0", "cutoff of 'recall@0' must be a whole number from 1 to 1000"),
        ("--metrics", "ndcg", "metric 'ndcg' needs a cutoff"),
        ("--relevance-level", "0", "0 is not in the range x>=1"),
    ],
)
def test_a_bad_metric_or_relevance_level_is_a_usage_error(
    workspace: CliWorkspace, option: str, value: str, message: str
) -> None:
    result = evaluate(workspace, GOOD, option, value)
    assert result.exit_code == 2
    assert message in result.stderr
    assert not workspace.store.exists()


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_hit_at_100_is_exact_and_every_requested_metric_is_reported(workspace: CliWorkspace) -> None:
    """The target at rank 60 of 150: hit@50 misses and hit@100 hits (the evaluator asks deep
    enough instead of reporting hit@30 under those names)."""
    deep = [f"x{i}" for i in range(59)] + ["a"] + [f"y{i}" for i in range(90)]
    rankings = {"alpha": deep, "beta": ["b"], "gamma": []}
    result = evaluate(workspace, rankings, "--hit-k", "50,100", "--metrics", "map@100,rprec", "--format", "json")
    assert result.exit_code == 0, result.stderr
    measurement = json.loads(result.stdout)["measurement"]
    measured = {m["name"]: m["value"] for m in measurement["metrics"]}
    assert measured == {"hit@50": 0.5, "hit@100": 1.0, "map@100": (1 / 60 + 1) / 2, "rprec": 0.5}
    assert (measurement["depth"], measurement["questions"]) == (100, 2)
    assert measurement["no_answer"] == {"count": 1, "ids": ["q3"]}
    assert measurement["short_rankings"] == {"count": 2, "ids": ["q2", "q3"], "shortest": 0}
