"""Every metadata plot of the Dagster UI runs over the nights; the whole per-question table is
one path away.

Dagster 1.13's UI plots every float and int metadata entry of an asset key (its Overview's
"Plots", the asset graph sidebar's "Metadata plots": by partition for a partitioned key, by time
otherwise) and of an asset check (the check's overview, by time).  On the (set x retriever)
keys such a plot joins the partitions into one line — lexical, then dense, then a changed
corpus — so a lasting regression looks like a zig-zag.  So no partitioned asset or check may
carry a number the UI plots, and the per-series keys ``series/<set>/<retriever>``,
``nightly/<set>`` (and the prompt ones) carry them as floats, one point per night.

Two nights of two retrievers (the second lowers one of them), each night's regression checks
as the sensor asks for them; then the event log is read back as the UI reads it, and, in the
e2e test, the UI itself in headless Chromium against dagster-webserver on 127.0.0.1.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import duckdb
import pytest

from assets.metadata import metadata_number
from assets.series import PROMPT_SERIES, nightly_key, series_key
from assets.tables import PREVIEW_ROWS
from pipelines.main import INSTANCE_TEMPLATE
from tests.chromium import Page, headless_chromium, require_chromium
from tests.dagster_support import (
    SETS,
    WORSE_ALPHA,
    Project,
    definitions,
    latest_metadata,
    run_nightly,
    run_requests,
    tick_regression_sensor,
    write_project,
)
from tests.test_dagster_e2e import BIN, LOCATION, Services, _free_port, _start, _stop, _wait

pytestmark = pytest.mark.slow  # the in-process asset graph, two nights

SET = "alpha-set"
KEYS = [f"fixed|{SET}", f"lexical|{SET}"]
PLOTTED = (dg.IntMetadataValue, dg.FloatMetadataValue)
"""What the UI plots: its IntMetadataEntry and FloatMetadataEntry (extractNumericData)."""


def _plotted(metadata: dict[str, Any]) -> list[str]:
    return sorted(name for name, value in metadata.items() if isinstance(value, PLOTTED))


def _check_metadata(instance: dg.DagsterInstance, key: dg.AssetCheckKey) -> list[tuple[str | None, dict[str, Any]]]:
    history = instance.event_log_storage.get_asset_check_execution_history(key, limit=1000)
    found = []
    for record in history:
        event = record.event.dagster_event if record.event is not None else None
        evaluation = event.event_specific_data if event is not None else None
        if isinstance(evaluation, dg.AssetCheckEvaluation):
            found.append((record.partition, dict(evaluation.metadata)))
    return found


def partitioned_numbers(defs: dg.Definitions, instance: dg.DagsterInstance) -> tuple[dict[str, list[str]], int]:
    """Every plotted entry on a partitioned key's materialisations and observations and on its
    checks' evaluations (``asset partition: [labels]``), and how many events were read."""
    graph = defs.resolve_asset_graph()
    found: dict[str, list[str]] = {}
    events = 0
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        if not node.is_partitioned:
            continue
        name = key.to_user_string()
        for record in instance.fetch_materializations(key, limit=1000).records:
            if record.asset_materialization is not None:
                events += 1
                if labels := _plotted(dict(record.asset_materialization.metadata)):
                    found[f"{name} {record.partition_key}"] = labels
        for record in instance.fetch_observations(key, limit=1000).records:
            if record.asset_observation is not None:
                events += 1
                if labels := _plotted(dict(record.asset_observation.metadata)):
                    found[f"{name} {record.partition_key} (observed)"] = labels
        for check in node.check_keys:
            for partition, metadata in _check_metadata(instance, check):
                events += 1
                if labels := _plotted(metadata):
                    found[f"{name}:{check.name} {partition}"] = labels
    return found, events


def _read(sql: object) -> list[dict[str, Any]]:
    """The rows a metadata SQL line reads, by column."""
    cursor = duckdb.connect().execute(str(sql))
    columns = [d[0] for d in cursor.description or []]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _observations(instance: dg.DagsterInstance, key: dg.AssetKey) -> list[dict[str, Any]]:
    records = instance.fetch_observations(key, limit=100, ascending=True).records
    return [dict(r.asset_observation.metadata) for r in records if r.asset_observation is not None]


