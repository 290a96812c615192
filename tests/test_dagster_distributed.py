"""The nightly job on the dask executor (``GOLDENEVAL_EXECUTOR=dask``, pipelines/executors.py)
gives what the in-process executor gives.

One dask ``LocalCluster`` (2 single-threaded worker processes) serves every run: the four
(set x retriever) partitions are launched at once, each with ``dagster job execute`` in its own
process (as the run launcher would), and their steps run on the cluster's workers, so the
partitions run in parallel and write the DuckDB result store concurrently.  The same partitions
are then run in process on another instance and store.  After the regression sensor and the
alert sensor have run on each, both sides hold the same stored runs (set, series, rates,
fingerprints), the same asset check results and the same alerts.
"""

from __future__ import annotations

import itertools
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from assets import NO_REGRESSION, RUN_COMPLETE
from goldeneval.store import ResultStore
from pipelines.build import build_definitions
from pipelines.config import PROJECT_DIR
from pipelines.executors import DASK_SCHEDULER_ENV, DASK_WORKERS_ENV, EXECUTOR_ENV, dask_executor_config
from pipelines.jobs import NIGHTLY_JOB, REGRESSION_JOB
from pipelines.main import INSTANCE_TEMPLATE
from pipelines.sensors import check_executions_after
from tests.dagster_support import (
    GOOD,
    SETS,
    Webhook,
    partition_keys,
    run_nightly,
    run_requests,
    tick_alert_sensor,
    tick_regression_sensor,
    webhook_server,
)
from tests.dagster_support import write_project as write_dagster_project

BIN = Path(sys.executable).parent
VOLATILE_ALERT_FIELDS = ("run_id", "run_url", "stored_run_id")
VOLATILE_CHECK_METADATA = ("stored_run_id", "previous_run_id", "report")
"""Each side's own: the report's path names its stored run and its tables folder."""

# --------------------------------------------------------------------------- selection (fast)


def test_the_default_executor_is_dagsters_own(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(EXECUTOR_ENV, raising=False)
    project = write_dagster_project(tmp_path)
    defs = build_definitions(project.config)
    assert defs.resolve_job_def(NIGHTLY_JOB).executor_def.name == "multi_or_in_process_executor"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_goldeneval_executor_dask_puts_the_nightly_job_on_dask(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = write_dagster_project(tmp_path)
    monkeypatch.setenv(EXECUTOR_ENV, "dask")
    monkeypatch.delenv(DASK_SCHEDULER_ENV, raising=False)
    monkeypatch.setenv(DASK_WORKERS_ENV, "3")
    defs = build_definitions(project.config)
    assert defs.resolve_job_def(NIGHTLY_JOB).executor_def.name == "dask"
    assert dask_executor_config() == {
        "cluster": {"local": {"n_workers": 3, "threads_per_worker": 1, "processes": True}}
    }
    # only the nightly job: the small sensor-launched regression check keeps the default
    assert defs.resolve_job_def(REGRESSION_JOB).executor_def.name == "multi_or_in_process_executor"
    monkeypatch.setenv(DASK_SCHEDULER_ENV, "tcp://127.0.0.1:8786")
    assert dask_executor_config() == {"cluster": {"existing": {"address": {"env": DASK_SCHEDULER_ENV}}}}


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
@pytest.mark.parametrize(("name", "value"), [(EXECUTOR_ENV, "celery"), (DASK_WORKERS_ENV, "0")])
def test_an_unknown_executor_or_worker_count_is_refused_when_the_definitions_load(
    name: str, value: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = write_dagster_project(tmp_path)
    monkeypatch.setenv(EXECUTOR_ENV, "dask")
    monkeypatch.delenv(DASK_SCHEDULER_ENV, raising=False)
    monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=f"{name}="):
        build_definitions(project.config)


@pytest.mark.slow  # 1.6 s of processor time alone (dask's import), 2.0 s under load: over the lane's limit
def test_a_step_call_is_opaque_to_dask() -> None:
    """dask walks tuples (a DagsterRun is one, holding a record that refuses iteration): the
    step's arguments must travel as one object that is not a tuple."""
    from pipelines.dask_executor import StepCall  # dagster-dask and dask: 1.4 s, for this test alone

    call = StepCall(None, None, None, ["s"], None, None)
    assert not isinstance(call, (tuple, list, dict, set))


# --------------------------------------------------------------------------- dask vs in process


@dataclass
class Side:
    """One execution of the nightly partitions: its instance home, suite file and store."""

    name: str
    home: Path
    config: Path

    @property
    def store(self) -> Path:
        return self.config.parent / f".goldeneval-{self.name}" / "results.duckdb"


def _side(root: Path, name: str) -> Side:
    """A suite file of its own (its own store, tables and cache) beside the shared project."""
    config = yaml.safe_load((root / "goldeneval.yaml").read_text(encoding="utf-8"))
    config["storage"] = {
        "store": f".goldeneval-{name}/results.duckdb",
        "tables": f".goldeneval-{name}/tables",
        "cache": f".goldeneval-{name}/cache",
    }
    path = root / f"goldeneval-{name}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    home = root / f"dagster_home_{name}"
    home.mkdir()
    shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)):
        pass  # create the instance's databases once, before processes race to
    return Side(name, home, path)


