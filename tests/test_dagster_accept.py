"""A regression stays red in the nightly until a person accepts it (issue 43), through Dagster.

The suite file names no ``baseline:``, so the nightly compares with the series' accepted level
(the suite file's default).  Each night runs the real asset graph in process on one partition,
then what the daemon does: the regression sensor's tick and the check it launches.  The
acceptance is the job ``accept_run`` launched with op config, as the Launchpad launches it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from goldeneval.store import ResultStore
from pipelines.jobs import ACCEPT_JOB
from tests.dagster_support import (
    FIXED_PROVENANCE,
    GOOD,
    PLUGIN_MODULE,
    QUIET,
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

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "dagster.md"

pytestmark = pytest.mark.slow  # the in-process asset graph: seconds per night; CI runs it

KEY = "fixed|alpha-set"
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
    for name in ("GOLDENEVAL_ALERT_WEBHOOK_URL", "SLACK_TOKEN", "GOLDENEVAL_STORE"):
        monkeypatch.delenv(name, raising=False)
    retrievers = {
        "fixed": {
            "id": f"{PLUGIN_MODULE}:build",
            "options": {"rankings": str(tmp_path / "rankings.json")},
            "provenance": FIXED_PROVENANCE,
        }
    }
    project = write_project(tmp_path, sets=SETS, retrievers=retrievers, alerts={"webhook_url": webhook.url})
    assert "baseline" not in yaml.safe_load(project.config.read_text())  # the suite file's default
    return project


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as temp:
        yield temp


def launchpad_config() -> dict[str, Any]:
    """The YAML block of the Dagster guide that gives ``accept_run`` its op config."""
    [block] = [b for b in GUIDE.read_text(encoding="utf-8").split("```yaml\n")[1:] if b.startswith("ops:\n  accept:")]
    config: dict[str, Any] = yaml.safe_load(block.split("```")[0])
    assert set(config["ops"]["accept"]["config"]) == {"run_id", "reason", "by"}
    return config


class Nights:
    def __init__(self, project: Project, instance: dg.DagsterInstance) -> None:
        self.project, self.instance = project, instance
        self.cursor: str | None = None

    def night(self, rankings: dict[str, Any]) -> tuple[str, dg.AssetCheckEvaluation]:
        """One nightly run of the partition and its regression check: the stored run and the check."""
        self.project.set_rankings(rankings)
        defs = definitions(self.project)
        assert all(r.success for r in run_nightly(defs, self.instance, [KEY]))
        tick = tick_regression_sensor(defs, self.instance, cursor=self.cursor)
        [checked] = run_requests(defs, self.instance, tick)
        assert checked.success
        self.cursor = tick.cursor
        [evaluation] = checked.get_asset_check_evaluations()
        stored = latest_metadata(self.instance, "evaluation_summary", KEY)["stored_run_id"].value
        return str(stored), evaluation

    def accept(self, run_id: str, reason: str, by: str) -> dg.ExecuteInProcessResult:
        """The job ``accept_run``, launched with the Launchpad config the Dagster guide shows."""
        job = definitions(self.project).resolve_job_def(ACCEPT_JOB)
        config = launchpad_config()
        config["ops"]["accept"]["config"].update(run_id=run_id, reason=reason, by=by)
        config.update(QUIET)
        return job.execute_in_process(run_config=config, instance=self.instance, raise_on_error=False)


def test_the_night_3_check_stays_failed_until_accept_run_then_night_4_passes(
    project: Project, instance: dg.DagsterInstance, webhook: Webhook
) -> None:
    nights = Nights(project, instance)
    night1, first = nights.night(GOOD)
    assert (first.passed, first.metadata["state"].value) == (True, "baseline")
    night2, second = nights.night(WORSE_ALPHA)
    assert (second.passed, second.metadata["verdict"].value) == (False, "regression")
    night3, third = nights.night(WORSE_ALPHA)  # the same retriever: with `previous` this night was green
    assert (third.passed, third.metadata["verdict"].value) == (False, "regression")
    assert third.metadata["previous_run_id"].value == night1
    assert third.metadata["reference"].value == f"accepted level run {night1} (it passed the gate)"
    assert f"compared with accepted level run {night1} (it passed the gate)" in (third.description or "")
    tick_alert_sensor(definitions(project), instance)
    alerted = [(a["check"], a["stored_run_id"], a["verdict"]["status"]) for a in webhook.received]
    assert alerted == [("no_regression", night2, "regression"), ("no_regression", night3, "regression")]

    accepted = nights.accept(night3[:10], "the new ranking is intended", "erin")
    assert accepted.success
    [output] = [e for e in accepted.all_events if e.event_type is dg.DagsterEventType.STEP_OUTPUT]
    metadata = output.step_output_data.metadata
    assert (metadata["stored_run_id"].value, metadata["accepted_by"].value, metadata["reason"].value) == (
        night3,
        "erin",
        "the new ranking is intended",
    )
    assert ResultStore(project.store).acceptances([night3])[night3].accepted_by == "erin"

    night4, fourth = nights.night(WORSE_ALPHA)
    assert (fourth.passed, fourth.metadata["verdict"].value) == (True, "pass")
    reference = f"accepted level run {night3} (accepted by erin: the new ranking is intended)"
    assert (fourth.metadata["previous_run_id"].value, fourth.metadata["reference"].value) == (night3, reference)
    summary = latest_metadata(instance, "evaluation_summary", KEY)["comparison"].value
    assert f"compared with {reference}" in str(summary)
    assert len({night1, night2, night3, night4}) == 4


def test_accept_run_refuses_an_unknown_run_with_the_one_line_reason(
    project: Project, instance: dg.DagsterInstance
) -> None:
    nights = Nights(project, instance)
    nights.night(GOOD)
    refused = nights.accept("ffffffff", "fine", "erin")
    assert not refused.success
    [failure] = [e for e in refused.all_events if e.event_type is dg.DagsterEventType.STEP_FAILURE]
    assert "run 'ffffffff' not found in" in str(failure.step_failure_data.user_failure_data.description)  # type: ignore[union-attr]
    assert ResultStore(project.store).acceptances([r.id for r in ResultStore(project.store).list_runs()]) == {}
