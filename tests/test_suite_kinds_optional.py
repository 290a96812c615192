"""A suite file configures only the kinds a team evaluates: a prompts-only file (no ``sets``,
no ``retrievers``) loads, its Definitions hold the prompt kind alone (no retrieval partitions,
assets, jobs, schedule or sensors), and the main command runs it; a file that configures no
kind fails with one line naming the file and what to add."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import dagster as dg
import pytest
import yaml

import pipelines.main
from goldeneval.core.errors import InputError
from goldeneval.kinds.prompts import PROMPTS
from goldeneval.kinds.retrieval import RETRIEVAL
from goldeneval.suite import load_suite
from pipelines.build import definitions_for

PROMPTS_ONLY = {"prompt_sets": ["goldeneval.smoke"], "models": {"extractive": {"id": "goldeneval.extractive"}}}


def _suite_file(folder: Path, config: Mapping[str, object]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "goldeneval.yaml"
    path.write_text(yaml.safe_dump(dict(config)))
    return path


def test_a_prompts_only_suite_file_loads(tmp_path: Path) -> None:
    suite = load_suite(_suite_file(tmp_path, PROMPTS_ONLY))
    assert suite.cells(RETRIEVAL) == ([], [])
    assert suite.cells(PROMPTS) == (["goldeneval.smoke"], ["extractive"])


def test_its_definitions_hold_the_prompt_kind_alone(tmp_path: Path) -> None:
    defs = definitions_for(load_suite(_suite_file(tmp_path, PROMPTS_ONLY)))
    repository = defs.get_repository_def()
    assert sorted(job.name for job in repository.get_all_jobs() if not job.name.startswith("__")) == [
        "accept_run",
        "nightly_prompt_evaluation",
        "prompt_regression_check_job",
    ]
    assert [schedule.name for schedule in repository.schedule_defs] == ["nightly_prompt_evaluation_schedule"]
    assert sorted(sensor.name for sensor in repository.sensor_defs) == [
        "check_alert_sensor",
        "prompt_cli_run_series_sensor",
        "prompt_regression_check_sensor",
    ]
    assets = {key.to_user_string() for key in defs.resolve_all_asset_keys()}
    assert {*PROMPTS.assets, PROMPTS.names.regression_check} <= assets
    assert not {*RETRIEVAL.assets, RETRIEVAL.names.regression_check} & assets
    assert not [key for key in assets if key.startswith(("series/", "nightly/"))]  # retrieval's series keys
    assert pipelines.main.kinds_in(defs) == [PROMPTS]
    partitions = defs.resolve_job_def(PROMPTS.names.job).partitions_def
    assert partitions is not None and partitions.get_partition_keys() == ["extractive|goldeneval.smoke"]


@pytest.mark.slow  # one in-process prompt run and its check: seconds; CI runs it
def test_the_main_command_runs_a_prompts_only_suite(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("GOLDENEVAL_STORE", "GOLDENEVAL_TABLES", "GOLDENEVAL_CACHE", "GOLDENEVAL_ALERT_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("GOLDENEVAL_CONFIG", str(_suite_file(tmp_path / "project", PROMPTS_ONLY)))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert pipelines.main.main([]) == 0
    shown = capsys.readouterr().out
    assert PROMPTS.title in shown and RETRIEVAL.title not in shown
    assert f"{'goldeneval.smoke':<24} {'extractive':<20} " in shown
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        jobs = sorted(run.job_name for run in instance.get_runs())
    assert jobs == ["nightly_prompt_evaluation", "prompt_regression_check_job"]


def test_a_suite_file_that_configures_no_kind_is_one_line_naming_what_to_add(tmp_path: Path) -> None:
    path = _suite_file(tmp_path, {"privacy": "full"})
    with pytest.raises(InputError) as error:
        load_suite(path)
    assert str(error.value) == (
        f"{path}: nothing to evaluate: no run kind has a set to run; add sets and retrievers, or prompt_sets and models"
    )


def test_the_main_command_names_the_empty_suite_file_and_exits_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _suite_file(tmp_path / "project", {})
    monkeypatch.setenv("GOLDENEVAL_CONFIG", str(path))
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    assert pipelines.main.main([]) == pipelines.main.SUITE_ERROR
    assert capsys.readouterr().err == (
        f"goldeneval: error: {path}: nothing to evaluate: no run kind has a set to run; add sets and retrievers, "
        "or prompt_sets and models\n"
    )


@pytest.mark.parametrize(
    ("config", "missing", "pair"),
    [
        ({"sets": ["goldeneval.smoke"]}, "retrievers", "sets and retrievers"),
        ({"retrievers": {"bm25": {"id": "goldeneval.lexical"}}}, "sets", "sets and retrievers"),
        ({**PROMPTS_ONLY, "models": {}}, "models", "prompt_sets and models"),
    ],
)
def test_a_kinds_sets_without_its_series_name_the_missing_key(
    tmp_path: Path, config: Mapping[str, object], missing: str, pair: str
) -> None:
    path = _suite_file(tmp_path, config)
    with pytest.raises(InputError) as error:
        load_suite(path)
    assert str(error.value) == f"{path}: field {missing!r}: {pair} are evaluated together; add {missing}"
