"""Several partitions at once, each a run in its own process with the multiprocess executor
(as the daemon launches them): every run succeeds, the store gets every run, and a
store-writing step that finds the goldeneval_store slot taken (the pool of 1 from
pipelines/dagster.yaml) waits until another one has finished.

Dagster's slot claim is check-then-act (SqlEventLogStorage.claim_concurrency_slot reads the
free slots, then assigns), so two steps that ask in the same instant can both take the one
slot (seen once in CI, 2 s of overlap). The store's own writer lock is what keeps their writes
apart (docs/guide/dagster.md); this test holds the pool to what it does give: a step it
blocked starts only after another has ended."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from assets import STORE_POOL
from goldeneval.store import ResultStore
from pipelines.config import PROJECT_DIR
from pipelines.jobs import NIGHTLY_JOB
from pipelines.main import INSTANCE_TEMPLATE
from tests.dagster_support import SETS, write_project

KEYS = ["lexical|alpha-set", "lexical|beta-set", "lexical-b|alpha-set", "lexical-b|beta-set"]


BLOCKED = f"Step blocked by limit for pool {STORE_POOL}"


def _blocked(instance: dg.DagsterInstance, run_id: str, step: str) -> bool:
    return any(e.step_key == step and (e.message or "").startswith(BLOCKED) for e in instance.all_logs(run_id))


def _step_window(instance: dg.DagsterInstance, run_id: str, step: str) -> tuple[float, float]:
    events = [
        e
        for e in instance.all_logs(run_id)
        if e.is_dagster_event and e.step_key == step and e.dagster_event is not None
    ]
    start = min(e.timestamp for e in events if e.dagster_event and e.dagster_event.event_type_value == "STEP_START")
    end = max(e.timestamp for e in events if e.dagster_event and e.dagster_event.event_type_value == "STEP_SUCCESS")
    return start, end


@pytest.mark.slow
def test_partitions_run_at_once_with_the_multiprocess_executor_and_one_store_writer(tmp_path: Path) -> None:
    retrievers = {
        "lexical": {"id": "goldeneval.lexical"},
        "lexical-b": {"id": "goldeneval.lexical", "options": {"b": 0.3}},
    }
    project = write_project(tmp_path, sets=SETS, retrievers=retrievers)
    home = tmp_path / "dagster_home"
    home.mkdir()
    shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
    with dg.DagsterInstance.from_config(str(home)):
        pass  # create the instance's databases once, before the runs race to
    env = {**os.environ, "DAGSTER_HOME": str(home), "GOLDENEVAL_CONFIG": str(project.config)}
    dagster = Path(sys.executable).with_name("dagster")
    processes = []
    for key in KEYS:
        retriever, set_id = key.split("|")
        tags = {
            "dagster/partition": key,
            "dagster/partition/set": set_id,
            "dagster/partition/retriever": retriever,
        }
        command = [str(dagster), "job", "execute", "-m", "pipelines.definitions", "-a", "defs"]
        command += ["-j", NIGHTLY_JOB, "--tags", json.dumps(tags)]
        log = (tmp_path / f"{retriever}-{set_id}.log").open("wb")
        processes.append(
            (subprocess.Popen(command, cwd=PROJECT_DIR, env=env, stdout=log, stderr=subprocess.STDOUT), log)
        )
    try:
        for process, _ in processes:
            process.wait(timeout=300)
    finally:
        for process, log in processes:
            if process.poll() is None:
                process.kill()
                process.wait(timeout=30)
            log.close()
    failed = [Path(log.name) for process, log in processes if process.returncode != 0]
    assert failed == [], "\n\n".join(f"{path.name}:\n{path.read_text()[-3000:]}" for path in failed)
    with dg.DagsterInstance.from_config(str(home)) as instance:
        runs = instance.get_runs()
        assert sorted(r.tags["dagster/partition"] for r in runs) == sorted(KEYS)
        assert all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        assert instance.event_log_storage.get_concurrency_info(STORE_POOL).slot_count == 1
        windows = {r.run_id: _step_window(instance, r.run_id, "evaluation_summary") for r in runs}
        blocked = [r.run_id for r in runs if _blocked(instance, r.run_id, "evaluation_summary")]
    # the four runs reach their summaries within a second of each other: some must have queued
    assert blocked, "no store-writing step ever waited for the goldeneval_store slot"
    for run_id in blocked:
        start, _ = windows[run_id]
        ends = [end for other, (_, end) in windows.items() if other != run_id]
        assert any(end <= start for end in ends), "a step the pool blocked started before any other had ended"
    stored = ResultStore(project.store).list_runs()
    assert sorted((r.model, r.set_id) for r in stored) == sorted(tuple(k.split("|")) for k in KEYS)
