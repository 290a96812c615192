"""The README's main command (python -m pipelines.main, behind scripts/main.sh): every asset
partition materialised with float hit rates and evaluated checks, a summary printed, and a
seeded regression alerted exactly once at a real webhook."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pytest

from pipelines.config import PROJECT_DIR
from tests.dagster_support import ASSETS, SETS, WORSE_ALPHA, Webhook, webhook_server, write_project

pytestmark = pytest.mark.slow  # the in-process asset graph: seconds per test; CI runs it

KEYS = ["fixed|alpha-set", "lexical|alpha-set"]


@dataclass
class MainRuns:
    home: Path
    first: subprocess.CompletedProcess[str]
    second: subprocess.CompletedProcess[str]
    webhook: Webhook


def _main(root: Path, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m pipelines.main *args`` on the project under ``root``, instance in ``home``."""
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "GOLDENEVAL_CONFIG": str(root / "goldeneval.yaml"),
        "PYTHONPATH": os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "pipelines.main", *args],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def main_runs(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MainRuns]:
    root = tmp_path_factory.mktemp("main")
    with webhook_server() as webhook:
        project = write_project(root, sets={"alpha-set": SETS["alpha-set"]}, alerts={"webhook_url": webhook.url})
        home = root / "dagster_home"
        first = _main(root, home)
        project.set_rankings(WORSE_ALPHA)
        second = _main(root, home)
        yield MainRuns(home, first, second, webhook)


def test_both_invocations_succeed(main_runs: MainRuns) -> None:
    assert main_runs.first.returncode == 0, main_runs.first.stderr[-3000:]
    assert main_runs.second.returncode == 0, main_runs.second.stderr[-3000:]


def test_the_summary_prints_rates_per_partition_and_where_things_are(main_runs: MainRuns) -> None:
    lines = main_runs.second.stdout.splitlines()
    fixed = next(line for line in lines if line.startswith("alpha-set") and " fixed " in line)
    assert fixed.split()[:5] == ["alpha-set", "fixed", "0.333", "0.333", "regression"]
    assert "no_regression failed" in fixed
    assert any(line.startswith("Result store:") and line.endswith("results.duckdb") for line in lines)
    assert f"Dagster home:    {main_runs.home}" in lines
    assert any("dagster dev" in line and "dg dev" in line for line in lines)


def test_the_instance_holds_every_asset_partition_with_float_rates_and_checks(main_runs: MainRuns) -> None:
    with dg.DagsterInstance.from_config(str(main_runs.home)) as instance:
        for asset in ASSETS:
            records = instance.fetch_materializations(dg.AssetKey(asset), limit=100).records
            assert sorted({r.partition_key or "" for r in records}) == KEYS, asset
        summary = instance.fetch_materializations(dg.AssetKey("evaluation_summary"), limit=1).records[0]
        assert summary.asset_materialization is not None
        # a text, never a float: the UI would plot it as one line across partitions
        assert isinstance(summary.asset_materialization.metadata["top1_hit_rate"], dg.TextMetadataValue)
        check = dg.AssetCheckKey(dg.AssetKey("regression_check"), "no_regression")
        history = instance.event_log_storage.get_asset_check_execution_history(check, limit=10)
        assert sorted(r.status.value for r in history) == ["FAILED", "SUCCEEDED", "SUCCEEDED", "SUCCEEDED"]


def test_the_seeded_regression_is_alerted_exactly_once(main_runs: MainRuns) -> None:
    assert [(a["check"], a["retriever"]) for a in main_runs.webhook.received] == [("no_regression", "fixed")]
    assert "Alerts:          0 alert(s) sent" in main_runs.first.stdout
    assert "Alerts:          1 alert(s) sent" in main_runs.second.stdout


def test_the_dagster_home_template_sets_the_store_pool(main_runs: MainRuns) -> None:
    assert "default_limit: 1" in (main_runs.home / "dagster.yaml").read_text()
