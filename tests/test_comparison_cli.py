"""Every comparison state of ADR-215 decision 6, driven through the CLI with real stored runs."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from goldeneval.cli import ExitCode
from goldeneval.core.errors import InputError
from goldeneval.retrieval.details import retrieval_details
from goldeneval.store import SCHEMA_VERSION, ResultStore
from tests.conftest import FIXED_QUESTIONS, CliWorkspace

ALL_HIT = {"alpha": ["a"], "beta": ["b"], "gamma": []}
ONE_MISS = {"alpha": ["a"], "beta": ["c"], "gamma": []}
TWO_MISS = {"alpha": ["c"], "beta": ["c"], "gamma": []}
GATE = "--fail-on-regression"
LEGACY_FIXTURE = Path(__file__).parent / "fixtures" / "legacy-schema-v1.duckdb.gz"


def verdict_of(result_output: str) -> dict[str, object]:
    document: dict[str, object] = json.loads(result_output)["verdict"]
    return document


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_first_known_run_is_the_baseline_and_passes_the_gate(cli_workspace: CliWorkspace) -> None:
    result = cli_workspace.evaluate(ALL_HIT, GATE)
    assert result.exit_code == ExitCode.OK
    assert (
        "Regression verdict: baseline: first complete run of series 'fixed_rankings_plugin:build' on set 'tiny': "
        "this run is the baseline"
    ) in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_unchanged_benchmark_is_comparable_and_passes(cli_workspace: CliWorkspace) -> None:
    first = cli_workspace.evaluate(ALL_HIT, "--format", "json")
    result = cli_workspace.evaluate(ALL_HIT, GATE, "--format", "json")
    verdict = verdict_of(result.output)
    assert result.exit_code == ExitCode.OK
    assert (verdict["state"], verdict["status"]) == ("comparable", "pass")
    assert verdict["previous_run_id"] == json.loads(first.output)["run"]["id"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_changed_corpus_is_a_mismatch_without_a_numeric_verdict(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(TWO_MISS, GATE, corpus="rev-2")
    assert result.exit_code == ExitCode.NOT_COMPARABLE
    assert "Regression verdict: mismatch: benchmark differs from the previous run" in result.output
    assert "corpus changed (revision rev-1 -> rev-2); no numeric verdict" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_mismatch_without_the_gate_is_recorded_and_says_why(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(ALL_HIT, corpus="rev-2")
    assert result.exit_code == ExitCode.OK
    assert result.stderr.startswith("Not compared (mismatch): benchmark differs from the previous run")
    assert len(ResultStore(cli_workspace.store).list_runs()) == 2


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_changed_label_is_a_mismatch(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    relabelled = [{**FIXED_QUESTIONS[0], "expected": ["a", "c"]}, *FIXED_QUESTIONS[1:]]
    cli_workspace.write_set(relabelled)
    result = cli_workspace.evaluate(ALL_HIT, GATE, "--format", "json")
    verdict = verdict_of(result.output)
    assert result.exit_code == ExitCode.NOT_COMPARABLE
    assert verdict["state"] == "mismatch"
    assert "labels changed for 1 question: q1; no numeric verdict" in str(verdict["reason"])
    # the corpus revision held: the other two questions are compared, for information only
    informational = verdict["informational"]
    assert isinstance(informational, dict)
    assert (informational["note"], informational["unchanged_questions"]) == ("informational, no numeric verdict", 2)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_another_relevance_level_is_a_mismatch_naming_the_protocol(cli_workspace: CliWorkspace) -> None:
    """Rank metrics at relevance levels 1 and 2 measure different things: never one series."""
    first = cli_workspace.evaluate(ALL_HIT, "--format", "json")
    assert json.loads(first.output)["protocol"]["revision"] == "retrieval-hit-rate/v1"
    result = cli_workspace.evaluate(ALL_HIT, GATE, "--relevance-level", "2", "--format", "json")
    verdict = verdict_of(result.output)
    assert result.exit_code == ExitCode.NOT_COMPARABLE
    assert verdict["state"] == "mismatch"
    assert "scoring protocol changed (retrieval-hit-rate/v1 -> retrieval-hit-rate/v1(relevance_level=2))" in str(
        verdict["reason"]
    )
    # outcomes measured under another protocol: nothing is compared, not even for information
    assert "informational" not in verdict and "benchmark_change" in verdict


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize(("separator", "named"), [("", '""'), ("::", '"::"')])
def test_another_chunk_separator_is_a_mismatch_naming_the_protocol(
    cli_workspace: CliWorkspace, separator: str, named: str
) -> None:
    """Returned ids cut at another separator are other documents (the protocol's step 2): a
    probe saw ``--chunk-separator ''`` compared as comparable and reported as a regression."""
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(ALL_HIT, GATE, "--chunk-separator", separator, "--format", "json")
    document = json.loads(result.output)
    assert document["protocol"]["revision"] == f"retrieval-hit-rate/v1(chunk_separator={named})"
    assert result.exit_code == ExitCode.NOT_COMPARABLE
    assert verdict_of(result.output)["state"] == "mismatch"
    again = cli_workspace.evaluate(ALL_HIT, GATE, "--chunk-separator", separator)
    assert again.exit_code == ExitCode.OK, again.output  # the same separator again: one series


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_changed_answer_gist_keeps_the_benchmark(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    cli_workspace.write_set([{**FIXED_QUESTIONS[0], "answer_gist": "now documented"}, *FIXED_QUESTIONS[1:]])
    assert cli_workspace.evaluate(ALL_HIT, GATE).exit_code == ExitCode.OK


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_changed_model_alone_is_comparable_and_reported_as_the_treatment(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT, model="minilm@sha256-1")
    result = cli_workspace.evaluate(TWO_MISS, GATE, "--format", "json", model="minilm@sha256-2")
    verdict = verdict_of(result.output)
    assert result.exit_code == ExitCode.REGRESSION
    assert (verdict["state"], verdict["status"]) == ("comparable", "regression")
    assert verdict["treatment_change"] == "model_revision minilm@sha256-1 -> minilm@sha256-2"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_without_provenance_is_unknown_and_fails_the_gate(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(ALL_HIT, GATE, corpus=None)
    assert result.exit_code == ExitCode.NOT_COMPARABLE
    assert (
        "Regression verdict: unknown: this run has an unknown benchmark fingerprint: "
        "its retriever declares no corpus_revision (provenance missing)"
    ) in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_provenance_declared_in_configuration_makes_a_run_known(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(ALL_HIT, GATE, "--provenance", "corpus_revision=rev-1", corpus=None)
    assert result.exit_code == ExitCode.OK


def test_a_secret_in_declared_provenance_is_rejected(cli_workspace: CliWorkspace) -> None:
    result = cli_workspace.evaluate(ALL_HIT, "--provenance", "pipeline_identity=https://bob:hunter2@example.org/x")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "provenance field 'pipeline_identity': looks like a secret (a URL with credentials)" in result.stderr
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_incomplete_run_is_unknown_and_exits_with_the_incomplete_code(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate({**ALL_HIT, "beta": "raise"}, GATE)
    assert result.exit_code == ExitCode.INCOMPLETE
    assert "Regression verdict: unknown: this run is incomplete (1 of 3 questions errored)" in result.output


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_best_baseline_catches_drift_that_each_step_allows(cli_workspace: CliWorkspace) -> None:
    # Each step loses one question (0.333 at top-1) within a 0.4 threshold; the best run is 0.667 ahead.
    allow = ("--max-top1-drop", "0.4", "--max-top3-drop", "0.4")
    for rankings in (ALL_HIT, ONE_MISS, TWO_MISS):
        assert cli_workspace.evaluate(rankings, GATE, *allow).exit_code == ExitCode.OK
    drift = cli_workspace.evaluate(TWO_MISS, GATE, *allow, "--baseline", "best")
    assert drift.exit_code == ExitCode.REGRESSION
    assert "top-1 hit rate fell 1.000 -> 0.333" in drift.output


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_pinned_run_is_the_baseline_it_names(cli_workspace: CliWorkspace) -> None:
    pinned = json.loads(cli_workspace.evaluate(ALL_HIT, "--format", "json").output)["run"]["id"]
    cli_workspace.evaluate(ONE_MISS)
    result = cli_workspace.evaluate(ONE_MISS, GATE, "--baseline", f"run:{pinned}", "--format", "json")
    verdict = verdict_of(result.output)
    assert (result.exit_code, verdict["previous_run_id"], verdict["status"]) == (
        ExitCode.REGRESSION,
        pinned,
        "regression",
    )


def test_a_pinned_run_in_a_store_that_does_not_exist_is_invalid_input_and_creates_nothing(
    cli_workspace: CliWorkspace,
) -> None:
    result = cli_workspace.evaluate(ALL_HIT, "--baseline", "run:nope")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == f"goldeneval: error: baseline run 'nope': the store {cli_workspace.store} does not exist\n"
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_an_unknown_pinned_run_is_invalid_input_and_stores_nothing(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(ALL_HIT, "--baseline", "run:nope")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr.startswith("goldeneval: error: baseline: run 'nope' not found in ")
    assert len(ResultStore(cli_workspace.store).list_runs()) == 1


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_pinned_run_of_another_set_is_invalid_input_and_stores_nothing(cli_workspace: CliWorkspace) -> None:
    other = json.loads(cli_workspace.evaluate(ALL_HIT, "--format", "json").output)["run"]["id"]
    cli_workspace.write_set(FIXED_QUESTIONS, set_id="other-set")
    result = cli_workspace.evaluate(ALL_HIT, "--baseline", f"run:{other[:8]}")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert f"baseline run {other}: it is a run of set 'tiny'" in result.stderr
    assert len(ResultStore(cli_workspace.store).list_runs()) == 1


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_pinned_run_is_named_by_a_unique_prefix(cli_workspace: CliWorkspace) -> None:
    pinned = json.loads(cli_workspace.evaluate(ALL_HIT, "--format", "json").output)["run"]["id"]
    result = cli_workspace.evaluate(ONE_MISS, GATE, "--baseline", f"run:{pinned[:12]}", "--format", "json")
    assert verdict_of(result.output)["previous_run_id"] == pinned


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_max_p_demands_significance_before_failing(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(TWO_MISS, GATE, "--max-p", "0.05")
    assert result.exit_code == ExitCode.OK  # 2 lost of 3: McNemar p = 0.5
    assert "McNemar p=0.5, required < 0.05" in result.output


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_slice_threshold_catches_a_regression_hidden_in_one_class(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    args = (GATE, "--max-top1-drop", "0.5", "--max-top3-drop", "0.5", "--min-slice-questions", "1")
    assert cli_workspace.evaluate(ONE_MISS, *args).exit_code == ExitCode.OK
    cli_workspace.evaluate(ALL_HIT)
    result = cli_workspace.evaluate(ONE_MISS, *args, "--slice-drop", "hard_class:prose-free=0.1")
    assert result.exit_code == ExitCode.REGRESSION
    assert "hard_class prose-free: top-1 hit rate fell 1.000 -> 0.000" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_slice_below_the_minimum_question_count_is_not_gated(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate(ALL_HIT)
    args = ("--max-top1-drop", "0.5", "--max-top3-drop", "0.5", "--slice-drop", "*=0.1")
    assert cli_workspace.evaluate(ONE_MISS, GATE, *args).exit_code == ExitCode.OK


@pytest.fixture
def legacy_store(tmp_path: Path) -> Path:
    path = tmp_path / "legacy.duckdb"
    with gzip.open(LEGACY_FIXTURE) as source, path.open("wb") as target:
        shutil.copyfileobj(source, target)
    return path


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_store_of_the_previous_schema_keeps_every_old_row_intact_and_unknown(legacy_store: Path) -> None:
    store = ResultStore(legacy_store)
    runs = store.list_runs(with_details=True)
    assert store.schema_version() == SCHEMA_VERSION
    assert [(r.set_id, r.model, r.status, r.question_count) for r in runs] == [
        ("transit-sample", "goldeneval.lexical", "complete", 81)
    ] * 2
    assert all(r.pass_rate == pytest.approx(36 / 81) for r in runs)
    for run in runs:
        assert set(run.provenance.values()) == {None}
        assert (run.label_digest, run.benchmark_fingerprint, run.variant_fingerprint, run.privacy) == (None,) * 4
        assert len(retrieval_details(run).question_rows()) == 81
        assert retrieval_details(run).format_version == 1


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_the_first_known_run_after_legacy_rows_is_unknown_not_a_baseline(legacy_store: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from goldeneval.cli import main

    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--store", str(legacy_store)]
    args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", GATE, "--format", "json"]
    legacy_latest = ResultStore(legacy_store).list_runs(limit=1)[0].id
    first = CliRunner().invoke(main, args)
    verdict = verdict_of(first.stdout)
    assert first.exit_code == ExitCode.NOT_COMPARABLE
    assert (verdict["state"], verdict["previous_run_id"]) == ("unknown", legacy_latest)
    assert verdict["reason"] == (
        f"the previous run {legacy_latest} was stored before fingerprints were recorded (provenance missing); "
        "no numeric verdict"
    )
    second = CliRunner().invoke(main, args)
    assert verdict_of(second.stdout)["state"] == "comparable"
    assert second.exit_code == ExitCode.OK


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_known_run_after_a_run_without_provenance_is_unknown_even_after_a_large_drop(
    cli_workspace: CliWorkspace,
) -> None:
    cli_workspace.evaluate(ALL_HIT, corpus=None)  # the retriever declares no corpus revision
    result = cli_workspace.evaluate(TWO_MISS, GATE, "--format", "json")
    verdict = verdict_of(result.output)
    assert result.exit_code == ExitCode.NOT_COMPARABLE
    assert verdict["state"] == "unknown"
    assert "declares no corpus_revision (provenance missing); no numeric verdict" in str(verdict["reason"])


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_incomplete_earlier_run_is_never_the_baseline(cli_workspace: CliWorkspace) -> None:
    first = json.loads(cli_workspace.evaluate(ALL_HIT, "--format", "json").stdout)["run"]["id"]
    cli_workspace.evaluate({**ALL_HIT, "beta": "raise"})
    result = cli_workspace.evaluate(ALL_HIT, GATE, "--format", "json")
    assert verdict_of(result.stdout)["previous_run_id"] == first


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_incomplete_pinned_run_is_invalid_input_and_stores_nothing(cli_workspace: CliWorkspace) -> None:
    broken = json.loads(cli_workspace.evaluate({**ALL_HIT, "beta": "raise"}, "--format", "json").stdout)["run"]["id"]
    result = cli_workspace.evaluate(ALL_HIT, GATE, "--baseline", f"run:{broken[:10]}")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == f"goldeneval: error: baseline run {broken}: it is incomplete (1 questions errored)\n"
    assert len(ResultStore(cli_workspace.store).list_runs()) == 1


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_run_is_never_its_own_pinned_baseline(cli_workspace: CliWorkspace) -> None:
    from goldeneval.core.baseline import Baseline
    from goldeneval.history.comparison import compare_with_history

    first = json.loads(cli_workspace.evaluate(ALL_HIT, "--format", "json").output)["run"]["id"]
    store = ResultStore(cli_workspace.store)
    current = store.get_run(first)
    assert current is not None
    with pytest.raises(InputError, match=f"baseline: run '{first[:6]}' not found"):
        compare_with_history(store, current, baseline=Baseline("run", first[:6]))
