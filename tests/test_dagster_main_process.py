"""The main command as a one-shot process (issue 26): its jobs run with the collector tuned as
the ``goldeneval`` command's are, and what it allocated is frozen before the process ends.
Counted behaviour, never a timing."""

from __future__ import annotations

import gc
import weakref
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

import assets.evaluation
import pipelines.build
import pipelines.main
import resources.goldeneval
from goldeneval.core.collector import BULK_THRESHOLDS
from goldeneval.retrieval import golden
from goldeneval.retrieval import tables as retrieval_tables
from goldeneval.store.parquet import TableInBatches
from goldeneval.suite import Suite, load_suite
from tests.dagster_support import FIXED_PROVENANCE, PLUGIN_MODULE, SETS, write_project


def test_main_runs_its_jobs_with_fewer_collections_and_restores_the_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    seen: list[tuple[int, int, int]] = []

    def run_everything(home: Path, partitions: list[str] | None = None) -> int:
        seen.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(pipelines.main, "_run_everything", run_everything)
    before = gc.get_threshold()
    assert pipelines.main.main([]) == 0
    assert seen == [BULK_THRESHOLDS]
    assert gc.get_threshold() == before


def test_ending_freezes_what_the_process_allocated() -> None:
    before = gc.get_freeze_count()
    allocated = [object()]  # tracked by the collector, in its youngest generation
    try:
        pipelines.main.ending()
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
    assert allocated


def test_the_command_ends_the_process_with_mains_status(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def main(argv: list[str] | None = None) -> int:
        calls.append("main")
        return 1

    monkeypatch.setattr(pipelines.main, "main", main)
    monkeypatch.setattr(pipelines.main, "ending", lambda: calls.append("ending"))
    with pytest.raises(SystemExit) as ended:
        pipelines.main.command([])
    assert ended.value.code == 1
    assert calls == ["main", "ending"]


@pytest.mark.slow  # the in-process asset graph
def test_one_main_process_validates_each_set_once_and_reads_the_suite_once_per_dagster_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 26: the set and the suite are parsed once per run.  Each set file is validated
    once in the whole process (``goldeneval.retrieval.golden`` keeps what it validated, by
    content); the suite file is read once for the definitions and the summary, and once by
    each Dagster run's resource."""
    monkeypatch.syspath_prepend(str(tmp_path))
    project = write_project(tmp_path / "project", sets={"alpha-set": SETS["alpha-set"]})
    monkeypatch.syspath_prepend(str(project.root))
    monkeypatch.setenv("GOLDENEVAL_CONFIG", str(project.config))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    suite_file = yaml.safe_load(project.config.read_text(encoding="utf-8"))
    partitions = len(suite_file["sets"]) * len(suite_file["retrievers"])

    validated: list[Path] = []
    original_validate = golden._load_checked

    def validating(path: Path, suffix: str, text: str) -> golden.GoldenQuestionSet:
        validated.append(path)
        return original_validate(path, suffix, text)

    monkeypatch.setattr(golden, "_load_checked", validating)
    suites: list[str] = []

    def loading(path: str | Path) -> Suite:
        suites.append(str(path))
        return load_suite(path)

    for module in (pipelines.main, pipelines.build, resources.goldeneval):
        monkeypatch.setattr(module, "load_suite", loading)

    assert pipelines.main.main([]) == 0
    with dg.DagsterInstance.get() as instance:
        runs = instance.get_runs()
    assert len(runs) == 2 * partitions  # nightly_evaluation and regression_check_job, per partition
    assert [path.name for path in validated] == ["alpha-set.yaml"]
    assert len(suites) == 1 + len(runs)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_command_keeps_none_of_its_runs_outputs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Dagster's in-process result captures every output of the run (at 100,000 questions some
    150 MiB of tables), and Dagster 1.13 keeps the first run's step context, and so that
    capture, to the end of the process: a list of results, or that one context, kept each
    partition's tables in memory.  The command's runs, nightly and regression checks alike,
    keep only each run's id and status, and empty the capture: no table a run made outlives
    it, even with every result still held."""
    monkeypatch.syspath_prepend(str(tmp_path))
    fixed = {
        "id": f"{PLUGIN_MODULE}:build",
        "options": {"rankings": str(tmp_path / "project" / "rankings.json")},
        "provenance": FIXED_PROVENANCE,
    }
    project = write_project(
        tmp_path / "project",
        sets={"alpha-set": SETS["alpha-set"]},
        retrievers={f"fixed-{n}": fixed for n in range(3)},
    )
    monkeypatch.syspath_prepend(str(project.root))
    results: list[dg.ExecuteInProcessResult] = []
    captured: list[int] = []
    execute = dg.JobDefinition.execute_in_process

    def executing(job: dg.JobDefinition, *args: Any, **kwargs: Any) -> dg.ExecuteInProcessResult:
        result = execute(job, *args, **kwargs)
        results.append(result)  # held to the end of the test, as a caller keeping them would
        captured.append(len(result._output_capture))
        return result

    tables: list[weakref.ref[TableInBatches]] = []
    make_rankings = retrieval_tables.rankings_table  # as assets.evaluation imported it

    def making_rankings(*args: Any, **kwargs: Any) -> TableInBatches:
        table = make_rankings(*args, **kwargs)
        tables.append(weakref.ref(table))
        return table

    monkeypatch.setattr(dg.JobDefinition, "execute_in_process", executing)
    monkeypatch.setattr(assets.evaluation, "rankings_table", making_rankings)
    defs = pipelines.build.definitions_for(load_suite(project.config))
    with dg.DagsterInstance.ephemeral() as instance:
        nightly = pipelines.main.run_nightly(defs, instance)
        checks = pipelines.main.run_regression_sensor(defs, instance)
    assert nightly + checks == [pipelines.main.FinishedRun(result.run_id, True) for result in results]
    assert len(nightly) == 3 and len(checks) == 3
    assert all(captured)  # each run captured outputs while it ran
    gc.collect()
    assert len(tables) == 3 and [table() for table in tables] == [None, None, None]
    for result in results:
        assert not result._output_capture
