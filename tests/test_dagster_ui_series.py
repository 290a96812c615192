"""Issue 25: one series' rates over the nights are one plot, and one night's retrievers side by side.

The UI plots the float metadata of one asset key over its events.  Two nights of two
retrievers on one set, through real materialisations; then what the UI reads — the event
history of the per-series key ``series/<set>/<retriever>`` and the latest event of the per-set
key ``nightly/<set>`` — is read back through the instance, and the keys through the
definitions, as the asset catalogue lists them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from click.testing import CliRunner

from assets.series import PROMPT_SERIES, SERIES_GROUP, nightly_key, series_key
from goldeneval.cli import main
from goldeneval.store import ResultStore
from tests.dagster_support import (
    FIXED_PROVENANCE,
    GOOD,
    PLUGIN_MODULE,
    SETS,
    WORSE_ALPHA,
    definitions,
    latest_metadata,
    materialisations,
    run_nightly,
    tick_cli_run_sensor,
    write_project,
)

pytestmark = pytest.mark.slow  # the in-process asset graph, twice

SET = "alpha-set"


def _values(instance: dg.DagsterInstance, key: dg.AssetKey) -> list[dict[str, object]]:
    records = instance.fetch_observations(key, limit=100, ascending=True).records
    return [
        {name: entry.value for name, entry in record.asset_observation.metadata.items()}
        for record in records
        if record.asset_observation is not None
    ]


def test_each_series_is_one_key_with_one_point_per_stored_run_and_each_night_lists_every_retriever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    project = write_project(tmp_path, sets={SET: SETS[SET]}, rankings=GOOD)
    instance = dg.DagsterInstance.ephemeral()
    defs = definitions(project)

    # the catalogue: one observed asset per series and per set, in their own group
    specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}
    for key in (series_key(SET, "fixed"), series_key(SET, "lexical"), nightly_key(SET)):
        assert specs[key].group_name == SERIES_GROUP, key
    assert not defs.resolve_asset_graph().get(series_key(SET, "fixed")).is_materializable

    assert all(r.success for r in run_nightly(defs, instance))
    project.set_rankings(WORSE_ALPHA)  # fixed falls at top-1
    assert all(r.success for r in run_nightly(definitions(project), instance))

    fixed = _values(instance, series_key(SET, "fixed"))
    lexical = _values(instance, series_key(SET, "lexical"))
    # one point per night, in order: the series' own line, not the partitions joined (the
    # summary shows each night's rate as text, to three places: it plots nothing)
    shown: list[Any] = [
        r.asset_materialization.metadata["top1_hit_rate"].value
        for r in materialisations(instance, "evaluation_summary")
        if r.partition_key == f"fixed|{SET}" and r.asset_materialization is not None
    ]
    nights: list[Any] = [point["top1_hit_rate"] for point in fixed]
    assert all(isinstance(rate, float) for rate in nights)
    assert [f"{rate:.3f}" for rate in nights] == shown
    assert nights[0] > nights[1]  # WORSE_ALPHA
    assert [point["verdict"] for point in fixed] == ["baseline", "regression"]
    assert len(lexical) == 2 and lexical[0]["top1_hit_rate"] == lexical[1]["top1_hit_rate"]
    for points, retriever in ((fixed, "fixed"), (lexical, "lexical")):
        summary = latest_metadata(instance, "evaluation_summary", f"{retriever}|{SET}")
        assert points[-1]["stored_run_id"] == summary["stored_run_id"].value
        assert f"{points[-1]['top3_hit_rate']:.3f}" == summary["top3_hit_rate"].value
        assert any(str(name).startswith("metric/") for name in points[-1])

    # the latest night: every retriever side by side, each with its latest run
    night = _values(instance, nightly_key(SET))[-1]
    assert night["fixed/top1_hit_rate"] == nights[1]
    assert night["lexical/top1_hit_rate"] == lexical[-1]["top1_hit_rate"]
    table = str(night["retrievers"])
    assert f"| fixed | {float(str(nights[1])):.3f} |" in table and "| regression |" in table
    assert f"| lexical | {float(str(lexical[-1]['top1_hit_rate'])):.3f} |" in table

    # the summary re-materialised for the same tables stores nothing new: no second point
    job = definitions(project).resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(
        partition_key=f"fixed|{SET}", instance=instance, asset_selection=[dg.AssetKey("evaluation_summary")]
    )
    assert result.success
    assert len(_values(instance, series_key(SET, "fixed"))) == 2

    # docs/guide/dagster.md: a CLI run of the series is compared with the nightly runs; the
    # CLI-run sensor (its first tick watches from then on) observes it on the series key
    first_tick = tick_cli_run_sensor(defs, instance)
    assert not first_tick.asset_events
    provenance = [arg for name, value in FIXED_PROVENANCE.items() for arg in ("--provenance", f"{name}={value}")]
    cli = CliRunner().invoke(
        main,
        ["retrieval", "--set", str(project.root / "sets" / f"{SET}.yaml"), "--retriever", f"{PLUGIN_MODULE}:build",
         "--option", f"rankings={project.rankings}", "--name", "fixed", "--store", str(project.store), *provenance,
         "--no-progress", "--format", "json"],
    )  # fmt: skip
    assert cli.exit_code == 0, cli.output
    verdict = json.loads(cli.stdout)["verdict"]
    assert (verdict["state"], verdict["previous_run_id"]) == ("comparable", fixed[-1]["stored_run_id"])
    assert len(_values(instance, series_key(SET, "fixed"))) == 2  # not before the sensor's tick
    assert len([run for run in ResultStore(project.store).list_runs() if run.model == "fixed"]) == 3

    tick = tick_cli_run_sensor(defs, instance, first_tick.cursor)
    cli_run = json.loads(cli.stdout)["run"]["id"]
    points = _values(instance, series_key(SET, "fixed"))
    assert len(points) == 3
    assert (points[-1]["stored_run_id"], points[-1]["door"]) == (cli_run, "cli")
    assert points[-1]["top1_hit_rate"] == nights[1] and isinstance(points[-1]["top1_hit_rate"], float)
    assert set(points[-1]) >= {name for name in points[-2] if name != "door"}  # what a nightly point plots
    assert _values(instance, nightly_key(SET))[-1]["fixed/top1_hit_rate"] == nights[1]
    again = tick_cli_run_sensor(defs, instance, tick.cursor)
    assert not again.asset_events and len(_values(instance, series_key(SET, "fixed"))) == 3


def test_a_prompt_series_is_plotted_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_prompts_cli import GOOD as GOOD_ANSWERS
    from tests.test_prompts_dagster import _configure, _run_prompt_job

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "scripted_model", raising=False)
    project = _configure(tmp_path)
    defs = definitions(project)
    instance = dg.DagsterInstance.ephemeral()
    key = "scripted|tiny"
    _run_prompt_job(defs, instance, key)
    (tmp_path / "answers.json").write_text(json.dumps({**GOOD_ANSWERS, "2+2?": "five"}))
    _run_prompt_job(definitions(project), instance, key)

    points = _values(instance, series_key("tiny", "scripted", PROMPT_SERIES))
    summaries: list[Any] = [
        r.asset_materialization.metadata["pass_rate"].value
        for r in materialisations(instance, "prompt_summary")
        if r.partition_key == key and r.asset_materialization is not None
    ]
    nights: list[Any] = [point["pass_rate"] for point in points]
    assert [f"{rate:.3f}" for rate in nights] == summaries and len(summaries) == 2
    assert nights[0] > nights[1]
    night = _values(instance, nightly_key("tiny", PROMPT_SERIES))[-1]
    assert night["scripted/pass_rate"] == nights[1]
    assert "| model | pass rate | mean score |" in str(night["models"])
