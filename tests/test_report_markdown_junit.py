"""The Markdown summary and the JUnit XML of a comparison (goldeneval.report.markdown, .junit):
both read the comparison and decide nothing; user data stays text; privacy holds; sizes bound."""

from __future__ import annotations

import dataclasses
import json
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from junitparser import Error, Failure, JUnitXml, Skipped, TestCase, TestSuite
from markdown_it import MarkdownIt
from markdown_it.token import Token

from goldeneval.cli import ExitCode
from goldeneval.core.gate import GateDecision
from goldeneval.core.privacy import PrivacyMode
from goldeneval.report.junit import GATE_CASE, junit_xml, write_junit
from goldeneval.report.markdown import MAX_SUMMARY_BYTES, summary_markdown, write_summary_md
from goldeneval.report.model import Flip, QuestionRow, RunComparison
from goldeneval.report.runs import SourceRefs, compare_named
from goldeneval.store import ResultStore
from tests.conftest import FIXED_RANKINGS_PLUGIN, GOLDENEVAL_ENV_PREFIX, CliWorkspace

NASTY = "Fares | zones `code` <script>alert(1)</script> **bold** [link](http://x) $5\nsecond line &amp; more"
NASTY_TITLE = "Fare table | <img src=x onerror=alert(1)> `t`"
QUESTIONS: list[dict[str, Any]] = [
    {"id": "q-alpha", "text": "Where is the alpha office?", "form": "MATCH", "expected": ["doc-alpha"]},
    {"id": "q-nasty", "text": NASTY, "form": "GAP", "expected": ["doc-beta"]},
    {"id": "q-gamma", "text": "When does gamma open?", "form": "MATCH", "expected": ["doc-gamma"]},
    {"id": "q-delta", "text": "How far is delta?", "form": "GAP", "expected": ["doc-delta"]},
]
TEXTS = {q["id"]: q["text"] for q in QUESTIONS}
BEFORE = {
    TEXTS["q-alpha"]: ["doc-alpha", "doc-other-1"],
    NASTY: ["doc-beta", "doc-other-1"],
    TEXTS["q-gamma"]: ["doc-gamma"],
    TEXTS["q-delta"]: ["doc-other-1", "doc-delta"],
}
AFTER = {  # q-alpha fails both rates, q-nasty fails top-1 only
    TEXTS["q-alpha"]: ["doc-other-1", "doc-other-2", "doc-other-3"],
    NASTY: ["doc-other-2", "doc-other-1", "doc-beta"],
    TEXTS["q-gamma"]: ["doc-gamma"],
    TEXTS["q-delta"]: ["doc-other-1", "doc-delta"],
}
NEWLY_FAILING = {"q-alpha", "q-nasty"}
DOCUMENT_IDS = ("doc-alpha", "doc-beta", "doc-gamma", "doc-delta", "doc-other-1", "doc-other-2", "doc-other-3")
CLASSNAME = "goldeneval.retrieval.tiny"  # the same for every series: a pull request's names are main's


def _md() -> MarkdownIt:
    return MarkdownIt("commonmark").enable(["table", "strikethrough"])  # raw HTML on, as GitHub parses it


def _stored(workspace: CliWorkspace, *rankings: dict[str, Any], corpus: str = "rev-1") -> list[str]:
    """Run the set once per ranking (oldest first); the stored run ids, oldest first."""
    for ranking in rankings:
        result = workspace.evaluate(ranking, corpus=corpus)
        assert result.exit_code in (ExitCode.OK, ExitCode.REGRESSION), result.output
    return [run.id for run in reversed(ResultStore(workspace.store).list_runs())]


