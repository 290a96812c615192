"""The prompt graph in process: (prompt set x model) partitions, the stored summary, the
sensor-driven regression check, the checks and exactly one alert for a regression at a real
HTTP server; metadata_only writes no prompt or answer text to Parquet or the event log."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow.parquet as pq
import pytest
import yaml

from pipelines.jobs import PROMPT_JOB, PROMPT_REGRESSION_JOB
from pipelines.sensors import PROMPT_REGRESSION_SENSOR, sensor_context
from tests.dagster_support import (
    QUIET,
    definitions,
    latest_metadata,
    tick_alert_sensor,
    webhook_server,
    write_project,
)
from tests.test_prompts_cli import GOOD, PROMPTS, SCRIPTED_MODEL

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    sys.modules.pop("scripted_model", None)


def _configure(
    root: Path, *, privacy: str = "full", webhook: str | None = None, slack_channel: str | None = None
) -> Any:
    alerts = {"webhook_url": webhook, "slack_channel": slack_channel} if webhook else None
    project = write_project(root, privacy=privacy, alerts=alerts)
    (root / "scripted_model.py").write_text(SCRIPTED_MODEL, encoding="utf-8")
    (root / "prompt_sets").mkdir(exist_ok=True)
    (root / "prompt_sets" / "tiny.yaml").write_text(yaml.safe_dump({"id": "tiny", "prompts": PROMPTS}))
    config = yaml.safe_load(project.config.read_text())
    config["prompt_sets"] = ["prompt_sets/tiny.yaml", "goldeneval.smoke"]
    config["models"] = {
        "scripted": {"id": "scripted_model:build", "options": {"answers": str(root / "answers.json")}},
        "extractive": {"id": "goldeneval.extractive"},
    }
    project.config.write_text(yaml.safe_dump(config, sort_keys=False))
    (root / "answers.json").write_text(json.dumps(GOOD))
    return project


def _run_prompt_job(defs: dg.Definitions, instance: dg.DagsterInstance, key: str) -> None:
    result = defs.resolve_job_def(PROMPT_JOB).execute_in_process(partition_key=key, instance=instance, run_config=QUIET)
    assert result.success


def _run_prompt_sensor(defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None) -> str | None:
    tick = defs.resolve_sensor_def(PROMPT_REGRESSION_SENSOR).evaluate_tick(sensor_context(defs, instance, cursor))
    job = defs.resolve_job_def(PROMPT_REGRESSION_JOB)
    for request in tick.run_requests or []:
        run_config = {**request.run_config, **QUIET}
        assert job.execute_in_process(
            partition_key=request.partition_key, run_config=run_config, instance=instance
        ).success
    return tick.cursor


KEY = dg.MultiPartitionKey({"prompt_set": "tiny", "model": "scripted"})


def test_the_graph_has_prompt_partitions_beside_the_retrieval_ones(project: Path) -> None:
    defs = definitions(_configure(project))
    partitions = defs.resolve_job_def(PROMPT_JOB).partitions_def
    assert partitions is not None
    assert sorted(map(str, partitions.get_partition_keys())) == [
        "extractive|goldeneval.smoke",
        "extractive|tiny",
        "scripted|goldeneval.smoke",
        "scripted|tiny",
    ]
    keys = {key.to_user_string() for key in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"golden_prompt_sets", "model_responses", "prompt_gradings", "prompt_summary"} <= keys
    assert "prompt_regression_check" in keys


def test_a_regression_fails_no_regression_and_raises_exactly_one_alert(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with webhook_server() as hook, dg.instance_for_test() as instance:
        monkeypatch.setenv("SLACK_TOKEN", "xoxb-test-token")
        monkeypatch.setenv("GOLDENEVAL_SLACK_API_URL", hook.url.removesuffix("/hook") + "/api/")
        cfg = _configure(project, webhook=hook.url, slack_channel="#prompts")
        defs = definitions(cfg)
        _run_prompt_job(defs, instance, KEY)
        cursor = _run_prompt_sensor(defs, instance, None)
        assert latest_metadata(instance, "prompt_regression_check", KEY)["verdict"].value == "baseline"
        (project / "answers.json").write_text(json.dumps({**GOOD, "2+2?": "five", "A JSON person": "Ada"}))
        _run_prompt_job(defs, instance, KEY)
        _run_prompt_sensor(defs, instance, cursor)
        check = latest_metadata(instance, "prompt_regression_check", KEY)
        assert check["verdict"].value == "regression"
        assert check["gate"].value == "regression"
        summary = latest_metadata(instance, "prompt_summary", KEY)
        assert summary["pass_rate"].value == "0.333"  # text: plotted per series, not across partitions
        tick_alert_sensor(defs, instance)
        tick_alert_sensor(defs, instance)
    # one alert, to the webhook as JSON and to Slack as one line, in the prompts kind's own words
    assert hook.paths == ["/hook", "/api/chat.postMessage"]
    alert, message = hook.received
    assert (alert["kind"], alert["check"], alert["asset"], alert["set"], alert["model"]) == (
        "prompts",
        "no_regression",
        "prompt_regression_check",
        "tiny",
        "scripted",
    )
    assert alert["series"] == {"dimension": "model", "name": "scripted"}
    assert alert["verdict"]["status"] == "regression"
    assert alert["rates"] == {"pass_rate": 0.333, "mean_score": 0.333}  # the check's text, read back as numbers
    assert alert["rate_names"] == {"pass_rate": "pass rate", "mean_score": "mean score"}
    assert "retriever" not in alert
    assert message["text"] == (
        "goldeneval ERROR: check no_regression failed for prompt set 'tiny' x model 'scripted': regression: "
        f"{alert['verdict']['reason']} (pass rate 0.333, mean score 0.333) {alert['run_url']}"
    )


def test_the_smoke_set_with_the_extractive_model_materialises(project: Path) -> None:
    with dg.instance_for_test() as instance:
        defs = definitions(_configure(project))
        _run_prompt_job(defs, instance, dg.MultiPartitionKey({"prompt_set": "goldeneval.smoke", "model": "extractive"}))
        summary = latest_metadata(
            instance, "prompt_summary", dg.MultiPartitionKey({"prompt_set": "goldeneval.smoke", "model": "extractive"})
        )
    assert summary["status"].value == "complete"
    assert float(str(summary["pass_rate"].value)) > 0.5


def test_metadata_only_writes_no_prompt_or_answer_text(project: Path) -> None:
    with dg.instance_for_test() as instance:
        cfg = _configure(project, privacy="metadata_only")
        (project / "answers.json").write_text(json.dumps({**GOOD, "Capital of France?": "Paris, Ile-de-France."}))
        defs = definitions(cfg)
        _run_prompt_job(defs, instance, KEY)
        records = [
            record
            for asset in ("golden_prompt_sets", "model_responses", "prompt_gradings", "prompt_summary")
            for record in instance.fetch_materializations(dg.AssetKey(asset), limit=100).records
        ]
        assert len(records) == 4
        event_log = json.dumps([str(r.event_log_entry) for r in records])
    tables = sorted((project / ".goldeneval" / "tables").rglob("*.parquet"))
    prompt_tables = [p for p in tables if "prompt_set=" in str(p)]
    assert {p.parts[-4] for p in prompt_tables} == {"golden_prompt_sets", "model_responses", "prompt_gradings"}
    for path in prompt_tables:
        table = pq.read_table(path)
        dumped = json.dumps(table.to_pylist(), default=str) + str(table.schema.metadata)
        for text in ("Ile-de-France", "Capital of France", "Paris"):
            assert text not in dumped, (path, text)
    for text in ("Ile-de-France", "Capital of France"):
        assert text not in event_log
