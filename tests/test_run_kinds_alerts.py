"""A third kind's failed check is alerted in its own words: the toy kind (``tests/toy_kind.py``,
installed as another package would be) runs through the suite's Definitions twice, its second
night regresses, and the alert names its kind, its reranker and its own two rates, as JSON at
a real HTTP server and as the Slack line (no word of retrieval's)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from goldeneval.suite import load_suite
from pipelines.build import definitions_for
from pipelines.main import run_nightly, run_regression_sensor, sensor_cursor_key
from tests.dagster_support import tick_alert_sensor, webhook_server
from tests.test_run_kinds_declared import set_firsts, toy_project, toy_site
from tests.toy_kind import TOY_DECLARATION as TOY

__all__ = ["toy_site"]  # the fixture installs the toy kind for this process


def _night(config: Path, instance: dg.DagsterInstance) -> dg.Definitions:
    """The toy kind's nightly job over its partition, then its regression sensor's check."""
    defs = definitions_for(load_suite(config))
    names = TOY.names
    assert all(run.success for run in run_nightly(defs, instance, names.job))
    sensor = names.regression_sensor
    judged = run_regression_sensor(defs, instance, sensor, names.regression_job, sensor_cursor_key(sensor))
    assert [run.success for run in judged] == [True]
    return defs


@pytest.mark.slow  # four in-process Dagster runs: seconds; CI runs it
def test_a_toy_runs_regression_is_alerted_with_its_reranker_and_its_own_rates(
    toy_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("GOLDENEVAL_STORE", "GOLDENEVAL_TABLES", "GOLDENEVAL_CACHE", "GOLDENEVAL_ALERT_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SLACK_TOKEN", "xoxb-test-token")
    with webhook_server() as hook, dg.instance_for_test() as instance:
        monkeypatch.setenv("GOLDENEVAL_SLACK_API_URL", hook.url.removesuffix("/hook") + "/api/")
        config = toy_project(tmp_path / "project", "1111", alerts={"webhook_url": hook.url, "slack_channel": "#toy"})
        _night(config, instance)
        set_firsts(config, "1010")
        defs = _night(config, instance)
        assert tick_alert_sensor(defs, instance).skip_message == "1 alert(s) sent"

    assert hook.paths == ["/hook", "/api/chat.postMessage"]
    alert, message = hook.received
    assert (alert["format_version"], alert["kind"], alert["check"], alert["asset"]) == (
        2,
        "toy-rerank",
        "no_regression",
        "toy_regression_check",
    )
    assert (alert["set"], alert["reranker"], alert["series"]) == (
        "toy-set",
        "toy",
        {"dimension": "reranker", "name": "toy"},
    )
    assert alert["rates"] == {"reranked_first": 0.5, "mean_reciprocal_rank": 0.5}
    assert alert["rate_names"] == {"reranked_first": "reranked first", "mean_reciprocal_rank": "mean reciprocal rank"}
    assert "retriever" not in alert and "model" not in alert
    reason = alert["verdict"]["reason"]
    assert reason.startswith("reranked first fell 1.000 -> 0.500")
    assert message["text"] == (
        f"goldeneval ERROR: check no_regression failed for set 'toy-set' x reranker 'toy': regression: {reason} "
        f"(reranked first 0.500, mean reciprocal rank 0.500) {alert['run_url']}"
    )