def _comparison(
    workspace: CliWorkspace, earlier: str, current: str, privacy: PrivacyMode = PrivacyMode.FULL
) -> RunComparison:
    corpus = workspace.root / "corpus.jsonl"
    titles = {"doc-alpha": "Alpha office", "doc-beta": NASTY_TITLE}
    corpus.write_text(
        "".join(
            json.dumps({"_id": d, "title": titles.get(d, d.title()), "text": f"about {d}"}) + "\n" for d in DOCUMENT_IDS
        )
    )
    refs = SourceRefs(set_ref=str(workspace.set_path), corpus_path=corpus)
    return compare_named(ResultStore(workspace.store), earlier, current, privacy=privacy, refs=refs)


@dataclass(frozen=True)
class Pair:
    """Two stored runs of :data:`QUESTIONS` (``BEFORE`` then ``AFTER``) and their comparisons."""

    first: str
    second: str
    regressed: RunComparison
    """``second`` against ``first``: two questions newly failing, a regression."""
    withheld: RunComparison
    """The same under ``metadata_only``."""
    improved: RunComparison
    """``first`` against ``second``: nothing newly failing."""


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Pair:
    """Built once for the module (a stored run takes a second): the runs never change."""
    root = tmp_path_factory.mktemp("pair")
    with pytest.MonkeyPatch.context() as patch:
        for name in [name for name in os.environ if name.startswith(GOLDENEVAL_ENV_PREFIX)]:
            patch.delenv(name)
        (root / "fixed_rankings_plugin.py").write_text(FIXED_RANKINGS_PLUGIN)
        patch.syspath_prepend(str(root))
        workspace = CliWorkspace(root)
        workspace.write_set(QUESTIONS)
        first, second = _stored(workspace, BEFORE, AFTER)
        return Pair(
            first,
            second,
            _comparison(workspace, first, second),
            _comparison(workspace, first, second, privacy=PrivacyMode.METADATA_ONLY),
            _comparison(workspace, second, first),
        )


# --------------------------------------------------------------------------- Markdown


def _tables(markdown: str) -> list[list[list[str]]]:
    """Each table of the rendered Markdown as rows of cell texts (the header row first)."""
    tables: list[list[list[str]]] = []
    row: list[str] | None = None
    tokens: list[Token] = _md().parse(markdown)
    for i, token in enumerate(tokens):
        if token.type == "table_open":
            tables.append([])
        elif token.type == "tr_open":
            row = []
        elif token.type == "tr_close":
            assert row is not None
            tables[-1].append(row)
        elif token.type in ("th_open", "td_open"):
            inline = tokens[i + 1]
            assert row is not None
            row.append(inline.content if inline.type == "inline" else "")
    return tables


def _cell_html(markdown: str) -> list[list[str]]:
    """Each body row of every table as the rendered HTML of its cells."""
    html = _md().render(markdown)
    root = ET.fromstring(f"<root>{html.replace('<br>', '<br/>')}</root>")
    rows = []
    for tr in root.iter("tr"):
        rows.append([ET.tostring(cell, encoding="unicode") for cell in tr])
    return rows


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_summary_has_the_verdict_the_rates_table_and_the_newly_failing_questions(
    pair: Pair,
) -> None:
    comparison = pair.regressed
    markdown = summary_markdown(comparison)
    verdict = comparison.verdict
    assert f"**{verdict.status.value}**: " in markdown
    assert f"regression gate: **{'passes' if verdict.passes_gate else 'fails'}" in markdown
    rates, questions = _tables(markdown)
    assert [row[0] for row in rates[1:]] == [
        m.name.replace("_", "\\_") + (" **(gated)**" if m.gated else "") for m in comparison.measures
    ]
    paired = {p.rate: p for p in comparison.paired}
    for row, measure in zip(rates[1:], comparison.measures, strict=True):
        assert row[1:4] == [f"{measure.earlier:.3f}", f"{measure.current:.3f}", f"{measure.change:+.3f}"]
        if measure.name in paired:
            p = paired[measure.name]
            assert row[5] == f"{p.p_value:.3g}"
            assert row[6] == f"[{p.interval[0]:+.3f}, {p.interval[1]:+.3f}]"
    assert {p.rate for p in comparison.paired} == set(comparison.rates)
    assert questions[0] == ["question", "text", "rates that flipped", "before", "now"]
    assert {row[0].replace("\\", "") for row in questions[1:]} == NEWLY_FAILING
    assert {row.id for row in comparison.newly_failing} == NEWLY_FAILING
    html = _md().render(markdown)
    assert "Where is the alpha office?" in html
    assert "Alpha office" in html and "doc-other-2" in html  # titles and both runs' documents


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_user_text_renders_as_text_inside_its_cell(pair: Pair) -> None:
    markdown = summary_markdown(pair.regressed)
    html = _md().render(markdown)
    assert "<script" not in html and "<img" not in html and "<code>" not in html and "<strong>bold" not in html
    assert "<a href" not in html
    for table in (_tables(markdown)[0], _tables(markdown)[1]):
        assert len({len(row) for row in table}) == 1  # every row as many cells as the header
    nasty = next(row for row in _cell_html(markdown) if "q-nasty" in row[0])
    assert len(nasty) == 5
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in nasty[1]
    assert "Fares | zones `code`" in nasty[1] and "**bold** [link](http://x) $5 second line &amp;amp; more" in nasty[1]
    assert "Fare table | &lt;img src=x onerror=alert(1)&gt; `t`" in nasty[3]  # the title, before


