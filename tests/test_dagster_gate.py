"""The nightly path decides like the CLI: one gate, one series, idempotent summaries.

Each test drives the real asset graph in process against a temporary Dagster instance, with
the fixed-rankings retriever of ``tests.dagster_support`` (its provenance declared in the
suite file) and, for the alert, a real HTTP server on 127.0.0.1.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml
from click.testing import CliRunner

import resources.goldeneval
from assets.evaluation import build_evaluation_assets, build_regression_assets
from assets.partitions import evaluation_partitions
from assets.regression import RegressionCheckConfig
from goldeneval.cli import ExitCode, main
from goldeneval.core.privacy import PrivacyMode
from goldeneval.history import door
from goldeneval.retrieval import pipeline
from goldeneval.retrieval.tables import hits_table
from goldeneval.store import ResultStore
from resources import GoldenEvalResource
from tests.dagster_support import (
    FIXED_PROVENANCE,
    PLUGIN_MODULE,
    WORSE_ALPHA,
    Project,
    Webhook,
    definitions,
    latest_metadata,
    run_nightly,
    run_requests,
    tick_alert_sensor,
    tick_regression_sensor,
    webhook_server,
    write_project,
)

pytestmark = pytest.mark.slow  # the in-process asset graph: seconds per test; CI runs it

KEY = "fixed|alpha-set"
WHERE = {"set": "alpha-set", "retriever": "fixed"}
PARTITIONS = evaluation_partitions(["alpha-set"], ["fixed"])
PARTITION = dg.MultiPartitionKey({"set": "alpha-set", "retriever": "fixed"})
SETS = {
    "alpha-set": [
        {"id": "a1", "text": "apple orchard", "form": "MATCH", "expected": ["apples"]},
        {"id": "a2", "text": "yellow tropical", "form": "GAP", "expected": ["bananas"]},
    ]
}


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    with webhook_server() as hook:
        yield hook


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook) -> Project:
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("GOLDENEVAL_ALERT_WEBHOOK_URL", "SLACK_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    return write_project(
        tmp_path, sets=SETS, retrievers=_fixed(FIXED_PROVENANCE, tmp_path), alerts={"webhook_url": webhook.url}
    )


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as temp:
        yield temp


def _fixed(provenance: dict[str, str], root: Path) -> dict[str, Any]:
    return {
        "fixed": {
            "id": f"{PLUGIN_MODULE}:build",
            "options": {"rankings": str(root / "rankings.json")},
            "provenance": provenance,
        }
    }


def _declare_corpus(project: Project, revision: str) -> None:
    config = yaml.safe_load(project.config.read_text())
    config["retrievers"] = _fixed({**FIXED_PROVENANCE, "corpus_revision": revision}, project.root)
    project.config.write_text(yaml.safe_dump(config, sort_keys=False))


def _night(project: Project, instance: dg.DagsterInstance, cursor: str | None = None) -> str | None:
    """One nightly run of the partition, then what the daemon does: the regression check."""
    defs = definitions(project)
    assert all(r.success for r in run_nightly(defs, instance, [KEY]))
    tick = tick_regression_sensor(defs, instance, cursor=cursor)
    assert all(r.success for r in run_requests(defs, instance, tick))
    cursor_after: str | None = tick.cursor
    return cursor_after


def _no_regression(instance: dg.DagsterInstance) -> dg.AssetCheckEvaluation:
    runs = instance.get_runs(filters=dg.RunsFilter(job_name="regression_check_job"), limit=1)
    assert runs, "no regression check ran"
    events = instance.all_logs(runs[0].run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    [event] = events
    evaluation = event.dagster_event.event_specific_data if event.dagster_event else None
    assert isinstance(evaluation, dg.AssetCheckEvaluation)
    return evaluation


def test_a_corpus_change_fails_no_regression_and_sends_exactly_one_alert_naming_mismatch(
    project: Project, instance: dg.DagsterInstance, webhook: Webhook
) -> None:
    cursor = _night(project, instance)
    _declare_corpus(project, "fixed-corpus-2")
    project.set_rankings(WORSE_ALPHA)  # top-1 falls 1.0 -> 0.0 while the corpus changes
    _night(project, instance, cursor)

    evaluation = _no_regression(instance)
    assert not evaluation.passed
    assert evaluation.metadata["state"].value == "mismatch"
    tick_alert_sensor(definitions(project), instance)
    [alert] = webhook.received
    assert (alert["check"], alert["verdict"]["status"], alert["verdict"]["state"]) == (
        "no_regression",
        "mismatch",
        "mismatch",
    )
    assert "corpus changed (revision fixed-corpus-1 -> fixed-corpus-2)" in alert["verdict"]["reason"]


def test_an_unknown_comparison_fails_no_regression(
    project: Project, instance: dg.DagsterInstance, webhook: Webhook
) -> None:
    cursor = _night(project, instance)
    config = yaml.safe_load(project.config.read_text())
    config["retrievers"]["fixed"]["provenance"] = {}  # nothing declares the corpus any more
    project.config.write_text(yaml.safe_dump(config, sort_keys=False))
    _night(project, instance, cursor)
    evaluation = _no_regression(instance)
    assert (evaluation.passed, evaluation.metadata["state"].value) == (False, "unknown")
    assert evaluation.metadata["gate"].value == "not_comparable"


def test_the_first_nightly_run_is_a_baseline_and_passes(project: Project, instance: dg.DagsterInstance) -> None:
    _night(project, instance)
    evaluation = _no_regression(instance)
    assert (evaluation.passed, evaluation.metadata["state"].value) == (True, "baseline")


def test_rematerialising_the_summary_stores_no_second_copy_and_keeps_the_check_red(
    project: Project, instance: dg.DagsterInstance, webhook: Webhook
) -> None:
    cursor = _night(project, instance)
    project.set_rankings(WORSE_ALPHA)
    cursor = _night(project, instance, cursor)
    assert not _no_regression(instance).passed
    stored_before = ResultStore(project.store).list_runs()
    summary_before = latest_metadata(instance, "evaluation_summary", KEY)["stored_run_id"].value

    defs = definitions(project)
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(
        partition_key=KEY, instance=instance, asset_selection=[dg.AssetKey("evaluation_summary")]
    )
    assert result.success
    tick = tick_regression_sensor(defs, instance, cursor=cursor)
    run_requests(defs, instance, tick)

    assert ResultStore(project.store).list_runs() == stored_before
    assert latest_metadata(instance, "evaluation_summary", KEY)["stored_run_id"].value == summary_before
    assert not tick.run_requests or all(r.run_key == f"regression_check:{summary_before}" for r in tick.run_requests)
    assert not _no_regression(instance).passed


def test_the_summary_reads_the_hits_its_upstream_materialised_not_the_newest_file(
    project: Project, instance: dg.DagsterInstance
) -> None:
    _night(project, instance)
    stored_id = latest_metadata(instance, "evaluation_summary", KEY)["stored_run_id"].value
    hits_folder = project.tables / "question_hits" / "set=alpha-set" / "retriever=fixed"
    [written] = list(hits_folder.glob("*.parquet"))
    (hits_folder / "99991231T000000000000Z_stray.parquet").write_bytes(written.read_bytes()[:4])  # not Parquet
    job = definitions(project).resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(
        partition_key=KEY, instance=instance, asset_selection=[dg.AssetKey("evaluation_summary")]
    )
    assert result.success
    assert latest_metadata(instance, "evaluation_summary", KEY)["stored_run_id"].value == stored_id


def test_trec_run_replays_a_run_file_under_dagster(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance: dg.DagsterInstance
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    run_file = tmp_path / "replay.run"
    run_file.write_text("a1 Q0 apples 1 2 elsewhere\na1 Q0 bananas 2 1 elsewhere\na2 Q0 apples 1 1 elsewhere\n")
    retrievers = {"replay": {"id": "goldeneval.trec_run", "options": {"run": str(run_file)}}}
    project = write_project(tmp_path, sets=SETS, retrievers=retrievers)
    [result] = run_nightly(definitions(project), instance, ["replay|alpha-set"])
    assert result.success
    metadata = latest_metadata(instance, "evaluation_summary", "replay|alpha-set")
    assert (metadata["top1_hit_rate"].value, metadata["error_count"].value) == ("0.500", "0")


def _cli(project: Project, *extra: str) -> dict[str, Any]:
    args = ["retrieval", "--set", str(project.root / "sets" / "alpha-set.yaml")]
    args += ["--retriever", f"{PLUGIN_MODULE}:build", "--option", f"rankings={project.rankings}"]
    args += ["--provenance", f"corpus_revision={FIXED_PROVENANCE['corpus_revision']}"]
    args += ["--store", str(project.store), "--no-progress", "--format", "json", *extra]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (ExitCode.OK, ExitCode.REGRESSION), result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def test_a_cli_run_named_like_the_nightly_retriever_continues_its_series(
    project: Project, instance: dg.DagsterInstance
) -> None:
    _night(project, instance)
    nightly = latest_metadata(instance, "evaluation_summary", KEY)["stored_run_id"].value
    project.set_rankings(WORSE_ALPHA)
    document = _cli(project, "--name", "fixed")
    assert document["verdict"]["previous_run_id"] == nightly
    assert (document["verdict"]["state"], document["verdict"]["status"]) == ("comparable", "regression")


def test_a_nightly_run_compares_with_an_earlier_cli_run_of_the_same_name(
    project: Project, instance: dg.DagsterInstance
) -> None:
    cli_run = _cli(project, "--name", "fixed")["run"]["id"]
    _night(project, instance)
    verdict = latest_metadata(instance, "regression_check", KEY)
    assert (verdict["state"].value, verdict["previous_run_id"].value) == ("comparable", cli_run)


def test_a_cli_run_without_the_name_is_another_series(project: Project, instance: dg.DagsterInstance) -> None:
    _night(project, instance)
    assert _cli(project)["verdict"]["state"] == "baseline"


def test_the_summary_asset_called_directly_records_a_hits_table_once(
    project: Project, instance: dg.DagsterInstance
) -> None:
    resource = GoldenEvalResource(config_path=str(project.config))
    spec = resource.run_spec(WHERE)
    hits = hits_table(pipeline.evaluate(spec), PrivacyMode.FULL, "dagster-run-1")
    [_, _, summary] = build_evaluation_assets(PARTITIONS)
    for _ in range(2):
        context = dg.build_asset_context(partition_key=PARTITION, resources={"goldeneval": resource}, instance=instance)
        result = summary(context, question_hits=hits)
        assert result.metadata["tables_run_id"] == "dagster-run-1"
    [stored] = ResultStore(project.store).list_runs()
    assert stored.tables_run_id == "dagster-run-1"


def test_the_regression_check_asset_called_directly_fails_a_mismatch(project: Project) -> None:
    resource = GoldenEvalResource(config_path=str(project.config))
    store = resource.open_store()
    door.record(store, pipeline.evaluate(resource.run_spec(WHERE)), PrivacyMode.FULL)
    _declare_corpus(project, "fixed-corpus-2")
    resource = GoldenEvalResource(config_path=str(project.config))
    current = door.record(store, pipeline.evaluate(resource.run_spec(WHERE)), PrivacyMode.FULL)
    [check] = build_regression_assets(PARTITIONS)
    context = dg.build_asset_context(partition_key=PARTITION, resources={"goldeneval": resource})
    result = check(context, config=RegressionCheckConfig(stored_run_id=current.id[:10]))
    [evaluation] = result.check_results
    assert (evaluation.passed, evaluation.metadata["state"].value, evaluation.metadata["gate"].value) == (
        False,
        "mismatch",
        "not_comparable",
    )


def test_the_suite_file_is_read_at_most_once_per_step(
    project: Project, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    reads: list[str] = []
    from goldeneval.suite import load_suite as original

    def counting(path: str | Path) -> Any:
        reads.append(str(path))
        return original(path)

    defs = definitions(project)
    monkeypatch.setattr(resources.goldeneval, "load_suite", counting)
    [result] = run_nightly(defs, instance, [KEY])
    steps = {event.step_key for event in result.all_events if event.step_key}
    assert 1 <= len(reads) <= len(steps) == 3


def test_a_pinned_baseline_in_the_suite_that_cannot_be_used_fails_the_summary_and_stores_nothing(
    project: Project, instance: dg.DagsterInstance
) -> None:
    _night(project, instance)
    config = yaml.safe_load(project.config.read_text())
    config["baseline"] = "run:deadbeef"
    project.config.write_text(yaml.safe_dump(config, sort_keys=False))
    job = definitions(project).resolve_job_def("nightly_evaluation")
    result = job.execute_in_process(partition_key=KEY, instance=instance, raise_on_error=False)
    assert not result.success
    failure = next(e for e in result.all_events if e.is_step_failure)
    assert failure.step_key == "evaluation_summary"
    assert "baseline: run 'deadbeef' not found" in str(getattr(failure.event_specific_data, "error", None))
    assert len(ResultStore(project.store).list_runs()) == 1


def _run_complete(instance: dg.DagsterInstance) -> dg.AssetCheckEvaluation:
    records = instance.get_runs(filters=dg.RunsFilter(job_name="nightly_evaluation"), limit=1)
    assert records, "no nightly run"
    events = instance.all_logs(records[0].run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    [evaluation] = [
        e.dagster_event.event_specific_data
        for e in events
        if e.dagster_event and getattr(e.dagster_event.event_specific_data, "check_name", None) == "run_complete"
    ]
    assert isinstance(evaluation, dg.AssetCheckEvaluation)
    return evaluation


def test_a_failed_no_regression_check_describes_the_state_the_reason_and_the_numbers(
    project: Project, instance: dg.DagsterInstance
) -> None:
    """The UI's Description column (and GraphQL's ``evaluation.description``) read this text."""
    cursor = _night(project, instance)
    project.set_rankings(WORSE_ALPHA)  # top-1 falls 1.0 -> 0.0, the corpus unchanged
    cursor = _night(project, instance, cursor)
    regression = _no_regression(instance)
    assert not regression.passed
    assert (regression.description or "").startswith("regression: top-1 hit rate fell 1.000 -> 0.000 (-1.000, allowed")
    _declare_corpus(project, "fixed-corpus-2")
    _night(project, instance, cursor)
    mismatch = _no_regression(instance)
    description = mismatch.description or ""
    # the suite file's default baseline is the accepted level: night 1, not the night that regressed
    assert description.startswith("mismatch: benchmark differs from accepted level run ")
    assert "corpus changed (revision fixed-corpus-1 -> fixed-corpus-2)" in description


def test_the_run_complete_check_describes_how_many_questions_were_answered(
    project: Project, instance: dg.DagsterInstance
) -> None:
    _night(project, instance)
    evaluation = _run_complete(instance)
    assert (evaluation.passed, evaluation.description) == (True, "complete: all 2 questions answered")
