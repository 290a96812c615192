"""The nightly path with judged negatives (issue 23): the suite's ``thresholds.min_judged`` makes
the ``no_regression`` check fail with "labels incomplete for this run", as the CLI's
``--min-judged`` does, and judged@k reaches the stored run through the hits table."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from assets.series import series_key
from goldeneval.retrieval.details import retrieval_details
from goldeneval.store import ResultStore
from tests.dagster_support import (
    GOOD,
    Project,
    definitions,
    run_nightly,
    run_requests,
    tick_regression_sensor,
    write_project,
)

pytestmark = pytest.mark.slow  # the in-process asset graph

KEY = "fixed|alpha-set"
SETS = {
    "alpha-set": [
        {"id": "a1", "text": "apple orchard", "form": "MATCH", "expected": ["apples"], "not_relevant": ["bananas"]},
        {"id": "a2", "text": "yellow tropical", "form": "GAP", "expected": ["bananas"], "not_relevant": ["apples"]},
        {"id": "a3", "text": "zeppelin", "form": "GAP", "expected": []},
    ]
}
UNJUDGED: dict[str, Any] = {
    **GOOD,
    "apple orchard": ["apples", "cherries", "dates"],
    "yellow tropical": ["bananas", "cherries", "dates"],
}
"""The same hits, but two of each top-3 documents nobody judged: judged@3 1/3."""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.syspath_prepend(str(tmp_path))
    made = write_project(tmp_path, sets=SETS)
    config = yaml.safe_load(made.config.read_text())
    config["retrievers"].pop("lexical")
    config["thresholds"] = {"min_judged": 0.9}
    made.config.write_text(yaml.safe_dump(config, sort_keys=False))
    return made


@pytest.fixture
def instance(tmp_path: Path) -> Iterator[dg.DagsterInstance]:
    (tmp_path / "home").mkdir()
    with dg.DagsterInstance.local_temp(str(tmp_path / "home")) as temp:
        yield temp


def _night(project: Project, instance: dg.DagsterInstance, cursor: str | None = None) -> str | None:
    defs = definitions(project)
    assert all(r.success for r in run_nightly(defs, instance, [KEY]))
    tick = tick_regression_sensor(defs, instance, cursor=cursor)
    assert all(r.success for r in run_requests(defs, instance, tick))
    after: str | None = tick.cursor
    return after


def _no_regression(instance: dg.DagsterInstance) -> dg.AssetCheckEvaluation:
    runs = instance.get_runs(filters=dg.RunsFilter(job_name="regression_check_job"), limit=1)
    assert runs, "no regression check ran"
    [event] = instance.all_logs(runs[0].run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    evaluation = event.dagster_event.event_specific_data if event.dagster_event else None
    assert isinstance(evaluation, dg.AssetCheckEvaluation)
    return evaluation


def test_a_first_night_below_min_judged_is_the_baseline_and_fails_the_check(
    project: Project, instance: dg.DagsterInstance
) -> None:
    project.set_rankings(UNJUDGED)
    _night(project, instance)
    evaluation = _no_regression(instance)
    assert not evaluation.passed  # the same rule as --fail-on-regression's exit 6
    assert evaluation.metadata["state"].value == "baseline"
    reason = str(evaluation.metadata["reason"].value)
    assert "this run is the baseline; labels incomplete for this run: judged@3 0.333 is below min_judged 0.9" in reason


def test_min_judged_in_the_suite_fails_the_nightly_check_naming_labels_incomplete(
    project: Project, instance: dg.DagsterInstance
) -> None:
    cursor = _night(project, instance)
    assert _no_regression(instance).passed  # the baseline
    project.set_rankings(UNJUDGED)
    _night(project, instance, cursor)

    evaluation = _no_regression(instance)
    assert not evaluation.passed
    assert evaluation.metadata["state"].value == "unknown"
    reason = str(evaluation.metadata["reason"].value)
    assert reason.startswith("labels incomplete for this run: judged@3 0.333 is below min_judged 0.9")

    store = ResultStore(project.store)
    latest = store.list_runs()[0]
    details = retrieval_details(store.get_run(latest.id) or latest)
    assert details.judged_share() == pytest.approx(1 / 3)
    assert details.unjudged_top() == {"a1": ["cherries", "dates"], "a2": ["cherries", "dates"]}

    [summary] = [
        record.asset_materialization
        for record in instance.fetch_materializations(dg.AssetKey("evaluation_summary"), limit=1).records
        if record.asset_materialization is not None
    ]
    assert summary.metadata["judged/judged@3"].value == "0.333"  # text here; plotted on the series' key
    [point] = [
        record.asset_observation.metadata
        for record in instance.fetch_observations(series_key("alpha-set", "fixed"), limit=1).records
        if record.asset_observation is not None
    ]
    assert point["judged/judged@3"] == dg.MetadataValue.float(1 / 3)
    judged = summary.metadata["judged"].value
    assert isinstance(judged, dict) and judged["overall"]["judged@3"] == pytest.approx(1 / 3)