def test_the_limit_holds_and_says_how_many_more(pair: Pair) -> None:
    comparison = pair.regressed
    markdown = summary_markdown(comparison, limit=1)
    assert len(_tables(markdown)[1]) == 2  # header and one question
    assert "... and 1 more" in markdown
    none = summary_markdown(comparison, limit=0)
    assert len(_tables(none)) == 1 and "... and 2 more" in none


def _many_failing(comparison: RunComparison, count: int, text: str) -> RunComparison:
    template = next(row for row in comparison.questions if row.flip is Flip.NEWLY_FAILING)
    rows = tuple(dataclasses.replace(template, id=f"q{i:06d}", text=text) for i in range(count))
    return dataclasses.replace(comparison, questions=rows)


def test_the_summary_stays_under_the_job_summary_limit_whatever_the_run(
    pair: Pair,
) -> None:
    huge = _many_failing(pair.regressed, 2_500, "long question " * 100_000)
    markdown = summary_markdown(huge, limit=1_000_000)
    assert len(markdown.encode()) <= MAX_SUMMARY_BYTES
    shown = sum(1 for line in markdown.splitlines() if line.startswith("| q0"))  # no parse: 1 MB takes seconds
    assert 0 < shown < 2_500
    assert f"... and {2_500 - shown} more (the summary's size limit)" in markdown
    assert len(summary_markdown(huge).encode()) < 100_000  # the default limit: 20 questions


def test_metadata_only_shows_ids_and_counts_but_no_text_and_no_documents(
    pair: Pair,
) -> None:
    comparison = pair.withheld
    markdown = summary_markdown(comparison)
    for text in [*TEXTS.values(), "alpha office", "Alpha office", *DOCUMENT_IDS, "Fare table"]:
        assert text not in markdown
    assert "metadata\\_only" in markdown  # the note says what is withheld
    questions = _tables(markdown)[1]
    assert questions[0] == ["question", "rates that flipped", "before", "now"]
    assert {row[0].replace("\\", "") for row in questions[1:]} == NEWLY_FAILING


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_mismatch_has_no_numeric_verdict_and_an_informational_list(cli_workspace: CliWorkspace) -> None:
    cli_workspace.write_set(QUESTIONS)
    first = _stored(cli_workspace, BEFORE)[0]
    cli_workspace.evaluate(AFTER, corpus="rev-2")
    second = _stored(cli_workspace)[-1]
    comparison = _comparison(cli_workspace, first, second)
    assert comparison.informational
    markdown = summary_markdown(comparison)
    assert "**mismatch**: " in markdown
    assert "no numeric verdict (mismatch)" in markdown
    assert "### Newly failing questions: 2 (informational: no numeric verdict)" in markdown

    document = JUnitXml.fromstring(junit_xml(comparison))
    suite = next(iter(document))
    cases = {case.name: case for case in suite}
    assert [type(r) for r in cases[GATE_CASE].result] == [Failure]  # the gate fails: not comparable
    assert cases[GATE_CASE].result[0].type == GateDecision.NOT_COMPARABLE.value
    questions = [case for name, case in cases.items() if name != GATE_CASE]
    assert all([type(r) for r in case.result] == [Skipped] for case in questions)
    assert all(case.result[0].message.startswith("no numeric verdict (mismatch)") for case in questions)
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (5, 1, 0, 4)