@contextmanager
def local_cluster(workdir: Path) -> Iterator[Any]:
    """A dask LocalCluster of 2 single-threaded worker processes, spawned with this process's
    environment and ``sys.path`` (the workers import pipelines.definitions and the plugin)."""
    from dask.distributed import LocalCluster

    make: Any = LocalCluster
    cluster = make(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        host="127.0.0.1",
        local_directory=str(workdir),
    )
    try:
        yield cluster
    finally:
        cluster.close()


def _launch_all(side: Side, keys: list[str], env: dict[str, str], logs: Path) -> None:
    """Every partition at once, each a run in its own ``dagster job execute`` process."""
    processes = []
    for key in keys:
        retriever, set_id = key.split("|")
        tags = {"dagster/partition": key, "dagster/partition/set": set_id, "dagster/partition/retriever": retriever}
        command = [str(BIN / "dagster"), "job", "execute", "-m", "pipelines.definitions", "-a", "defs"]
        command += ["-j", NIGHTLY_JOB, "--tags", json.dumps(tags)]
        log = (logs / f"{retriever}-{set_id}.log").open("wb")
        processes.append(
            (subprocess.Popen(command, cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT), log)
        )
    try:
        for process, _ in processes:
            process.wait(timeout=480)
    finally:
        for process, log in processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
            log.close()
    failed = [Path(log.name) for process, log in processes if process.returncode != 0]
    assert failed == [], "\n\n".join(f"{path.name}:\n{path.read_text()[-4000:]}" for path in failed)


def _dask_env(side: Side, scheduler: str, plugin_root: Path) -> dict[str, str]:
    return {
        **os.environ,
        "DAGSTER_HOME": str(side.home),
        "GOLDENEVAL_CONFIG": str(side.config),
        EXECUTOR_ENV: "dask",
        DASK_SCHEDULER_ENV: scheduler,
        "PYTHONPATH": os.pathsep.join([str(plugin_root), str(PROJECT_DIR), os.environ.get("PYTHONPATH", "")]),
    }


def _sensors(side: Side, webhook: Webhook) -> list[dict[str, Any]]:
    """What the daemon would do next: the regression checks, then the alerts; the alerts sent."""
    defs = build_definitions(side.config)
    before = len(webhook.received)
    with dg.DagsterInstance.from_config(str(side.home)) as instance:
        tick = tick_regression_sensor(defs, instance)
        assert all(r.success for r in run_requests(defs, instance, tick))
        tick_alert_sensor(defs, instance)
    return [{k: v for k, v in alert.items() if k not in VOLATILE_ALERT_FIELDS} for alert in webhook.received[before:]]


def _stored(side: Side) -> list[tuple[Any, ...]]:
    return sorted(
        (
            r.set_id,
            r.model,
            r.retriever_id,
            r.grader,
            r.status,
            r.pass_rate,
            r.mean_score,
            r.question_count,
            r.scored_count,
            r.error_count,
            r.label_digest,
            r.benchmark_fingerprint,
            r.variant_fingerprint,
            r.privacy,
            tuple(sorted(r.provenance.items())),
        )
        for r in ResultStore(side.store).list_runs()
    )


def _checks(side: Side) -> list[tuple[Any, ...]]:
    """Every check execution: partition, check, status and its metadata (less run ids)."""
    found = []
    with dg.DagsterInstance.from_config(str(side.home)) as instance:
        for record in check_executions_after(instance, 0):
            event = record.event.dagster_event if record.event is not None else None
            evaluation = event.event_specific_data if event is not None else None
            assert isinstance(evaluation, dg.AssetCheckEvaluation), record
            metadata = {k: v.value for k, v in evaluation.metadata.items() if k not in VOLATILE_CHECK_METADATA}
            found.append(
                (record.partition, evaluation.check_name, record.status.value, json.dumps(metadata, sort_keys=True))
            )
    return sorted(found)


