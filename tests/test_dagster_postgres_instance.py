"""The Dagster instance on PostgreSQL, configured by deploy/dagster.yaml as it is shipped (its
credentials from DAGSTER_PG_* variables), against the throwaway cluster of tests/postgres_cluster.py.

The nightly job materialises every (set x retriever) partition into it; then ``dagster-daemon``
runs on the same instance, as in a deployment: its sensors tick (ticks and instigator state in
the schedule storage), the regression sensor's runs go through the queued run coordinator, and
the alert sensor posts the one alert of the failed check to a real webhook.  Everything is read
back both through the instance and with plain SQL on the PostgreSQL database.  The goldeneval
result store stays the default DuckDB file: this is the *Dagster* instance only.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import dagster as dg
import psycopg
import pytest
from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

from assets import NO_REGRESSION, RUN_COMPLETE
from goldeneval.store import ResultStore
from pipelines.config import PROJECT_DIR
from pipelines.jobs import NIGHTLY_JOB, REGRESSION_JOB
from pipelines.schedules import NIGHTLY_SCHEDULE
from pipelines.sensors import ALERT_SENSOR, REGRESSION_SENSOR
from tests.dagster_support import GOOD, SETS, Project, definitions, partition_keys, run_nightly, webhook_server
from tests.dagster_support import write_project as write_dagster_project

pytestmark = pytest.mark.slow

EXAMPLE = PROJECT_DIR / "deploy" / "dagster.yaml"
BIN = Path(sys.executable).parent
T = TypeVar("T")


def pg_environment(url: str) -> dict[str, str]:
    """The DAGSTER_PG_* variables deploy/dagster.yaml reads, for a postgresql:// URL."""
    parts = urlsplit(url)
    return {
        "DAGSTER_PG_USERNAME": parts.username or "postgres",
        # The throwaway cluster trusts local connections; a real one checks this.
        "DAGSTER_PG_PASSWORD": parts.password or "unused-by-trust-auth",
        "DAGSTER_PG_HOST": parts.hostname or "127.0.0.1",
        "DAGSTER_PG_PORT": str(parts.port or 5432),
        "DAGSTER_PG_DB": parts.path.lstrip("/"),
    }


@contextlib.contextmanager
def postgres_instance(home: Path, url: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[dg.DagsterInstance]:
    """A DAGSTER_HOME holding deploy/dagster.yaml, opened with the credentials of ``url``."""
    home.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(EXAMPLE, home / "dagster.yaml")
    for name, value in pg_environment(url).items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    with dg.DagsterInstance.from_config(str(home)) as instance:
        yield instance


def _sql(url: str, query: str, *params: Any) -> list[tuple[Any, ...]]:
    with psycopg.connect(url) as con:
        return list(con.execute(query, params).fetchall())


def _wait(what: str, probe: Callable[[], T | None], timeout_s: float, log: Path) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(1.0)
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}\n--- {log.name}\n{tail}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the daemon and every process it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=30)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=30)


def test_the_example_instance_config_reads_every_credential_from_the_environment() -> None:
    import yaml

    config = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    db = config["storage"]["postgres"]["postgres_db"]
    assert set(db) == {"username", "password", "hostname", "port", "db_name", "scheme"}
    assert all(set(db[key]) == {"env"} for key in set(db) - {"scheme"}), "a credential is written in the file"
    assert db["scheme"] == "postgresql+psycopg2"  # SQLAlchemy 2.1 maps postgresql:// to psycopg 3
    assert config["run_coordinator"]["class"] == "QueuedRunCoordinator"


def _project(root: Path, webhook_url: str) -> Project:
    # "yellow tropical" raises in the fixed retriever: fixed|alpha-set is incomplete, its
    # run_complete check fails and exactly one alert is due.
    return write_dagster_project(
        root, sets=SETS, alerts={"webhook_url": webhook_url}, rankings={**GOOD, "yellow tropical": "raise"}
    )