def test_writes_are_atomic_and_leave_no_half_file(pair: Pair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    comparison = pair.regressed
    summary, junit = tmp_path / "out" / "summary.md", tmp_path / "out" / "junit.xml"
    summary.parent.mkdir()
    assert write_summary_md(comparison, summary, 5) == summary
    assert summary.read_text() == summary_markdown(comparison, limit=5)
    write_junit(comparison, junit)
    assert junit.read_bytes() == junit_xml(comparison)

    def broken(src: object, dst: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", broken)
    with pytest.raises(OSError, match="disk full"):
        write_summary_md(comparison, summary, 1)
    assert summary.read_text() == summary_markdown(comparison, limit=5)  # unchanged
    assert sorted(p.name for p in summary.parent.iterdir()) == ["junit.xml", "summary.md"]  # no temporary left


# --------------------------------------------------------------------------- JUnit


def _suite(xml: bytes) -> TestSuite:
    document = JUnitXml.fromstring(xml)
    suites = list(document)
    assert len(suites) == 1
    suite = suites[0]
    assert isinstance(suite, TestSuite)
    return suite


def test_junit_has_one_case_per_question_and_one_for_the_gate(pair: Pair) -> None:
    comparison = pair.regressed
    xml = junit_xml(comparison)
    suite = _suite(xml)
    cases: list[TestCase] = list(suite)
    assert sorted(case.name for case in cases) == sorted([GATE_CASE, *TEXTS])
    failed = {case.name for case in cases if any(isinstance(r, Failure) for r in case.result)}
    gate_fails = comparison.verdict.gate(comparison.current.complete) is not GateDecision.PASS
    assert failed == NEWLY_FAILING | ({GATE_CASE} if gate_fails else set())
    assert gate_fails  # top-1 hit rate fell from 0.75 to 0.25: a regression
    gate = next(case for case in cases if case.name == GATE_CASE)
    assert gate.result[0].message == comparison.verdict.summary
    assert gate.classname == f"{CLASSNAME}.regression"
    assert {case.classname for case in cases if case.name != GATE_CASE} == {CLASSNAME}
    failing = {case.name: case.result[0] for case in cases if case.name in NEWLY_FAILING}
    assert all(r.type == "newly_failing" for r in failing.values())
    assert NASTY in (failing["q-nasty"].text or "")  # as it is: a CI system shows it as text
    assert f"doc-beta ({NASTY_TITLE})" in (failing["q-nasty"].text or "")  # before, with its title
    assert "doc-other-2" in (failing["q-nasty"].text or "")  # now
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (5, 3, 0, 0)

    root = ET.fromstring(xml)  # the standard library reads it too, and the root's counts agree
    assert root.tag == "testsuites"
    assert {k: root.get(k) for k in ("tests", "failures", "errors", "skipped")} == {
        "tests": "5",
        "failures": "3",
        "errors": "0",
        "skipped": "0",
    }
    assert len(root.findall("./testsuite/testcase")) == 5
    assert junit_xml(comparison) == xml  # stable: names and order the same on every write


def test_junit_properties_hold_the_rates_and_the_runs(pair: Pair) -> None:
    comparison = pair.regressed
    xml = junit_xml(comparison, suite_name="nightly retrieval")
    assert _suite(xml).name == "nightly retrieval"
    properties = {
        p.get("name"): p.get("value") or "" for p in ET.fromstring(xml).iterfind("./testsuite/properties/property")
    }
    assert properties["goldeneval.current_run"] == pair.second
    assert properties["goldeneval.earlier_run"] == pair.first
    assert properties["goldeneval.verdict.status"] == comparison.verdict.status.value
    assert properties["goldeneval.gate"] == comparison.verdict.gate(comparison.current.complete).value
    for measure in comparison.measures:
        prefix = f"goldeneval.measure.{measure.name}"
        assert float(properties[f"{prefix}.before"]) == measure.earlier
        assert float(properties[f"{prefix}.now"]) == measure.current
        assert float(properties[f"{prefix}.change"]) == measure.change
        assert properties[f"{prefix}.gated"] == str(measure.gated).lower()
    for paired in comparison.paired:
        assert float(properties[f"goldeneval.paired.{paired.rate}.mcnemar_p"]) == paired.p_value


def test_an_improvement_passes_the_gate_and_fails_no_question(pair: Pair) -> None:
    comparison = pair.improved  # the earlier run judged against the later
    assert comparison.verdict.gate(comparison.current.complete) is GateDecision.PASS
    suite = _suite(junit_xml(comparison))
    assert (suite.tests, suite.failures, suite.errors, suite.skipped) == (5, 0, 0, 0)
    assert all(case.is_passed for case in suite)
    assert "regression gate: **passes**" in summary_markdown(comparison)
    assert "### Newly failing questions: 0" in summary_markdown(comparison)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_errored_question_is_an_error_case(cli_workspace: CliWorkspace) -> None:
    cli_workspace.write_set(QUESTIONS)
    first, second = _stored(cli_workspace, BEFORE, {**AFTER, TEXTS["q-gamma"]: "raise"})
    comparison = _comparison(cli_workspace, first, second)
    suite = _suite(junit_xml(comparison))
    errors = {case.name: case.result[0] for case in suite if case.result and isinstance(case.result[0], Error)}
    assert list(errors) == ["q-gamma"]
    assert "backend unreachable" in (errors["q-gamma"].message or "")
    assert suite.errors == 1
    assert "Errored in this run: 1: q-gamma" in summary_markdown(comparison).replace("\\", "")


def test_junit_under_metadata_only_names_no_text_and_no_document(pair: Pair) -> None:
    comparison = pair.withheld
    xml = junit_xml(comparison).decode()
    for text in [*TEXTS.values(), "alpha office", "Alpha office", *DOCUMENT_IDS, "Fare table"]:
        assert text not in xml
    suite = _suite(xml.encode())
    failed = {case.name for case in suite if any(isinstance(r, Failure) for r in case.result)}
    assert failed == NEWLY_FAILING | {GATE_CASE}


def test_characters_xml_cannot_hold_are_shown_escaped(pair: Pair) -> None:
    comparison = pair.regressed
    rows: list[QuestionRow] = [
        dataclasses.replace(row, id=row.id + "\x1b[31m", text="bell\x07 \ud800") for row in comparison.questions
    ]
    xml = junit_xml(dataclasses.replace(comparison, questions=tuple(rows)))
    suite = _suite(xml)
    assert "q-alpha\\x1b[31m" in {case.name for case in suite}
    assert "bell\\x07 \\ud800" in xml.decode()


def test_a_mention_in_a_question_pings_nobody() -> None:
    """GitHub turns ``@name`` in a comment into a notification: a question naming a team must not."""
    from goldeneval.report.markdown import escape_markdown

    escaped = escape_markdown("Ask @transit-team about the fare")
    assert "@transit-team" not in escaped
    assert escaped.replace("\u2060", "") == "Ask @transit-team about the fare"
