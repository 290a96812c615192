"""Retention reaches Dagster's event log (issue 43): ``python -m pipelines.purge`` deletes the
purged runs from the store and the Dagster runs that made and judged them, with their events,
so that no summary, check description or observation of a purged run stays in the instance."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest

from assets import NO_REGRESSION, RUN_COMPLETE
from goldeneval.store import open_store
from goldeneval.store.parquet import file_run_id
from pipelines.build import build_definitions
from pipelines.config import PROJECT_DIR
from pipelines.jobs import NIGHTLY_JOB
from tests.dagster_support import QUIET, SETS, write_project
from tests.test_dagster_main import _main

pytestmark = pytest.mark.slow  # the nightly job in a child process; CI runs it

IN_PROCESS: dict[str, Any] = {**QUIET, "execution": {"config": {"in_process": {}}}}


def _purge(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "GOLDENEVAL_CONFIG": str(root / "goldeneval.yaml"),
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    command = [sys.executable, "-m", "pipelines.purge", *args]
    return subprocess.run(command, cwd=PROJECT_DIR, env=env, capture_output=True, text=True, timeout=300, check=False)


def test_purge_leaves_no_event_of_a_purged_run_in_the_instance(tmp_path: Path) -> None:
    project = write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    home = tmp_path / "dagster_home"
    nightly = _main(tmp_path, home)
    assert nightly.returncode == 0, nightly.stderr
    store = open_store(project.store)
    stored = store.list_runs()
    assert stored
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = [run.run_id for run in instance.get_runs()]
        assert before and instance.fetch_materializations(dg.AssetKey("evaluation_summary"), limit=10).records

    # each series' only run is its accepted level: retention keeps it, as goldeneval purge does
    levels = _purge(tmp_path, home, "--older-than", "0m")
    assert levels.returncode == 0, levels.stderr
    assert levels.stdout.startswith("Deleted 0 run(s), 0 Parquet table file(s), 0 HTML report(s) and 0 Dagster run(s)")
    assert f"Kept {len(stored)} run(s): accepted levels of their series." in levels.stdout
    assert len(store.list_runs()) == len(stored)

    dry = _purge(tmp_path, home, "--older-than", "0m", "--dry-run", "--including-levels")
    assert dry.returncode == 0, dry.stderr
    assert f"Would delete {len(stored)} run(s)" in dry.stdout
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert [run.run_id for run in instance.get_runs()] == before

    purged = _purge(tmp_path, home, "--older-than", "0m", "--including-levels")
    assert purged.returncode == 0, purged.stderr
    assert store.list_runs() == []
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_runs() == []
        for run_id in before:
            assert instance.get_records_for_run(run_id=run_id).records == []
        for asset in ("evaluation_summary", "regression_check", "question_hits"):
            assert instance.fetch_materializations(dg.AssetKey(asset), limit=10).records == []
        for asset, check in (("evaluation_summary", RUN_COMPLETE), ("regression_check", NO_REGRESSION)):
            key = dg.AssetCheckKey(dg.AssetKey(asset), check)
            assert instance.event_log_storage.get_asset_check_execution_history(key, limit=10) == []


def nightly_job(config: str) -> dg.JobDefinition:
    """The nightly job of a suite file, rebuilt by Dagster from this name and the file's path
    (a job re-executed in process must be reconstructable)."""
    return build_definitions(config).resolve_job_def(NIGHTLY_JOB)


def test_purge_deletes_a_re_executed_partitions_runs_events_and_table_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A partition re-executed in full, then its re-execution re-executed: three Dagster runs
    of one night (one root), each with its events and Parquet files; the store holds the
    night once, and purging it leaves none of them."""
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GOLDENEVAL_STORE", raising=False)
    project = write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    home = tmp_path / "dagster_home"
    nightly = _main(tmp_path, home, "--partition", "alpha-set|fixed")
    assert nightly.returncode == 0, nightly.stderr
    store = open_store(project.store)
    [stored] = store.list_runs()
    assert stored.tables_run_id is not None
    job = dg.build_reconstructable_job(__name__, nightly_job.__name__, reconstructable_args=(str(project.config),))
    night = [stored.tables_run_id]
    with dg.DagsterInstance.from_config(str(home)) as instance:
        before = {run.run_id for run in instance.get_runs()}  # the night's run and its regression check's
        first = instance.get_run_by_id(night[0])
        assert first is not None
        tags = {"dagster/partition": first.tags["dagster/partition"]}
        for _ in range(2):
            options = dg.ReexecutionOptions(parent_run_id=night[-1])
            with dg.execute_job(job, instance, run_config=IN_PROCESS, tags=tags, reexecution_options=options) as again:
                assert again.success
                night.append(again.run_id)
        assert {instance.get_run_by_id(r).root_run_id for r in night[1:]} == {night[0]}  # type: ignore[union-attr]
        assert {run.run_id for run in instance.get_runs()} == before | set(night)
    assert [run.id for run in store.list_runs()] == [stored.id]  # the same night: stored once
    written = {file_run_id(path) for path in project.tables.rglob("*.parquet")}
    assert written == set(night)  # each run wrote its own table files

    purged = _purge(tmp_path, home, "--older-than", "0m", "--including-levels")
    assert purged.returncode == 0, purged.stderr
    assert "Deleted 1 run(s), " in purged.stdout
    assert f" and {len(before | set(night))} Dagster run(s) with their events." in purged.stdout
    assert store.list_runs() == []
    assert list(project.tables.rglob("*.parquet")) == []
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert instance.get_runs() == []
        for run_id in night:
            assert instance.get_records_for_run(run_id=run_id).records == []
        for asset in ("evaluation_summary", "question_hits", "retriever_rankings"):
            assert instance.fetch_materializations(dg.AssetKey(asset), limit=10).records == []
        key = dg.AssetCheckKey(dg.AssetKey("evaluation_summary"), RUN_COMPLETE)
        assert instance.event_log_storage.get_asset_check_execution_history(key, limit=10) == []


def test_a_bad_duration_is_one_line(tmp_path: Path) -> None:
    write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    result = _purge(tmp_path, tmp_path / "dagster_home", "--older-than", "soon")
    assert result.returncode == 3
    assert result.stderr == (
        "goldeneval: error: duration 'soon': expected a whole number and a unit m, h, d or w (e.g. 30d)\n"
    )
