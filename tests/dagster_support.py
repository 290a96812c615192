"""Helpers for the Dagster tests: a project on disk (sets, corpus, a fixed-rankings retriever
plugin, goldeneval.yaml), a real webhook server, and in-process job and sensor runs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

import dagster as dg
import yaml

from pipelines.build import build_definitions
from pipelines.dagster_internals import RUN_KEY_TAG, SENSOR_NAME_TAG
from pipelines.jobs import NIGHTLY_JOB, REGRESSION_JOB
from pipelines.sensors import ALERT_SENSOR, REGRESSION_SENSOR, sensor_context
from tests.chat_server import SHUTDOWN_POLL_S, LocalTestServer
from tests.conftest import FIXED_RANKINGS_PLUGIN

PLUGIN_MODULE = "fixed_rankings_plugin"
PLUGIN = FIXED_RANKINGS_PLUGIN
"""The same fixed-rankings retriever the CLI tests use."""

ASSETS = (
    "golden_question_sets",
    "retriever_rankings",
    "question_hits",
    "evaluation_summary",
    "regression_check",
)
"""Every asset of the graph, in graph order: what each partition must have materialised."""
FIXED_PROVENANCE = {
    "corpus_revision": "fixed-corpus-1",
    "model_revision": "not_applicable",
    "chunking_identity": "not_applicable",
    "pipeline_identity": "fixed-rankings",
}
CORPUS = {
    "apples": "# Apples\nApples grow on apple trees in the orchard.",
    "bananas": "# Bananas\nBananas are yellow tropical fruit.",
    "cherries": "# Cherries\nCherries are small red stone fruit.",
    "dates": "# Dates\nDates grow on date palms in the desert.",
}
SETS: dict[str, list[dict[str, Any]]] = {
    "alpha-set": [
        {
            "id": "a1",
            "text": "apple orchard",
            "form": "MATCH",
            "expected": ["apples"],
            "hard_class": "normal",
        },
        {
            "id": "a2",
            "text": "yellow tropical",
            "form": "GAP",
            "expected": ["bananas"],
            "hard_class": "prose-free",
        },
        {"id": "a3", "text": "zeppelin", "form": "GAP", "expected": []},
    ],
    "beta-set": [
        {"id": "b1", "text": "red stone fruit", "form": "MATCH", "expected": ["cherries"]},
        {"id": "b2", "text": "desert palms", "form": "GAP", "expected": ["dates"], "hard_class": "normal"},
    ],
}
GOOD: dict[str, Any] = {
    "apple orchard": ["apples#1", "apples#2", "bananas"],
    "yellow tropical": ["bananas", "apples"],
    "zeppelin": [],
    "red stone fruit": ["cherries", "dates"],
    "desert palms": ["dates#0", "cherries"],
}
WORSE_ALPHA: dict[str, Any] = {
    **GOOD,
    "apple orchard": ["bananas", "cherries", "dates", "apples"],
    "yellow tropical": ["apples", "cherries", "dates", "bananas"],
}


@dataclass
class Project:
    """A goldeneval project in a temporary folder."""

    root: Path
    rankings: Path
    config: Path

    def set_rankings(self, rankings: Mapping[str, Any]) -> None:
        self.rankings.write_text(json.dumps(rankings), encoding="utf-8")

    @property
    def tables(self) -> Path:
        return self.root / ".goldeneval" / "tables"

    @property
    def store(self) -> Path:
        return self.root / ".goldeneval" / "results.duckdb"


def write_project(
    root: Path,
    *,
    sets: Mapping[str, list[dict[str, Any]]] = SETS,
    retrievers: Mapping[str, Any] | None = None,
    privacy: str = "full",
    alerts: Mapping[str, Any] | None = None,
    rankings: Mapping[str, Any] = GOOD,
) -> Project:
    """Sets with a shared corpus, the fixed-rankings plugin and goldeneval.yaml under ``root``.

    Put ``root`` on ``sys.path`` (and ``PYTHONPATH`` for child processes) to load the plugin.
    """
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{PLUGIN_MODULE}.py").write_text(PLUGIN, encoding="utf-8")
    corpus = root / "corpus"
    corpus.mkdir(exist_ok=True)
    for doc_id, text in CORPUS.items():
        (corpus / f"{doc_id}.md").write_text(text, encoding="utf-8")
    (root / "sets").mkdir(exist_ok=True)
    for set_id, questions in sets.items():
        content = {"id": set_id, "corpus": "../corpus", "questions": questions}
        (root / "sets" / f"{set_id}.yaml").write_text(yaml.safe_dump(content), encoding="utf-8")
    project = Project(root=root, rankings=root / "rankings.json", config=root / "goldeneval.yaml")
    project.set_rankings(rankings)
    config = {
        "sets": [f"sets/{set_id}.yaml" for set_id in sets],
        "retrievers": retrievers
        or {
            "fixed": {
                "id": f"{PLUGIN_MODULE}:build",
                "options": {"rankings": str(project.rankings)},
                # The plugin cannot say what it searched: the operator declares it (ADR-215, 1).
                "provenance": FIXED_PROVENANCE,
            },
            "lexical": {"id": "goldeneval.lexical"},
        },
        "privacy": privacy,
        "alerts": dict(alerts or {}),
        "timeout_s": 30,
    }
    project.config.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return project


# --------------------------------------------------------------------------- webhook


@dataclass
class Webhook:
    """A real HTTP server on 127.0.0.1 that records every JSON body POSTed to it."""

    url: str
    received: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    fail_next: int = 0
    """Answer this many requests with HTTP 500 before accepting again."""


@contextmanager
def webhook_server() -> Iterator[Webhook]:
    lock = threading.Lock()
    hook = Webhook(url="")

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            with lock:
                if hook.fail_next > 0:
                    hook.fail_next -= 1
                    self.send_response(500)
                    self.end_headers()
                    return
                hook.paths.append(self.path)
                content_type = self.headers.get("Content-Type", "")
                if content_type.startswith("application/json"):
                    hook.received.append(json.loads(body))
                else:  # Slack's Web API client posts form data
                    from urllib.parse import parse_qs

                    hook.received.append({k: v[0] for k, v in parse_qs(body.decode()).items()})
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(b'{"ok": true}')

        def log_message(self, format: str, *args: Any) -> None:  # silence the test output
            pass

    server = LocalTestServer(("127.0.0.1", 0), Handler)
    hook.url = f"http://127.0.0.1:{server.server_address[1]}/hook"
    thread = threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL_S,), name="webhook", daemon=True)
    thread.start()
    try:
        yield hook
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


# --------------------------------------------------------------------------- in-process runs

QUIET: dict[str, Any] = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}


def definitions(project: Project) -> dg.Definitions:
    return build_definitions(project.config)


def partition_keys(defs: dg.Definitions) -> list[str]:
    partitions = defs.resolve_job_def(NIGHTLY_JOB).partitions_def
    assert partitions is not None
    return [str(key) for key in partitions.get_partition_keys()]


def run_nightly(
    defs: dg.Definitions, instance: dg.DagsterInstance, keys: list[str] | None = None
) -> list[dg.ExecuteInProcessResult]:
    job = defs.resolve_job_def(NIGHTLY_JOB)
    return [
        job.execute_in_process(partition_key=key, instance=instance, run_config=QUIET)
        for key in keys or partition_keys(defs)
    ]


def tick_regression_sensor(
    defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None = None
) -> dg.SensorExecutionData:
    sensor = defs.resolve_sensor_def(REGRESSION_SENSOR)
    return sensor.evaluate_tick(sensor_context(defs, instance, cursor))


def tick_cli_run_sensor(
    defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None = None, name: str = "cli_run_series_sensor"
) -> dg.SensorExecutionData:
    """One tick of a CLI-run sensor, its observations reported to the instance as the daemon does."""
    tick = defs.resolve_sensor_def(name).evaluate_tick(sensor_context(defs, instance, cursor))
    for event in tick.asset_events:
        instance.report_runless_asset_event(event)
    return tick


def run_requests(
    defs: dg.Definitions, instance: dg.DagsterInstance, tick: dg.SensorExecutionData
) -> list[dg.ExecuteInProcessResult]:
    """Execute what a regression sensor tick asked for, tagged as the daemon would tag it."""
    job = defs.resolve_job_def(REGRESSION_JOB)
    results = []
    for request in tick.run_requests or []:
        run_config = {**request.run_config, **QUIET}
        tags = {**request.tags, RUN_KEY_TAG: request.run_key or "", SENSOR_NAME_TAG: REGRESSION_SENSOR}
        results.append(
            job.execute_in_process(
                partition_key=request.partition_key, run_config=run_config, tags=tags, instance=instance
            )
        )
    return results


def tick_alert_sensor(
    defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None = None
) -> dg.SensorExecutionData:
    sensor = defs.resolve_sensor_def(ALERT_SENSOR)
    context = dg.build_sensor_context(
        instance=instance,
        cursor=cursor,
        definitions=defs,
        resources={"alerts": (defs.resources or {})["alerts"]},
    )
    return sensor.evaluate_tick(context)


def latest_metadata(instance: dg.DagsterInstance, asset: str, partition: str) -> dict[str, Any]:
    records = instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[partition]), limit=1
    ).records
    assert records and records[0].asset_materialization is not None, f"{asset} {partition} not materialised"
    return dict(records[0].asset_materialization.metadata)


def materialisations(instance: dg.DagsterInstance, asset: str) -> list[dg.EventLogRecord]:
    return list(instance.fetch_materializations(dg.AssetKey(asset), limit=1000, ascending=True).records)
