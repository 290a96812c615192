"""The ``no_regression`` check's description names what changed: the newly failing questions
with their text and what came back instead, and where the run's HTML report is.

Two nights of the bundled sample (``goldeneval/sample/transit``, the registered set
``transit-sample``) through real materialisations of the asset graph, with the fixed-rankings
retriever: the first night ranks every expected document first, the second puts three
boilerplate pages above them for twelve questions.  Under ``metadata_only`` the description,
the metadata and the event log of the check hold no question text and no document id.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import dagster as dg
import pytest
import yaml

from goldeneval.core.gate import ComparisonState
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.regression import RegressionVerdict
from goldeneval.report.check import WITHHELD, check_description
from goldeneval.report.model import Flip, QuestionRow, RunComparison, Side
from goldeneval.retrieval.sets import resolve_golden_set
from goldeneval.store.parquet import REPORTS_FOLDER
from pipelines.build import build_definitions
from tests.dagster_support import (
    FIXED_PROVENANCE,
    PLUGIN,
    PLUGIN_MODULE,
    latest_metadata,
    run_nightly,
    run_requests,
    tick_regression_sensor,
)

SAMPLE = "transit-sample"
KEY = f"fixed|{SAMPLE}"
FAILED = 12
"""Questions the second night ranks worse: 12 of 81 (top-1 falls by more than 0.1)."""
BOILERPLATE = ["about/cookie-notice", "about/imprint", "about/contact"]
FIRST_TEXT = "How much does a day ticket for zones A and B cost?"
"""q-001's text (the first newly failing question)."""
NOW_TOP = "about/cookie-notice (Cookie notice)"
"""What came back first for it on the second night, with its title."""
BEFORE_TOP = "fares/day-ticket (Day Ticket)"


def sample_rankings() -> tuple[dict[str, list[str]], dict[str, list[str]], list[Any]]:
    """The first night's rankings (every expected document first), the second night's (three
    boilerplate pages first for the first :data:`FAILED` answerable questions) and the set's
    questions."""
    questions = list(resolve_golden_set(SAMPLE, ()).questions)
    good = {q.text: [*sorted(q.expected), "about/imprint"] if q.expected else ["about/imprint"] for q in questions}
    worse = dict(good)
    for question in [q for q in questions if q.expected][:FAILED]:
        worse[question.text] = [*BOILERPLATE, *sorted(question.expected)]
    return good, worse, questions


@dataclass
class SampleProject:
    root: Path
    config: Path
    rankings: Path

    @property
    def tables(self) -> Path:
        return self.root / ".goldeneval" / "tables"

    def set_rankings(self, rankings: dict[str, list[str]]) -> None:
        self.rankings.write_text(json.dumps(rankings), encoding="utf-8")


def write_sample_project(root: Path, privacy: str, rankings: dict[str, list[str]]) -> SampleProject:
    """A suite of the registered sample set and the fixed-rankings retriever under ``root``
    (put ``root`` on ``sys.path`` to load the plugin)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / f"{PLUGIN_MODULE}.py").write_text(PLUGIN, encoding="utf-8")
    project = SampleProject(root, root / "goldeneval.yaml", root / "rankings.json")
    project.set_rankings(rankings)
    config = {
        "sets": [SAMPLE],
        "retrievers": {
            "fixed": {
                "id": f"{PLUGIN_MODULE}:build",
                "options": {"rankings": str(project.rankings)},
                "provenance": FIXED_PROVENANCE,
            }
        },
        "privacy": privacy,
        "timeout_s": 30,
    }
    project.config.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return project


def two_nights(project: SampleProject, instance: dg.DagsterInstance, worse: dict[str, list[str]]) -> None:
    """Two nightly runs of the sample's partition, each followed by what the daemon does: the
    regression sensor's check of the stored run."""
    cursor = None
    for night in (1, 2):
        if night == 2:
            project.set_rankings(worse)
        defs = build_definitions(project.config)
        assert all(r.success for r in run_nightly(defs, instance, [KEY]))
        tick = tick_regression_sensor(defs, instance, cursor=cursor)
        assert all(r.success for r in run_requests(defs, instance, tick))
        cursor = tick.cursor


def no_regression(instance: dg.DagsterInstance) -> tuple[dg.AssetCheckEvaluation, list[dg.EventLogEntry]]:
    """The latest ``no_regression`` evaluation and every event of the run that made it."""
    [run] = instance.get_runs(filters=dg.RunsFilter(job_name="regression_check_job"), limit=1)
    events = list(instance.all_logs(run.run_id))
    [evaluation] = [
        e.dagster_event.event_specific_data
        for e in events
        if e.dagster_event and e.dagster_event.event_type is dg.DagsterEventType.ASSET_CHECK_EVALUATION
    ]
    assert isinstance(evaluation, dg.AssetCheckEvaluation)
    return evaluation, events


@dataclass
class Nights:
    project: SampleProject
    instance: dg.DagsterInstance
    questions: list[Any]


def _nights(root: Path, privacy: str) -> Iterator[Nights]:
    good, worse, questions = sample_rankings()
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(root))
        project = write_sample_project(root, privacy, good)
        with dg.DagsterInstance.ephemeral() as instance:
            two_nights(project, instance, worse)
            yield Nights(project, instance, questions)


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    yield from _nights(tmp_path_factory.mktemp("full"), "full")


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    yield from _nights(tmp_path_factory.mktemp("private"), "metadata_only")