def test_the_nightly_job_and_the_daemon_on_the_postgres_instance(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    with webhook_server() as webhook:
        project = _project(tmp_path / "project", webhook.url)
        monkeypatch.syspath_prepend(str(project.root))  # the fixed-rankings plugin
        defs = definitions(project)
        keys = partition_keys(defs)
        assert len(keys) == 4
        home = tmp_path / "dagster_home"
        with postgres_instance(home, postgres_url, monkeypatch) as instance:
            assert isinstance(instance.run_storage, PostgresRunStorage)
            assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
            assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
            assert instance.event_log_storage.get_concurrency_info("goldeneval_store").limit == 1

            # 1. the nightly job, one run per partition, into PostgreSQL
            results = run_nightly(defs, instance)
            assert all(r.success for r in results)
            rows = _sql(postgres_url, "SELECT run_id, pipeline_name, status FROM runs")
            assert sorted((name, status) for _, name, status in rows) == [(NIGHTLY_JOB, "SUCCESS")] * 4
            assert {r.run_id for r in results} == {run_id for run_id, _, _ in rows}
            materialised = _sql(
                postgres_url,
                "SELECT asset_key, partition FROM event_logs WHERE dagster_event_type = 'ASSET_MATERIALIZATION'",
            )
            for asset in ("golden_question_sets", "retriever_rankings", "question_hits", "evaluation_summary"):
                found = sorted(partition for key, partition in materialised if key == f'["{asset}"]')
                assert found == sorted(keys), asset
            checks = _sql(
                postgres_url,
                "SELECT partition, execution_status FROM asset_check_executions WHERE check_name = %s",
                RUN_COMPLETE,
            )
            assert sorted(checks) == sorted(
                (key, "FAILED" if key == "fixed|alpha-set" else "SUCCEEDED") for key in keys
            )
            summary = instance.fetch_materializations(
                dg.AssetRecordsFilter(
                    asset_key=dg.AssetKey("evaluation_summary"), asset_partitions=["lexical|beta-set"]
                ),
                limit=1,
            ).records[0]
            assert summary.asset_materialization is not None
            assert summary.asset_materialization.metadata["top1_hit_rate"].value == "1.000"

            # 2. the daemon on the same instance: sensors tick, regression runs are queued and launched
            env = {
                **os.environ,
                **pg_environment(postgres_url),
                "DAGSTER_HOME": str(home),
                "GOLDENEVAL_CONFIG": str(project.config),
                "GOLDENEVAL_SENSOR_INTERVAL_S": "2",
                "PYTHONPATH": os.pathsep.join([str(project.root), str(PROJECT_DIR), os.environ.get("PYTHONPATH", "")]),
            }
            log = tmp_path / "daemon.log"
            with log.open("wb") as out:
                daemon = subprocess.Popen(
                    [str(BIN / "dagster-daemon"), "run", "-w", "workspace.yaml"],
                    cwd=PROJECT_DIR,
                    env=env,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            try:

                def regression_runs_done() -> list[dg.DagsterRun] | None:
                    runs = list(instance.get_runs(filters=dg.RunsFilter(job_name=REGRESSION_JOB)))
                    done = len(runs) == len(keys) and all(r.is_finished for r in runs)
                    return runs if done else None

                regression_runs = _wait("the regression sensor's runs", regression_runs_done, 900, log)
                _wait("the alert", lambda: webhook.received, 300, log)
                time.sleep(3)  # a second alert, if one were (wrongly) due, would come within a tick
            finally:
                _stop(daemon)

            assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in regression_runs), log.read_text()[-4000:]
            assert sorted(str(r.tags["dagster/partition"]) for r in regression_runs) == sorted(keys)
            assert len(webhook.received) == 1, webhook.received
            alert = webhook.received[0]
            assert (alert["check"], alert["set"], alert["retriever"]) == (RUN_COMPLETE, "alpha-set", "fixed")

            verdicts = _sql(
                postgres_url,
                "SELECT partition, execution_status FROM asset_check_executions WHERE check_name = %s",
                NO_REGRESSION,
            )
            # the first run of each series is a baseline (passes); the incomplete one is unknown (fails)
            assert sorted(verdicts) == sorted(
                (key, "FAILED" if key == "fixed|alpha-set" else "SUCCEEDED") for key in keys
            )

            # 3. the schedule storage: the sensors' state and ticks, in PostgreSQL
            states = {state.name: state for state in instance.all_instigator_state()}
            assert {REGRESSION_SENSOR, ALERT_SENSOR} <= set(states)
            ticks = _sql(postgres_url, "SELECT selector_id, status FROM job_ticks")
            assert ticks, "no tick in the schedule storage"
            regression_selector = states[REGRESSION_SENSOR].selector_id
            assert (regression_selector, "SUCCESS") in {(selector, status) for selector, status in ticks}
            assert NIGHTLY_SCHEDULE in {s.name for s in defs.schedules or []}

        stored = ResultStore(project.store).list_runs()
        assert sorted((r.model, r.set_id) for r in stored) == sorted(tuple(k.split("|")) for k in keys)