def _two_nights(project: Project, instance: dg.DagsterInstance) -> dg.Definitions:
    """Two nights of both partitions, each followed by the regression checks the sensor asks for."""
    defs = definitions(project)
    assert all(r.success for r in run_nightly(defs, instance, KEYS))
    tick = tick_regression_sensor(defs, instance)
    assert all(r.success for r in run_requests(defs, instance, tick))
    project.set_rankings(WORSE_ALPHA)  # fixed falls at top-1 and top-3 on the second night
    defs = definitions(project)
    assert all(r.success for r in run_nightly(defs, instance, KEYS))
    tick = tick_regression_sensor(defs, instance, cursor=tick.cursor)
    assert all(r.success for r in run_requests(defs, instance, tick))
    return defs


@dataclass
class Nights:
    project: Project
    defs: dg.Definitions
    instance: dg.DagsterInstance


@pytest.fixture(scope="module")
def nights(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    root = tmp_path_factory.mktemp("nights")
    with pytest.MonkeyPatch.context() as patch:
        for name in [name for name in os.environ if name.startswith("GOLDENEVAL_")]:
            patch.delenv(name)
        patch.syspath_prepend(str(root))
        project = write_project(root, sets={SET: SETS[SET]})
        with dg.instance_for_test() as instance:
            defs = _two_nights(project, instance)
            yield Nights(project, defs, instance)


def test_no_partitioned_asset_or_check_carries_a_number_the_ui_plots(nights: Nights) -> None:
    found, events = partitioned_numbers(nights.defs, nights.instance)
    assert found == {}
    # two nights x two partitions x (set, rankings, hits, summary + run_complete, regression + no_regression)
    assert events == 2 * 2 * 7


def test_each_series_key_plots_its_rates_one_point_per_night(nights: Nights) -> None:
    fixed = _observations(nights.instance, series_key(SET, "fixed"))
    lexical = _observations(nights.instance, series_key(SET, "lexical"))
    assert len(fixed) == len(lexical) == 2  # one point per night
    for points in (fixed, lexical):
        for point in points:
            assert isinstance(point["top1_hit_rate"], dg.FloatMetadataValue)
            assert isinstance(point["top3_hit_rate"], dg.FloatMetadataValue)
            assert isinstance(point["form=GAP/top1_hit_rate"], dg.FloatMetadataValue)
            assert any(name.startswith("metric/") and isinstance(v, dg.FloatMetadataValue) for name, v in point.items())
    first, second = (point["top1_hit_rate"].value for point in fixed)
    assert first is not None and second is not None and first > second  # WORSE_ALPHA: the fall, one line
    assert [point["verdict"].value for point in fixed] == ["baseline", "regression"]
    night = _observations(nights.instance, nightly_key(SET))[-1]
    assert isinstance(night["fixed/top1_hit_rate"], dg.FloatMetadataValue)
    assert isinstance(night["lexical/top1_hit_rate"], dg.FloatMetadataValue)


def test_the_summary_shows_its_rates_as_text_equal_to_the_series_point(nights: Nights) -> None:
    for key in KEYS:
        retriever = key.split("|")[0]
        summary = latest_metadata(nights.instance, "evaluation_summary", key)
        point = _observations(nights.instance, series_key(SET, retriever))[-1]
        for name in ("top1_hit_rate", "top3_hit_rate", "form=GAP/top1_hit_rate"):
            assert isinstance(summary[name], dg.TextMetadataValue)
            assert summary[name].value == f"{point[name].value:.3f}"
        metrics = [name for name in point if name.startswith("metric/")]
        assert metrics and all(summary[name].value == f"{point[name].value:.3f}" for name in metrics)
        assert summary["question_count"].value == "3"
        assert metadata_number(summary["top1_hit_rate"]) == pytest.approx(point["top1_hit_rate"].value, abs=5e-4)
        check = latest_metadata(nights.instance, "regression_check", key)
        assert metadata_number(check["top1_hit_rate"]) == metadata_number(summary["top1_hit_rate"])


def test_the_whole_hits_table_is_one_path_and_one_duckdb_line_away(nights: Nights) -> None:
    for key in KEYS:
        hits = latest_metadata(nights.instance, "question_hits", key)
        summary = latest_metadata(nights.instance, "evaluation_summary", key)
        path = Path(str(hits["path"].value))  # written by the IO manager
        assert path.is_file()
        assert isinstance(summary["full_table"], dg.PathMetadataValue)
        assert Path(str(summary["full_table"].value)) == path
        assert summary["full_table_sql"].value == f"SELECT * FROM read_parquet('{path}')"
        for sql in (summary["full_table_sql"].value, hits["full_table_sql"].value):  # the hits': its run's file
            assert sorted(row["question_id"] for row in _read(sql)) == ["a1", "a2", "a3"]
        preview = str(hits[f"preview (first {PREVIEW_ROWS} rows)"].value)
        assert preview.startswith("| question_id |")
        assert "All 3 rows, in DuckDB:" in preview and str(hits["full_table_sql"].value) in preview
        assert "preview" not in hits  # the label says how many rows it shows


def test_the_prompt_graph_plots_over_nights_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.test_prompts_cli import GOOD as GOOD_ANSWERS
    from tests.test_prompts_dagster import KEY, _configure, _run_prompt_job, _run_prompt_sensor

    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "scripted_model", raising=False)
    project = _configure(tmp_path)
    with dg.instance_for_test() as instance:
        defs = definitions(project)
        _run_prompt_job(defs, instance, KEY)
        cursor = _run_prompt_sensor(defs, instance, None)
        (tmp_path / "answers.json").write_text(json.dumps({**GOOD_ANSWERS, "2+2?": "five"}))
        defs = definitions(project)
        _run_prompt_job(defs, instance, KEY)
        _run_prompt_sensor(defs, instance, cursor)

        found, events = partitioned_numbers(defs, instance)
        assert found == {}
        assert events == 2 * 7  # set, responses, gradings, summary + run_complete, regression + no_regression
        points = _observations(instance, series_key("tiny", "scripted", PROMPT_SERIES))
        assert [type(p["pass_rate"]) for p in points] == [dg.FloatMetadataValue] * 2
        summary = latest_metadata(instance, "prompt_summary", KEY)
        assert summary["pass_rate"].value == f"{points[-1]['pass_rate'].value:.3f}"
        gradings = latest_metadata(instance, "prompt_gradings", KEY)
        assert summary["full_table"].value == gradings["path"].value
        rows = len(_read(summary["full_table_sql"].value))
        assert rows > 0 and str(rows) == gradings["row_count"].value


