"""Issue 25, defect 1: a run that dies mid-step must not keep the goldeneval_store pool slot.

deploy/dagster.yaml's ``run_monitoring`` block, with test-sized intervals, on the PostgreSQL
instance it configures: the daemon launches a nightly run, the run's process group is killed
with SIGKILL while its summary step holds the only slot (what stopping the daemon under the
default launcher, or an evicted pod, does to a run in flight), the daemon is started again, and
the next run of the job finishes — the monitoring daemon fails the dead run once it has run for
``max_runtime_seconds`` and frees its slot ``free_slots_after_run_end_seconds`` after its end.
Without the block the slot stays claimed and the next run blocks for good.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar

import dagster as dg
import pytest
import yaml

from assets.names import STORE_POOL
from goldeneval.store import ResultStore
from pipelines.config import PROJECT_DIR
from pipelines.jobs import NIGHTLY_JOB
from tests.dagster_support import FIXED_PROVENANCE, PLUGIN_MODULE, SETS, Project, write_project
from tests.test_dagster_postgres_instance import BIN, pg_environment

EXAMPLE = PROJECT_DIR / "deploy" / "dagster.yaml"
PARTITION = "fixed|alpha-set"
TEST_SIZED = {"poll_interval_seconds": 1, "max_runtime_seconds": 60, "free_slots_after_run_end_seconds": 1}
"""The shipped block's intervals, shrunk so the test takes a minute or two, not an hour."""
GAP_S = 30.0
"""The next run starts at least this long after the dead one: every run, the next one too, is
failed after ``max_runtime_seconds``, so the next one needs this head start to finish inside its
own limit once the slot is free (a blocked step looks again up to 15 s later)."""
PID = re.compile(r"Started process for run \(pid: (\d+)\)")
T = TypeVar("T")


EMBEDDED = PROJECT_DIR / "pipelines" / "dagster.yaml"


