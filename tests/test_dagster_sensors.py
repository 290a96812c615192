"""The schedule and the sensors, evaluated with build_schedule_context / build_sensor_context
against a real instance, cursor behaviour included."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pytest

from pipelines.schedules import NIGHTLY_SCHEDULE
from tests.dagster_support import (
    GOOD,
    Project,
    Webhook,
    definitions,
    run_nightly,
    run_requests,
    tick_alert_sensor,
    tick_regression_sensor,
    webhook_server,
    write_project,
)

pytestmark = pytest.mark.slow  # the in-process asset graph: seconds per test; CI runs it

ONE_SET = {"alpha-set": [{"id": "a1", "text": "apple orchard", "form": "MATCH", "expected": ["apples"]}]}


@pytest.fixture
def webhook() -> Iterator[Webhook]:
    with webhook_server() as hook:
        yield hook


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook) -> Project:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GOLDENEVAL_ALERT_WEBHOOK_URL", raising=False)
    return write_project(tmp_path, sets=ONE_SET, alerts={"webhook_url": webhook.url})


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as temp:
        yield temp


def test_the_schedule_asks_for_one_run_per_partition(project: Project) -> None:
    defs = definitions(project)
    schedule = defs.resolve_schedule_def(NIGHTLY_SCHEDULE)
    tick = datetime(2026, 3, 1, 2, 0, tzinfo=UTC)
    requests = schedule.evaluate_tick(
        dg.build_schedule_context(scheduled_execution_time=tick, repository_def=defs.get_repository_def())
    ).run_requests
    assert requests is not None
    assert sorted(r.partition_key or "" for r in requests) == ["fixed|alpha-set", "lexical|alpha-set"]
    assert {r.run_key for r in requests} == {
        "2026-03-01T02:00:00+00:00:fixed|alpha-set",
        "2026-03-01T02:00:00+00:00:lexical|alpha-set",
    }


def test_the_schedule_runs_nightly_at_two_in_the_configured_time_zone(project: Project) -> None:
    text = project.config.read_text().replace("timeout_s: 30", "timeout_s: 30\nschedule: {timezone: Europe/Berlin}")
    project.config.write_text(text)
    schedule = definitions(project).resolve_schedule_def(NIGHTLY_SCHEDULE)
    assert (schedule.cron_schedule, schedule.execution_timezone) == ("0 2 * * *", "Europe/Berlin")
    assert schedule.default_status == dg.DefaultScheduleStatus.RUNNING


def test_the_regression_sensor_has_nothing_to_do_before_any_summary(
    project: Project, instance: dg.DagsterInstance
) -> None:
    tick = tick_regression_sensor(definitions(project), instance)
    assert tick.run_requests == []


def test_the_regression_sensor_asks_once_per_summary_with_its_stored_run(
    project: Project, instance: dg.DagsterInstance
) -> None:
    defs = definitions(project)
    run_nightly(defs, instance)
    tick = tick_regression_sensor(defs, instance)
    requests = tick.run_requests or []
    assert sorted(r.partition_key or "" for r in requests) == ["fixed|alpha-set", "lexical|alpha-set"]
    config = requests[0].run_config["ops"]["regression_check"]["config"]
    assert len(config["stored_run_id"]) == 32


def test_the_regression_sensor_cursor_neither_repeats_nor_skips(project: Project, instance: dg.DagsterInstance) -> None:
    defs = definitions(project)
    run_nightly(defs, instance, ["fixed|alpha-set"])
    first = tick_regression_sensor(defs, instance)
    assert len(first.run_requests or []) == 1
    assert tick_regression_sensor(defs, instance, cursor=first.cursor).run_requests == []
    run_nightly(defs, instance, ["fixed|alpha-set", "lexical|alpha-set"])
    second = tick_regression_sensor(defs, instance, cursor=first.cursor)
    assert len(second.run_requests or []) == 2
    assert tick_regression_sensor(defs, instance, cursor=second.cursor).run_requests == []


def test_a_sensor_restarted_without_its_cursor_repeats_the_same_run_keys(
    project: Project, instance: dg.DagsterInstance
) -> None:
    """The daemon drops a request whose run key already ran, so a lost cursor repeats nothing."""
    defs = definitions(project)
    run_nightly(defs, instance)
    first = tick_regression_sensor(defs, instance)
    again = tick_regression_sensor(defs, instance, cursor=None)
    assert [r.run_key for r in again.run_requests or []] == [r.run_key for r in first.run_requests or []]


def test_a_failed_delivery_is_retried_on_the_next_tick_and_sent_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook, instance: dg.DagsterInstance
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    project = write_project(
        tmp_path,
        sets=ONE_SET,
        alerts={"webhook_url": webhook.url},
        rankings={**GOOD, "apple orchard": "raise"},
    )
    defs = definitions(project)
    run_nightly(defs, instance, ["fixed|alpha-set"])
    webhook.fail_next = 1
    failed = tick_alert_sensor(defs, instance)
    assert (failed.skip_message or "").startswith("delivery failed: alert webhook answered HTTP 500")
    assert webhook.received == []
    retried = tick_alert_sensor(defs, instance, cursor=failed.cursor)
    assert retried.skip_message == "1 alert(s) sent"
    [alert] = webhook.received
    assert (alert["check"], alert["verdict"]["status"]) == ("run_complete", "incomplete")
    assert alert["verdict"]["reason"] == "1 of 1 questions errored or timed out"
    assert tick_alert_sensor(defs, instance, cursor=retried.cursor).skip_message == "0 alert(s) sent"


def test_an_incomplete_run_fails_run_complete_without_failing_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook, instance: dg.DagsterInstance
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    project = write_project(tmp_path, sets=ONE_SET, rankings={**GOOD, "apple orchard": "raise"})
    [result] = run_nightly(definitions(project), instance, ["fixed|alpha-set"])
    assert result.success
    [evaluation] = result.get_asset_check_evaluations()
    assert (evaluation.check_name, evaluation.passed) == ("run_complete", False)
    assert evaluation.severity == dg.AssetCheckSeverity.ERROR


def test_alerts_go_to_slack_when_a_token_is_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook, instance: dg.DagsterInstance
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("SLACK_TOKEN", "xoxb-test-token")
    monkeypatch.setenv("GOLDENEVAL_SLACK_API_URL", webhook.url.removesuffix("/hook") + "/api/")
    project = write_project(
        tmp_path,
        sets=ONE_SET,
        alerts={"slack_channel": "#retrieval"},
        rankings={**GOOD, "apple orchard": "raise"},
    )
    defs = definitions(project)
    run_nightly(defs, instance, ["fixed|alpha-set"])
    assert tick_alert_sensor(defs, instance).skip_message == "1 alert(s) sent"
    assert webhook.paths == ["/api/chat.postMessage"]
    [message] = webhook.received
    assert message["channel"] == "#retrieval"
    assert message["text"].startswith(
        "goldeneval ERROR: check run_complete failed for set 'alpha-set' x retriever 'fixed': incomplete"
    )


def test_an_incomplete_run_fails_both_checks_and_is_alerted_once_by_run_complete(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook, instance: dg.DagsterInstance
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GOLDENEVAL_ALERT_WEBHOOK_URL", raising=False)
    project = write_project(
        tmp_path, sets=ONE_SET, rankings={**GOOD, "apple orchard": "raise"}, alerts={"webhook_url": webhook.url}
    )
    defs = definitions(project)
    run_nightly(defs, instance, ["fixed|alpha-set"])
    [check_run] = run_requests(defs, instance, tick_regression_sensor(defs, instance))
    [no_regression] = check_run.get_asset_check_evaluations()
    assert (no_regression.passed, no_regression.metadata["gate"].value) == (False, "incomplete")
    tick_alert_sensor(defs, instance)
    assert [alert["check"] for alert in webhook.received] == ["run_complete"]


def test_a_slack_channel_without_a_token_is_named_in_the_alert_sensors_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance: dg.DagsterInstance
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("SLACK_TOKEN", raising=False)
    monkeypatch.delenv("GOLDENEVAL_ALERT_WEBHOOK_URL", raising=False)
    project = write_project(
        tmp_path, sets=ONE_SET, alerts={"slack_channel": "#retrieval"}, rankings={**GOOD, "apple orchard": "raise"}
    )
    defs = definitions(project)
    run_nightly(defs, instance, ["fixed|alpha-set"])
    assert tick_alert_sensor(defs, instance).skip_message == (
        "0 alert(s) sent; Slack channel '#retrieval' is configured but $SLACK_TOKEN is not set"
    )
