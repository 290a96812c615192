"""Retention reaches Dagster's event log (issue 43): ``python -m pipelines.purge`` deletes the
purged runs from the store and the Dagster runs that made and judged them, with their events,
so that no summary, check description or observation of a purged run stays in the instance."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from assets import NO_REGRESSION, RUN_COMPLETE
from goldeneval.store import open_store
from pipelines.config import PROJECT_DIR
from tests.dagster_support import SETS, write_project
from tests.test_dagster_main import _main

pytestmark = pytest.mark.slow  # the nightly job in a child process; CI runs it


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

    dry = _purge(tmp_path, home, "--older-than", "0m", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"Would delete {len(stored)} run(s)" in dry.stdout
    with dg.DagsterInstance.from_config(str(home)) as instance:
        assert [run.run_id for run in instance.get_runs()] == before

    purged = _purge(tmp_path, home, "--older-than", "0m")
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


def test_a_bad_duration_is_one_line(tmp_path: Path) -> None:
    write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    result = _purge(tmp_path, tmp_path / "dagster_home", "--older-than", "soon")
    assert result.returncode == 3
    assert result.stderr == (
        "goldeneval: error: duration 'soon': expected a whole number and a unit m, h, d or w (e.g. 30d)\n"
    )