@pytest.mark.parametrize("path", [EXAMPLE, EMBEDDED], ids=["deploy", "embedded"])
def test_the_shipped_instance_files_monitor_runs_and_free_the_slots_of_dead_ones(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = yaml.safe_load(path.read_text(encoding="utf-8"))
    block = config["run_monitoring"]
    assert block["enabled"] is True
    assert block["free_slots_after_run_end_seconds"] > 0, "a dead run's pool slot would never come back"
    # The default launcher has no worker health check: the runtime limit is what fails a dead run.
    assert 0 < block["max_runtime_seconds"] <= 4 * 3600, "longer than the nightly window"
    assert block["max_resume_run_attempts"] == 0, "the default launcher cannot resume a run"
    assert 0 < block["poll_interval_seconds"] <= block["free_slots_after_run_end_seconds"]
    # The whole file is valid instance config for the installed Dagster (every key is one it knows).
    from dagster._config import process_config
    from dagster._core.instance.config import dagster_instance_config_schema

    for name in ("USERNAME", "PASSWORD", "HOST", "DB"):
        monkeypatch.setenv(f"DAGSTER_PG_{name}", "x")
    monkeypatch.setenv("DAGSTER_PG_PORT", "5432")
    result = process_config(dagster_instance_config_schema(), config)
    assert result.success, result.errors


def _project(root: Path) -> Project:
    """One partition (fixed x alpha-set): the fixed-rankings plug-in on one set."""
    rankings = root / "rankings.json"
    retrievers = {
        "fixed": {
            "id": f"{PLUGIN_MODULE}:build",
            "options": {"rankings": str(rankings)},
            "provenance": FIXED_PROVENANCE,
        }
    }
    return write_project(root, sets={"alpha-set": SETS["alpha-set"]}, retrievers=retrievers)


def _home(home: Path) -> None:
    """deploy/dagster.yaml as shipped, but for the test-sized monitoring intervals."""
    config = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    config["run_monitoring"] = {**config["run_monitoring"], **TEST_SIZED}
    home.mkdir(parents=True, exist_ok=True)
    (home / "dagster.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def _wait(what: str, probe: Callable[[], T | None], timeout_s: float, log: Path) -> T:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.2)
    tail = log.read_text(errors="replace")[-4000:] if log.exists() else ""
    raise AssertionError(f"timed out after {timeout_s:g} s waiting for {what}\n--- {log.name}\n{tail}")


@contextlib.contextmanager
def daemon(env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """``dagster-daemon run`` in its own process group, as a service manager starts it."""
    with log.open("ab") as out:
        process = subprocess.Popen(
            [str(BIN / "dagster-daemon"), "run", "-w", "workspace.yaml"],
            cwd=PROJECT_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield process
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=30)


def _launch(env: dict[str, str], run_id: str) -> None:
    """Queue one nightly run of the partition, as the schedule would (the daemon starts it)."""
    set_id, retriever = "alpha-set", "fixed"
    tags = {"dagster/partition": PARTITION, "dagster/partition/set": set_id, "dagster/partition/retriever": retriever}
    launched = subprocess.run(
        [
            *(str(BIN / "dagster"), "job", "launch", "-w", "workspace.yaml", "-j", NIGHTLY_JOB),
            *("--run-id", run_id, "--tags", json.dumps(tags)),
        ],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert launched.returncode == 0, launched.stdout[-2000:] + launched.stderr[-4000:]


def _holders(instance: dg.DagsterInstance) -> set[str]:
    """The runs holding a slot of the store pool now."""
    info = instance.event_log_storage.get_concurrency_info(STORE_POOL)
    return {slot.run_id for slot in info.claimed_slots}


def _run_worker_pid(instance: dg.DagsterInstance, run_id: str) -> int:
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        found = PID.search(entry.message or "")
        if found:
            return int(found.group(1))
    raise AssertionError(f"run {run_id}: no 'Started process for run' event")


@pytest.mark.slow
def test_a_run_killed_mid_step_gives_its_pool_slot_back_and_the_next_run_finishes(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "project")
    home = tmp_path / "dagster_home"
    _home(home)
    env = {
        **os.environ,
        **pg_environment(postgres_url),
        "DAGSTER_HOME": str(home),
        "GOLDENEVAL_CONFIG": str(project.config),
        "PYTHONPATH": os.pathsep.join([str(project.root), str(PROJECT_DIR), os.environ.get("PYTHONPATH", "")]),
    }
    for name, value in pg_environment(postgres_url).items():
        monkeypatch.setenv(name, value)
    log = tmp_path / "daemon.log"
    dead, following = str(uuid.uuid4()), str(uuid.uuid4())
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.run_monitoring_enabled
        assert instance.event_log_storage.get_concurrency_info(STORE_POOL).limit == 1

        # 1. a nightly run, killed (its whole process group, SIGKILL) while it holds the slot
        with daemon(env, log) as first:
            _launch(env, dead)
            _wait("the run to take the store slot", lambda: dead in _holders(instance), 300, log)
            worker = _run_worker_pid(instance, dead)
            group = os.getpgid(worker)
            # Under the default launcher the run worker is a child of the daemon's code server,
            # in the daemon's process group: stopping the daemon is killing the run.
            assert group == first.pid
            os.killpg(group, signal.SIGKILL)
            first.wait(timeout=30)
        record = instance.get_run_record_by_id(dead)
        assert record is not None and record.start_time is not None
        assert record.dagster_run.status == dg.DagsterRunStatus.STARTED  # nobody said it died
        assert _holders(instance) == {dead}

        # 2. the daemon again, and the next run of the job
        with daemon(env, log):
            time.sleep(max(0.0, record.start_time + GAP_S - time.time()))
            assert _holders(instance) == {dead}, "the slot came back without run monitoring"
            _launch(env, following)

            def finished() -> dg.DagsterRun | None:
                run = instance.get_run_by_id(following)
                return run if run is not None and run.is_finished else None

            limit = TEST_SIZED["max_runtime_seconds"]
            # A guard, not a timing: the run ends only once run monitoring has freed the slot.
            next_run = _wait("the next run to finish", finished, limit + 240, log)

        assert next_run.status == dg.DagsterRunStatus.SUCCESS, log.read_text(errors="replace")[-4000:]
        dead_run = instance.get_run_by_id(dead)
        assert dead_run is not None and dead_run.status == dg.DagsterRunStatus.FAILURE
        failures = instance.all_logs(dead, of_type=dg.DagsterEventType.RUN_FAILURE)
        assert any("maximum runtime" in (e.message or "") or "forcibly" in (e.message or "") for e in failures)
        assert dead not in _holders(instance)
        next_record = instance.get_run_record_by_id(following)
        assert next_record is not None and next_record.end_time is not None

    stored = ResultStore(project.store).list_runs()
    assert [(r.model, r.set_id) for r in stored] == [("fixed", "alpha-set")]
