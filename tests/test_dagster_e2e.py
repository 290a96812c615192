"""End to end: dagster-webserver and dagster-daemon on 127.0.0.1 with a temporary
DAGSTER_HOME; the nightly job launched through GraphQL; materialisations and check
evaluations read back through GraphQL; the alert received by a real HTTP server; and the UI
as a person sees it, in headless Chromium, with screenshots under the test's folder.

One retriever of the suite fails on one question, so run_complete fails (a non-blocking
check: the run still succeeds) and exactly one alert is posted."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import dagster as dg
import pytest

from pipelines.config import PROJECT_DIR
from pipelines.main import INSTANCE_TEMPLATE
from tests.chromium import Page, headless_chromium, require_chromium
from tests.dagster_support import ASSETS, GOOD, SETS, Webhook, webhook_server, write_project

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

KEYS = ["fixed|alpha-set", "lexical|alpha-set"]
BIN = Path(sys.executable).parent
T = TypeVar("T")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait(what: str, probe: Callable[[], T | None], timeout_s: float, logs: list[Path]) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(1.0)
    tails = "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in logs if p.exists())
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}\n{tails}")


@dataclass
class Services:
    url: str
    webhook: Webhook
    tmp: Path
    logs: list[Path]
    run_ids: list[str]

    def graphql(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        body = json.dumps({"query": query, "variables": variables or {}}).encode()
        request = urllib.request.Request(f"{self.url}/graphql", data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            document: dict[str, Any] = json.loads(response.read())
        assert "errors" not in document, document["errors"]
        data: dict[str, Any] = document["data"]
        return data


def _start(command: list[str], env: dict[str, str], log: Path) -> subprocess.Popen[bytes]:
    with log.open("wb") as out:
        return subprocess.Popen(
            command, cwd=PROJECT_DIR, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True
        )


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the process and every process it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)  # whatever of the group is left, the leader included
    process.wait(timeout=20)


LOCATION = """
{ workspaceOrError { ... on Workspace { locationEntries { name
  locationOrLoadError { __typename ... on PythonError { message } } } } } }
"""
LAUNCH = """
mutation($params: ExecutionParams!) { launchRun(executionParams: $params) {
  __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message } } }
"""
RUNS = """
query($ids: [String!]) { runsOrError(filter: {runIds: $ids}) { ... on Runs { results { runId status } } } }
"""
MATERIALISATIONS = """
query($path: [String!]!) { assetOrError(assetKey: {path: $path}) { ... on Asset {
  assetMaterializations(limit: 100) { partition runId
    metadataEntries { label __typename
      ... on FloatMetadataEntry { floatValue } ... on TextMetadataEntry { text } } } } } }
"""
CHECKS = """
query($path: [String!]!, $check: String!) {
  assetCheckExecutions(assetKey: {path: $path}, checkName: $check, limit: 100) {
    runId status partition evaluation { success severity } } }
"""
STATES = """
{ repositoriesOrError { ... on RepositoryConnection { nodes {
  schedules { name scheduleState { status } } sensors { name sensorState { status } } } } } }