@pytest.mark.slow
def test_the_description_names_newly_failing_questions_with_their_text_and_what_came_back(full: Nights) -> None:
    check, _ = no_regression(full.instance)
    assert not check.passed
    description = check.description or ""
    assert description.startswith("regression: top-1 hit rate fell ")  # the verdict's summary first
    assert f'- q-001 "{FIRST_TEXT}"' in description
    [first] = [line for line in description.splitlines() if line.startswith("- q-001 ")]
    # what came back instead: the current top 3 with titles, then the earlier run's
    now, before = first.split("; before ")
    assert f"now {NOW_TOP}, about/imprint (Imprint), about/contact (" in now
    assert before.startswith(BEFORE_TOP)
    assert "First relevant document: rank 4 (was rank 1)." in first
    # at most five questions, then how many more
    earlier = str(check.metadata["previous_run_id"].value)
    assert f"Newly failing against run {earlier[:12]}: {FAILED} questions." in description
    assert sum(line.startswith("- q-") for line in description.splitlines()) == 5
    assert f"- ... and {FAILED - 5} more" in description


@pytest.mark.slow
def test_the_html_report_is_written_beside_the_tables_and_named_in_the_description_and_metadata(
    full: Nights,
) -> None:
    check, _ = no_regression(full.instance)
    stored_id = str(check.metadata["stored_run_id"].value)
    expected = full.project.tables / REPORTS_FOLDER / f"{stored_id}.html"
    entry = check.metadata["report"]
    assert isinstance(entry, dg.PathMetadataValue)
    assert Path(str(entry.value)) == expected
    assert (check.description or "").endswith(f"HTML report: `{expected}`")
    assert latest_metadata(full.instance, "regression_check", KEY)["report"] == entry
    html = expected.read_text(encoding="utf-8")
    assert html.lstrip().lower().startswith("<!doctype html")
    assert FIRST_TEXT in html
    # every judged run gets its own report: the baseline's too
    reports = sorted(p.name for p in (full.project.tables / REPORTS_FOLDER).glob("*.html"))
    assert len(reports) == 2 and f"{stored_id}.html" in reports


@pytest.mark.slow
def test_rates_on_the_check_are_text_never_plotted_across_partitions(full: Nights) -> None:
    check, _ = no_regression(full.instance)
    for name in ("top1_hit_rate", "top3_hit_rate"):
        assert isinstance(check.metadata[name], dg.TextMetadataValue), name
        assert float(str(check.metadata[name].value)) < 1.0


@pytest.mark.slow
def test_under_metadata_only_nothing_of_the_check_holds_text_or_a_document_id(private: Nights) -> None:
    check, events = no_regression(private.instance)
    assert not check.passed
    description = check.description or ""
    assert "- q-001 (top-1 hit rate, top-3 hit rate)" in description.splitlines()
    assert WITHHELD.replace("_", "\\_") in description
    report = Path(str(check.metadata["report"].value))
    materialised = latest_metadata(private.instance, "regression_check", KEY)
    written = [
        ("description", description),
        ("check metadata", repr(check.metadata)),
        ("materialisation metadata", repr(materialised)),
        ("event log", "\n".join(repr(event) for event in events)),
        ("HTML report", report.read_text(encoding="utf-8")),
    ]
    documents = {d for q in private.questions for d in q.expected} | set(BOILERPLATE)
    for where, text in written:
        for question in private.questions:
            assert question.text not in text, f"question {question.id}'s text in the {where}"
        for document in documents:
            assert document not in text, f"document id {document} in the {where}"


# --------------------------------------------------------------------------- the renderer alone


def _comparison(rows: list[QuestionRow], privacy: PrivacyMode = PrivacyMode.FULL) -> RunComparison:
    """A comparison of two stand-in runs (the description reads only the earlier run's id)."""
    verdict = RegressionVerdict(ComparisonState.COMPARABLE, "earlier-run-id", "top-1 hit rate fell", regressed=True)
    runs: Any = (SimpleNamespace(id="current-run-id"), SimpleNamespace(id="earlier-run-id"))
    return RunComparison(
        current=runs[0],
        earlier=runs[1],
        verdict=verdict,
        kind="retrieval",
        rates=("top-1", "top-3"),
        rate_names={},
        paired=(),
        measures=(),
        slices=(),
        questions=tuple(rows),
        documents={},
        trend=(),
        privacy=privacy,
        notes=(),
    )


def _row(question: str, text: str) -> QuestionRow:
    before = Side("ok", (True, True), ("d1", "d2"))
    now = Side("ok", (False, False), ("x|y", "d1"))
    return QuestionRow(question, text, None, None, before, now, Flip.NEWLY_FAILING, ("top-1",), False)


def test_user_text_is_escaped_to_one_line_and_the_list_is_cut_at_the_limit() -> None:
    rows = [_row(f"q{i}", "two\nlines *not bold* <b>x</b>") for i in range(4)]
    description = check_description(_comparison(rows), limit=2, report_path="/r/x_y.html")
    lines = description.splitlines()
    assert lines[0] == "regression: top-1 hit rate fell"
    assert '- q0 "two lines \\*not bold\\* \\<b\\>x\\</b\\>" (top-1): now x\\|y, d1; before d1, d2.' in lines
    assert sum(line.startswith("- q") for line in lines) == 2
    assert "- ... and 2 more" in lines
    assert lines[-1] == "HTML report: `/r/x_y.html`"


def test_without_a_report_nothing_is_said_of_one() -> None:
    description = check_description(_comparison([]), report_path=None)
    assert "HTML report" not in description
    assert "No question fails now that passed in run earlier-run-" in description
