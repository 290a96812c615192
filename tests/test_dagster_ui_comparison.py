"""Issue 25: the comparison as readable metadata.

The ``no_regression`` check and the summary asset carry a Markdown table (``MetadataValue.md``,
what the UI renders) of the verdict, the treatment change, the rates against their thresholds,
the paired statistics and the newly failing and passing questions; under ``metadata_only`` it
names questions by id only.  Driven through real materialisations of the asset graph (two
nights of one partition, the second one worse, with another model revision declared).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

from assets.metadata import MAX_QUESTION_ROWS, comparison_markdown
from goldeneval.core.gate import ComparisonState
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.regression import RegressionVerdict
from goldeneval.core.stats import PairedComparison
from tests.dagster_support import (
    FIXED_PROVENANCE,
    PLUGIN_MODULE,
    Project,
    definitions,
    latest_metadata,
    run_nightly,
    run_requests,
    tick_regression_sensor,
    write_project,
)

KEY = "fixed|alpha-set"
TEXT = "QTEXTMARKER"
DOC = "DOCIDMARKER"
SETS = {
    "alpha-set": [
        {"id": "a1", "text": f"{TEXT} apple orchard", "form": "MATCH", "expected": [f"{DOC}-apples"]},
        {"id": "a2", "text": f"{TEXT} yellow tropical", "form": "GAP", "expected": [f"{DOC}-bananas"]},
        {"id": "a3", "text": f"{TEXT} red stone fruit", "form": "GAP", "expected": [f"{DOC}-cherries"]},
    ]
}
GOOD = {
    f"{TEXT} apple orchard": [f"{DOC}-apples", f"{DOC}-bananas"],
    f"{TEXT} yellow tropical": [f"{DOC}-bananas"],
    f"{TEXT} red stone fruit": [f"{DOC}-dates", f"{DOC}-apples", f"{DOC}-bananas", f"{DOC}-cherries"],
}
WORSE = {
    **GOOD,
    # a1 and a2 fall out of the top 3; a3 comes into it
    f"{TEXT} apple orchard": [f"{DOC}-dates", f"{DOC}-cherries", f"{DOC}-bananas", f"{DOC}-apples"],
    f"{TEXT} yellow tropical": [f"{DOC}-dates", f"{DOC}-cherries", f"{DOC}-apples", f"{DOC}-bananas"],
    f"{TEXT} red stone fruit": [f"{DOC}-cherries"],
}


def _retrievers(root: Path, model_revision: str) -> dict[str, Any]:
    return {
        "fixed": {
            "id": f"{PLUGIN_MODULE}:build",
            "options": {"rankings": str(root / "rankings.json")},
            "provenance": {**FIXED_PROVENANCE, "model_revision": model_revision},
        }
    }


def _two_nights(root: Path, privacy: str, monkeypatch: pytest.MonkeyPatch) -> dg.DagsterInstance:
    monkeypatch.syspath_prepend(str(root))
    project: Project = write_project(
        root, sets=SETS, privacy=privacy, rankings=GOOD, retrievers=_retrievers(root, "model-1")
    )
    instance = dg.DagsterInstance.ephemeral()
    cursor = None
    for night in (1, 2):
        if night == 2:
            project.set_rankings(WORSE)
            config = yaml.safe_load(project.config.read_text())
            config["retrievers"] = _retrievers(root, "model-2")  # the treatment that changed
            project.config.write_text(yaml.safe_dump(config, sort_keys=False))
        defs = definitions(project)
        assert all(r.success for r in run_nightly(defs, instance, [KEY]))
        tick = tick_regression_sensor(defs, instance, cursor=cursor)
        assert all(r.success for r in run_requests(defs, instance, tick))
        cursor = tick.cursor
    return instance


def _check(instance: dg.DagsterInstance) -> dg.AssetCheckEvaluation:
    runs = instance.get_runs(filters=dg.RunsFilter(job_name="regression_check_job"), limit=1)
    [event] = instance.all_logs(runs[0].run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION)
    evaluation = event.dagster_event.event_specific_data if event.dagster_event else None
    assert isinstance(evaluation, dg.AssetCheckEvaluation)
    return evaluation


def _markdown(entry: Any) -> str:
    assert isinstance(entry, dg.MarkdownMetadataValue), entry
    return str(entry.value)


@pytest.mark.slow
def test_the_check_and_the_summary_show_the_comparison_as_markdown_tables(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = _two_nights(tmp_path, "full", monkeypatch)
    check = _check(instance)
    assert not check.passed
    table = _markdown(check.metadata["comparison"])
    assert table.startswith("**regression** (comparable): top-1 hit rate fell")
    assert "**Treatment change:** model_revision model-1 -> model-2" in table
    # each rate against its threshold
    assert "| top-1 hit rate | 0.667 | 0.333 | -0.333 | -0.100 |" in table
    assert "| top-3 hit rate | 0.667 | 0.333 | -0.333 | -0.100 |" in table
    # the paired statistics: 3 questions, 2 newly failing top-3, 1 newly passing
    assert "| top-1 hit rate | 3 | 2 | 1 |" in table and "| top-3 hit rate | 3 | 2 | 1 |" in table
    # the questions, by id, and nothing of their text
    for rate in ("top-1", "top-3"):
        assert f"| `a1` | {rate} hit rate | newly failing |" in table
        assert f"| `a2` | {rate} hit rate | newly failing |" in table
        assert f"| `a3` | {rate} hit rate | newly passing |" in table
    assert TEXT not in table

    materialised = latest_metadata(instance, "regression_check", KEY)
    assert _markdown(materialised["comparison"]) == table
    summary = _markdown(latest_metadata(instance, "evaluation_summary", KEY)["comparison"])
    assert summary == table  # the summary judges as the check does


@pytest.mark.slow
def test_under_metadata_only_the_table_names_questions_by_id_and_holds_no_text_or_document(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    instance = _two_nights(tmp_path, "metadata_only", monkeypatch)
    for table in (
        _markdown(_check(instance).metadata["comparison"]),
        _markdown(latest_metadata(instance, "evaluation_summary", KEY)["comparison"]),
    ):
        assert "| `a1` | top-3 hit rate | newly failing |" in table
        assert TEXT not in table and DOC not in table


def test_a_first_run_says_it_is_the_baseline_and_lists_no_question() -> None:
    verdict = RegressionVerdict(ComparisonState.BASELINE, None, "first complete run of series 'x' on set 's'")
    table = comparison_markdown(verdict, PrivacyMode.FULL)
    assert table == (
        "**baseline** (baseline): first complete run of series 'x' on set 's'\n\n**Treatment change:** none\n"
    )


def test_cells_cannot_break_the_table_and_long_lists_are_cut() -> None:
    failing = tuple(f"q|{i}\nx" for i in range(MAX_QUESTION_ROWS + 5))
    paired = PairedComparison("top-3 hit rate", len(failing), failing, (), 0.01, (-1.0, -0.5))
    verdict = RegressionVerdict(ComparisonState.COMPARABLE, "r1", "reason | with\nbreak", paired=(paired,))
    table = comparison_markdown(verdict, PrivacyMode.FULL)
    assert "reason \\| with break" in table
    rows = [line for line in table.splitlines() if line.startswith("| `q")]
    assert len(rows) == MAX_QUESTION_ROWS
    assert rows[0] == "| `q\\|0 x` | top-3 hit rate | newly failing |"
    assert "… and 5 more (all in `verdict_details`)." in table