"""


def _launch(services: Services, key: str) -> str:
    retriever, set_id = key.split("|")
    tags = {
        "dagster/partition": key,
        "dagster/partition/set": set_id,
        "dagster/partition/retriever": retriever,
    }
    params = {
        "selector": {
            "repositoryLocationName": "goldeneval",
            "repositoryName": "__repository__",
            "jobName": "nightly_evaluation",
        },
        "executionMetadata": {"tags": [{"key": k, "value": v} for k, v in tags.items()]},
    }
    launched = services.graphql(LAUNCH, {"params": params})["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    return str(launched["run"]["runId"])


def _materialised_partitions(services: Services, asset: str) -> set[str]:
    found = services.graphql(MATERIALISATIONS, {"path": [asset]})["assetOrError"]
    return {m["partition"] for m in found.get("assetMaterializations", [])}


@pytest.fixture(scope="module")
def services(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Services]:
    tmp = tmp_path_factory.mktemp("e2e")
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    with webhook_server() as webhook:
        write_project(
            tmp,
            sets={"alpha-set": SETS["alpha-set"]},
            alerts={"webhook_url": webhook.url},
            rankings={**GOOD, "yellow tropical": "raise"},
        )
        home = tmp / "dagster_home"
        home.mkdir()
        shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
        with dg.DagsterInstance.from_config(str(home)):
            pass  # create the storage once, before two processes race to
        env = {
            **os.environ,
            "DAGSTER_HOME": str(home),
            "GOLDENEVAL_CONFIG": str(tmp / "goldeneval.yaml"),
            "GOLDENEVAL_SENSOR_INTERVAL_S": "3",
            "GOLDENEVAL_UI_URL": url,
            "PYTHONPATH": os.pathsep.join([str(tmp), os.environ.get("PYTHONPATH", "")]),
        }
        logs = [tmp / "webserver.log", tmp / "daemon.log"]
        webserver = _start(
            [str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
            env,
            logs[0],
        )
        daemon = _start([str(BIN / "dagster-daemon"), "run", "-w", "workspace.yaml"], env, logs[1])
        try:
            services = Services(url, webhook, tmp, logs, [])

            def loaded() -> bool:
                try:
                    entries = services.graphql(LOCATION)["workspaceOrError"]["locationEntries"]
                except (urllib.error.URLError, ConnectionError):
                    return False
                kind = entries[0]["locationOrLoadError"] if entries else None
                assert not kind or kind["__typename"] != "PythonError", kind
                return bool(kind)

            _wait("the code location to load", loaded, 120, logs)
            services.run_ids = [_launch(services, key) for key in KEYS]

            def finished() -> bool:
                runs = services.graphql(RUNS, {"ids": services.run_ids})["runsOrError"]["results"]
                return len(runs) == len(KEYS) and all(r["status"] in ("SUCCESS", "FAILURE", "CANCELED") for r in runs)

            _wait("the nightly runs to finish", finished, 300, logs)
            _wait(
                "the sensor's regression checks",
                lambda: _materialised_partitions(services, "regression_check") == set(KEYS),
                240,
                logs,
            )
            _wait("the alert", lambda: webhook.received, 120, logs)
            time.sleep(8)  # two more alert sensor ticks: nothing else may arrive
            yield services
        finally:
            _stop(daemon)
            _stop(webserver)


def test_the_schedule_and_sensors_run_without_a_click(services: Services) -> None:
    [repository] = services.graphql(STATES)["repositoriesOrError"]["nodes"]
    states = {s["name"]: s["scheduleState"]["status"] for s in repository["schedules"]}
    states |= {s["name"]: s["sensorState"]["status"] for s in repository["sensors"]}
    assert states == {
        "nightly_evaluation_schedule": "RUNNING",
        "regression_check_sensor": "RUNNING",
        "cli_run_series_sensor": "RUNNING",
        "check_alert_sensor": "RUNNING",
    }


def test_the_nightly_runs_launched_through_graphql_succeed(services: Services) -> None:
    runs = services.graphql(RUNS, {"ids": services.run_ids})["runsOrError"]["results"]
    assert [r["status"] for r in runs] == ["SUCCESS", "SUCCESS"]


@pytest.mark.parametrize("asset", ASSETS)
def test_every_asset_partition_is_materialised(services: Services, asset: str) -> None:
    assert _materialised_partitions(services, asset) == set(KEYS)


def test_hit_rates_read_back_as_text_on_the_partitioned_summary(services: Services) -> None:
    """Text, never a float: the UI plots a partitioned asset's floats as one line across partitions."""
    found = services.graphql(MATERIALISATIONS, {"path": ["evaluation_summary"]})["assetOrError"]
    by_partition = {
        m["partition"]: {e["label"]: e for e in m["metadataEntries"]} for m in found["assetMaterializations"]
    }
    fixed = by_partition["fixed|alpha-set"]
    assert fixed["top1_hit_rate"]["__typename"] == "TextMetadataEntry"
    assert fixed["top1_hit_rate"]["text"] == "1.000"  # a2 errored: 2 scored, both hits
    assert by_partition["lexical|alpha-set"]["top3_hit_rate"]["__typename"] == "TextMetadataEntry"