# --------------------------------------------------------------------------- the UI

GRAPH_DATA = """(() => {
  const plots = {};
  for (const canvas of document.querySelectorAll('canvas')) {
    const key = Object.keys(canvas).find((k) => k.startsWith('__reactFiber$'));
    for (let fiber = key && canvas[key]; fiber; fiber = fiber.return) {
      const props = fiber.memoizedProps;
      if (props && typeof props.label === 'string' && props.data && Array.isArray(props.data.values)) {
        plots[props.label] = {xAxis: props.data.xAxis, points: props.data.values.map((v) => [v.x, v.y])};
        break;
      }
    }
  }
  return JSON.stringify(plots);
})()"""
"""The data of every plot on the page, as the UI's graph component holds it (label -> x axis,
points): read from the React props of each chart's canvas."""
NO_PLOTS = "Asset plots are automatically generated by metadata"
NO_CHECK_PLOTS = "Include numeric metadata entries in your check metadata"


@dataclass
class Served:
    url: str
    tmp: Path
    instance: dg.DagsterInstance


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """Two nights materialised into a DAGSTER_HOME, then dagster-webserver over it."""
    tmp = tmp_path_factory.mktemp("plots-ui")
    home = tmp / "dagster_home"
    home.mkdir()
    shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
    with pytest.MonkeyPatch.context() as patch:
        for name in [name for name in os.environ if name.startswith("GOLDENEVAL_")]:
            patch.delenv(name)
        patch.syspath_prepend(str(tmp))
        project = write_project(tmp, sets={SET: SETS[SET]})
        with dg.DagsterInstance.from_config(str(home)) as instance:
            _two_nights(project, instance)
            port = _free_port()
            env = {
                **os.environ,
                "DAGSTER_HOME": str(home),
                "GOLDENEVAL_CONFIG": str(project.config),
                "PYTHONPATH": os.pathsep.join([str(tmp), os.environ.get("PYTHONPATH", "")]),
            }
            logs = [tmp / "webserver.log"]
            webserver = _start(
                [str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
                env,
                logs[0],
            )
            try:
                services = Services(f"http://127.0.0.1:{port}", None, tmp, logs, [])  # type: ignore[arg-type]

                def loaded() -> bool:
                    try:
                        entries = services.graphql(LOCATION)["workspaceOrError"]["locationEntries"]
                    except (OSError, ConnectionError):
                        return False
                    kind = entries[0]["locationOrLoadError"] if entries else None
                    assert not kind or kind["__typename"] != "PythonError", kind
                    return bool(kind)

                _wait("the code location to load", loaded, 120, logs)
                yield Served(services.url, tmp, instance)
            finally:
                _stop(webserver)


@pytest.fixture(scope="module")
def browser(served: Served) -> Iterator[Page]:
    require_chromium()
    with headless_chromium(served.tmp / "chromium") as page:
        yield page


def _plots(page: Page, url: str, *needles: str) -> None:
    """Open an asset's overview once it shows ``needles`` and switch its metadata to Plots."""
    page.open(url)
    page.dismiss("Skip")  # Dagster's one-time community dialog
    page.wait_for_text(*needles, timeout_s=90)
    assert page.dismiss("Plots", timeout_s=30), "no Plots toggle on the asset overview"


def _read_plots(page: Page, wanted: str | None, timeout_s: float = 60) -> dict[str, Any]:
    """The page's plot data once it has ``wanted`` (or, with None, once loading is done)."""
    deadline = time.monotonic() + timeout_s
    plots: dict[str, Any] = {}
    while time.monotonic() < deadline:
        result = page.call("Runtime.evaluate", expression=GRAPH_DATA)
        plots = json.loads(result.get("result", {}).get("value") or "{}")
        if (wanted in plots) if wanted else ("Loading plots" not in page.text()):
            return plots
        time.sleep(0.5)
    return plots


@pytest.mark.e2e
def test_the_ui_plots_a_series_over_the_nights_and_the_summary_not_at_all(served: Served, browser: Page) -> None:
    # the summary: its rates shown as text on the page, and no plot across its partitions
    _plots(browser, f"{served.url}/assets/evaluation_summary", "top1_hit_rate", "full_table_sql")
    text = browser.wait_for_text(NO_PLOTS, timeout_s=60)
    assert _read_plots(browser, None) == {}, text[:2000]
    browser.screenshot(served.tmp / "summary-plots.png")

    # a series: one line per rate, one point per night, over time
    _plots(browser, f"{served.url}/assets/series/{SET}/fixed", "top1_hit_rate")
    plots = _read_plots(browser, "top1_hit_rate")
    browser.screenshot(served.tmp / "series-plots.png")
    nights = [point["top1_hit_rate"].value for point in _observations(served.instance, series_key(SET, "fixed"))]
    assert len(nights) == 2 and nights[0] > nights[1]
    line = plots["top1_hit_rate"]
    assert line["xAxis"] == "time"
    assert [y for _, y in line["points"]] == pytest.approx(nights)
    assert all(isinstance(x, int | float) for x, _ in line["points"])  # timestamps, not partition keys

    # the per-set key: each retriever's line over the nights
    _plots(browser, f"{served.url}/assets/nightly/{SET}", "fixed/top1_hit_rate")
    plots = _read_plots(browser, "fixed/top1_hit_rate")
    assert plots["fixed/top1_hit_rate"]["xAxis"] == "time" and len(plots["fixed/top1_hit_rate"]["points"]) == 4


@pytest.mark.e2e
def test_the_ui_plots_nothing_on_a_partitioned_check(served: Served, browser: Page) -> None:
    for asset, check in (("evaluation_summary", "run_complete"), ("regression_check", "no_regression")):
        browser.open(f"{served.url}/assets/{asset}?view=checks&checkDetail={check}")
        browser.dismiss("Skip")
        browser.wait_for_text(check, NO_CHECK_PLOTS, timeout_s=90)
        assert _read_plots(browser, None) == {}
        browser.screenshot(served.tmp / f"{check}-plots.png")