def _step_pids(side: Side) -> dict[str, set[int]]:
    """The processes that ran each run's steps."""
    with dg.DagsterInstance.from_config(str(side.home)) as instance:
        return {
            run.run_id: {
                int(e.dagster_event.pid)
                for e in instance.all_logs(run.run_id, of_type=dg.DagsterEventType.STEP_START)
                if e.dagster_event is not None and e.dagster_event.pid is not None
            }
            for run in instance.get_runs(filters=dg.RunsFilter(job_name=NIGHTLY_JOB))
        }


def _run_windows(side: Side) -> list[tuple[float, float]]:
    with dg.DagsterInstance.from_config(str(side.home)) as instance:
        windows = []
        for run in instance.get_runs(filters=dg.RunsFilter(job_name=NIGHTLY_JOB)):
            record = instance.get_run_record_by_id(run.run_id)
            assert record is not None and record.start_time is not None and record.end_time is not None
            windows.append((record.start_time, record.end_time))
        return windows


@pytest.mark.slow
def test_the_dask_run_matches_the_in_process_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from dask.distributed import Client as DaskClient

    client_of: Any = DaskClient
    with webhook_server() as webhook:
        # "yellow tropical" raises in the fixed retriever: fixed|alpha-set is incomplete, its
        # run_complete check fails (one alert) and its no_regression check is unknown.
        project = write_dagster_project(
            tmp_path / "project",
            sets=SETS,
            alerts={"webhook_url": webhook.url},
            rankings={**GOOD, "yellow tropical": "raise"},
        )
        monkeypatch.syspath_prepend(str(project.root))  # the fixed-rankings plugin, here and in workers
        dask_side = _side(project.root, "dask")
        local_side = _side(project.root, "inprocess")
        keys = partition_keys(build_definitions(dask_side.config))
        assert len(keys) == 4

        # The dask workers rebuild the job from pipelines.definitions, which reads GOLDENEVAL_CONFIG.
        monkeypatch.setenv("GOLDENEVAL_CONFIG", str(dask_side.config))
        with local_cluster(tmp_path) as cluster, client_of(cluster) as client:
            worker_pids = set(client.run(os.getpid).values())
            assert len(worker_pids) == 2
            _launch_all(dask_side, keys, _dask_env(dask_side, cluster.scheduler_address, project.root), tmp_path)
        monkeypatch.delenv("GOLDENEVAL_CONFIG")

        with dg.DagsterInstance.from_config(str(local_side.home)) as instance:
            assert all(r.success for r in run_nightly(build_definitions(local_side.config), instance, keys))

        dask_alerts = _sensors(dask_side, webhook)
        local_alerts = _sensors(local_side, webhook)

    # every step of every dask run ran on one of the cluster's workers, not in its run's process
    pids = _step_pids(dask_side)
    assert len(pids) == 4
    assert all(run_pids and run_pids <= worker_pids for run_pids in pids.values()), (pids, worker_pids)
    # the partitions ran at the same time: some runs overlapped
    windows = sorted(_run_windows(dask_side))
    assert any(later[0] < earlier[1] for earlier, later in itertools.pairwise(windows)), windows

    stored = _stored(dask_side)
    assert [(s[0], s[1], s[4]) for s in stored] == sorted(
        (k.split("|")[1], k.split("|")[0], "incomplete" if k == "fixed|alpha-set" else "complete") for k in keys
    )
    assert stored == _stored(local_side)

    checks = _checks(dask_side)
    assert sorted((c[0], c[1], c[2]) for c in checks) == sorted(
        (key, check, "FAILED" if key == "fixed|alpha-set" else "SUCCEEDED")
        for key in keys
        for check in (RUN_COMPLETE, NO_REGRESSION)
    )
    assert checks == _checks(local_side)

    assert len(dask_alerts) == 1
    assert (dask_alerts[0]["check"], dask_alerts[0]["set"], dask_alerts[0]["retriever"]) == (
        RUN_COMPLETE,
        "alpha-set",
        "fixed",
    )
    assert dask_alerts == local_alerts