def test_check_evaluations_read_back_through_graphql(services: Services) -> None:
    complete = services.graphql(CHECKS, {"path": ["evaluation_summary"], "check": "run_complete"})
    statuses = {e["partition"]: e["status"] for e in complete["assetCheckExecutions"]}
    assert statuses == {"fixed|alpha-set": "FAILED", "lexical|alpha-set": "SUCCEEDED"}
    regression = services.graphql(CHECKS, {"path": ["regression_check"], "check": "no_regression"})
    # The incomplete run has no verdict, so the gate fails it too (it is alerted once, below).
    statuses = {e["partition"]: e["status"] for e in regression["assetCheckExecutions"]}
    assert statuses == {"fixed|alpha-set": "FAILED", "lexical|alpha-set": "SUCCEEDED"}
    assert {e["evaluation"]["severity"] for e in regression["assetCheckExecutions"]} == {"ERROR"}


def test_the_failed_check_reaches_the_webhook_exactly_once(services: Services) -> None:
    [alert] = services.webhook.received
    assert (alert["check"], alert["set"], alert["retriever"]) == ("run_complete", "alpha-set", "fixed")
    assert alert["verdict"] == {
        "status": "incomplete",
        "state": None,
        "reason": "1 of 3 questions errored or timed out",
    }
    assert alert["rates"] == {"top1_hit_rate": 1.0, "top3_hit_rate": 1.0}
    assert alert["run_url"] == f"{services.url}/runs/{alert['run_id']}"
    assert alert["run_id"] in services.run_ids


# --------------------------------------------------------------------------- the UI


@pytest.fixture(scope="module")
def browser(services: Services) -> Iterator[Page]:
    require_chromium()
    with headless_chromium(services.tmp / "chromium") as page:
        yield page


def _show(page: Page, url: str, *needles: str) -> str:
    page.open(url)
    page.dismiss("Skip")  # Dagster's one-time community dialog
    return page.wait_for_text(*needles, timeout_s=90)


def test_the_ui_shows_the_asset_graph(services: Services, browser: Page) -> None:
    # Two groups (the evaluation and the per-series plots): the lineage draws each as a box with
    # its asset count (the asset keys themselves are checked through GraphQL, test_dagster_ui_graphql).
    text = _show(browser, f"{services.url}/asset-groups/goldeneval", "Global asset lineage", "goldeneval_series")
    assert f"goldeneval\n{len(ASSETS)}" in text and "goldeneval_series\n3" in text, text[:600]
    assert f"Materialize all ({len(ASSETS)})" in text
    assert browser.screenshot(services.tmp / "asset-graph.png").stat().st_size > 10_000


def test_the_ui_partition_page_shows_the_hit_rates(services: Services, browser: Page) -> None:
    url = f"{services.url}/assets/evaluation_summary?view=partitions&partition=fixed%7Calpha-set"
    text = _show(browser, url, "fixed|alpha-set", "top1_hit_rate", "top3_hit_rate", "stored_run_id")
    assert "form=MATCH/top1_hit_rate" in text
    assert browser.screenshot(services.tmp / "evaluation-summary-partition.png").stat().st_size > 10_000


def test_the_alert_link_opens_the_run_in_the_ui(services: Services, browser: Page) -> None:
    [alert] = services.webhook.received
    _show(browser, alert["run_url"], "nightly_evaluation", "Success")
    browser.screenshot(services.tmp / "alerted-run.png")
