"""The self-contained HTML report (goldeneval.report.html): one file, no request leaving it,
every piece of user data escaped, the questions filtered by the page's own script, and nothing
of the content under ``metadata_only``."""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from markupsafe import escape

from goldeneval.cli import ExitCode, main
from goldeneval.core.corpus import load_corpus
from goldeneval.core.privacy import PrivacyMode
from goldeneval.report.html import question_columns, script_json, write_report
from goldeneval.report.model import Flip, RunComparison
from goldeneval.report.runs import SourceRefs, compare_named
from goldeneval.report.sources import DocumentInfo
from goldeneval.retrieval.sets import resolve_golden_set
from goldeneval.store import ResultStore
from tests.chromium import Page, headless_chromium, require_chromium
from tests.conftest import CliWorkspace

ALL_HIT = {"alpha": ["a", "x"], "beta": ["b", "y"], "gamma": []}
ONE_MISS = {"alpha": ["a", "x"], "beta": ["c", "b"], "gamma": []}
HOSTILE = '</script><script>alert("x")</script><img src=x onerror=alert(1)> & <!-- \u2028'


# --------------------------------------------------------------------------- helpers


class _Elements(HTMLParser):
    """Every start tag with its attributes, and the text of each script and style element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []
        self._open: tuple[str, dict[str, str | None]] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._open = (tag, dict(attrs))

    def handle_data(self, data: str) -> None:
        if self._open is not None:
            tag, attrs = self._open
            if tag == "script":
                self.scripts.append((attrs, data))
            else:
                self.styles.append(data)

    def handle_endtag(self, tag: str) -> None:
        self._open = None


def parsed(path: Path) -> _Elements:
    elements = _Elements()
    elements.feed(path.read_text(encoding="utf-8"))
    elements.close()
    return elements


def embedded(elements: _Elements, element_id: str) -> Any:
    found = [text for attrs, text in elements.scripts if attrs.get("id") == element_id]
    assert len(found) == 1, f"one <script id={element_id}> expected"
    assert elements_script_type(elements, element_id) == "application/json"
    return json.loads(found[0])


def elements_script_type(elements: _Elements, element_id: str) -> str | None:
    return next(attrs.get("type") for attrs, _ in elements.scripts if attrs.get("id") == element_id)


def tiny_comparison(workspace: CliWorkspace, privacy: PrivacyMode = PrivacyMode.FULL) -> RunComparison:
    assert workspace.evaluate(ALL_HIT).exit_code == ExitCode.OK
    assert workspace.evaluate(ONE_MISS).exit_code == ExitCode.OK
    store = ResultStore(workspace.store)
    newest, older = store.list_runs()[:2]
    refs = SourceRefs(set_ref=str(workspace.set_path))
    return compare_named(store, older.id, newest.id, privacy=privacy, refs=refs)


# --------------------------------------------------------------------------- fast: the file


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_report_is_one_file_that_requests_nothing(cli_workspace: CliWorkspace, tmp_path: Path) -> None:
    comparison = tiny_comparison(cli_workspace)
    out = write_report(comparison, tmp_path / "out" / "report.html")
    assert out == tmp_path / "out" / "report.html"
    elements = parsed(out)
    outside = ("http:", "https:", "//", "ftp:", "file:")
    for tag, attrs in elements.tags:
        for name in ("src", "href", "action", "poster", "data", "srcset", "background"):
            value = (attrs.get(name) or "").strip().lower()
            assert not value.startswith(outside), f"<{tag} {name}={value!r}> loads from outside"
        assert tag not in ("link", "iframe", "object", "embed", "img", "base"), f"<{tag}> in a self-contained report"
        if tag == "script":
            assert "src" not in attrs, "every script is inline"
    text = out.read_text(encoding="utf-8")
    for needle in ('src="http', 'href="http', "src='http", "<link", "@import"):
        assert needle not in text, needle
    for style in elements.styles:
        assert "url(" not in style
    # Bokeh's library holds a MathJax loader (a CDN address) that runs only for TeX labels; no
    # other script of the page names an address outside it.
    ours = [data for attrs, data in elements.scripts if "BEGIN bokeh.min.js" not in data]
    assert not any("//cdn" in data or "http://" in data or "https://" in data for data in ours)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    # What the page is made of: the verdict, the measures, the paired test, the charts, the questions.
    assert str(escape(comparison.verdict.summary)) in text
    assert 'id="trend-chart"' in text and 'id="slice-chart"' in text and 'id="question-table"' in text
    charts = embedded(elements, "ge-charts")
    assert charts["trend"]["doc"]["roots"] and charts["slices"]["doc"]["roots"]
    data = embedded(elements, "ge-data")
    assert data["id"] == [row.id for row in comparison.questions]
    assert data["text"] == ["alpha", "beta", "gamma"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_user_data_is_escaped_in_the_page_and_in_its_json(cli_workspace: CliWorkspace, tmp_path: Path) -> None:
    comparison = tiny_comparison(cli_workspace)
    rows = tuple(dataclasses.replace(row, text=f"{row.id} {HOSTILE}") for row in comparison.questions)
    documents = {doc: DocumentInfo(f"title {HOSTILE}", f"snippet {HOSTILE}") for doc in ("a", "b", "c", "x", "y")}
    hostile = dataclasses.replace(comparison, questions=rows, documents=documents, notes=(f"note {HOSTILE}",))
    out = write_report(hostile, tmp_path / "report.html")
    text = out.read_text(encoding="utf-8")
    assert HOSTILE not in text
    assert "<script>alert" not in text and "<img" not in text
    assert "note &lt;/script&gt;&lt;script&gt;alert(&#34;x&#34;)" in text  # autoescaped in the template
    elements = parsed(out)
    data = embedded(elements, "ge-data")  # the JSON survives the HTML parser intact
    assert data["text"] == [row.text for row in rows]
    assert set(data["titles"]) == {f"title {HOSTILE}"}
    assert "</" not in script_json({"t": HOSTILE}) and "<!--" not in script_json({"t": HOSTILE})


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_columns_keep_each_document_once_and_say_what_flipped(cli_workspace: CliWorkspace) -> None:
    comparison = tiny_comparison(cli_workspace)
    beta = next(row for row in comparison.questions if row.id == "q2")
    assert beta.flip is Flip.NEWLY_FAILING
    assert beta.current is not None
    marked = dataclasses.replace(beta, current=dataclasses.replace(beta.current, unjudged=(1, 3)))
    rows = tuple(marked if row.id == "q2" else row for row in comparison.questions)
    data = question_columns(dataclasses.replace(comparison, questions=rows))
    q2 = data["id"].index("q2")
    assert data["flips"][data["flip"][q2]] == "newly_failing"
    assert data["flipped"][q2] == 0b01  # top-1 only: b is still in the top 3
    assert data["current"]["unjudged"][q2] == 0b101  # ranks 1 and 3
    assert data["earlier"]["unjudged"] is None or data["earlier"]["unjudged"][q2] in (None, 0)
    assert sorted(data["document_ids"]) == ["a", "b", "c", "x", "y"]  # each once, whoever returned it
    documents = [data["document_ids"][i] for i in data["current"]["documents"][q2]]
    assert documents == ["c", "b"]
    assert data["current"]["first_relevant"][q2] == 2 and data["rank_change"][q2] == 1
    assert data["forms"][data["form"][q2]] == "GAP"
    assert data["hard_classes"][data["hard_class"][q2]] == "prose-free"


# --------------------------------------------------------------------------- the sample, in Chromium


@pytest.fixture(scope="module")
def sample_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two stored runs of the bundled sample: lexical, then lexical with other BM25 parameters."""
    root = tmp_path_factory.mktemp("report-sample")
    store = root / "results.duckdb"
    base = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--no-progress"]
    base += ["--store", str(store), "--cache-dir", str(root / "cache")]
    for extra in ([], ["--option", "k1=0.3", "--option", "b=0.2"]):
        result = CliRunner().invoke(main, [*base, *extra])
        assert result.exit_code == ExitCode.OK, result.output
    return store


def sample_comparison(store: Path, privacy: PrivacyMode = PrivacyMode.FULL) -> RunComparison:
    runs = ResultStore(store).list_runs()
    return compare_named(ResultStore(store), runs[1].id, runs[0].id, privacy=privacy)


class RecordingPage(Page):
    """A tab that evaluates, waits for and lists what the page requested (the shared helper's
    DevTools events)."""

    def __init__(self, page: Page) -> None:
        super().__init__(page._socket)
        self._ids = page._ids  # the same tab: its message ids go on
        self.events = page.events

    def evaluate(self, expression: str) -> Any:
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True).get("result", {}).get("value")

    def wait_for(self, expression: str, timeout_s: float = 60.0) -> Any:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"{expression} never held within {timeout_s:g} s")

    def requested(self) -> list[str]:
        return [e["params"]["request"]["url"] for e in self.events if e["method"] == "Network.requestWillBeSent"]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[RecordingPage]:
    require_chromium()
    with headless_chromium(tmp_path / "chromium") as page:
        recording = RecordingPage(page)
        recording.call("Network.enable")
        recording.call(
            "Page.addScriptToEvaluateOnNewDocument",
            source="window.__violations = []; document.addEventListener('securitypolicyviolation',"
            " e => window.__violations.push(e.blockedURI + ' ' + e.violatedDirective));",
        )
        yield recording


SHOWN_IDS = "[...document.querySelectorAll('#question-table tbody tr.q-row')].map(r => r.dataset.id)"


@pytest.mark.e2e
@pytest.mark.slow
def test_the_report_opens_offline_and_filters_to_the_flipped_questions(
    sample_store: Path, browser: RecordingPage, tmp_path: Path
) -> None:
    comparison = sample_comparison(sample_store)
    flipped = {row.id for row in comparison.newly_failing + comparison.newly_passing}
    assert flipped, "the two sample runs must differ"
    out = write_report(comparison, tmp_path / "report.html")
    url = out.as_uri()
    browser.open(url)
    text = browser.wait_for_text("Verdict", "Showing 1–81 of 81", timeout_s=60)  # noqa: RUF001
    assert comparison.verdict.summary in text
    assert comparison.questions[0].text is not None and comparison.questions[0].text in text
    # Both charts drawn by Bokeh: a plot view with its canvas inside each chart's element.
    for chart in ("trend-chart", "slice-chart"):
        browser.wait_for(f"document.querySelector('#{chart} .bk-Figure, #{chart} .bk-Canvas') !== null")
    assert browser.evaluate("window.Bokeh.documents.length") == 2
    assert len(browser.evaluate(SHOWN_IDS)) == 81

    browser.evaluate(
        "(() => { const s = document.getElementById('flip-filter'); s.value = 'flipped';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    shown = browser.evaluate(SHOWN_IDS)
    assert set(shown) == flipped and len(shown) == len(flipped)
    # A row opens both rankings with the documents' titles and the first relevant mark.
    browser.evaluate("document.querySelector('#question-table tbody tr.q-row').click()")
    detail = browser.wait_for("document.querySelector('tr.detail') && document.querySelector('tr.detail').innerText")
    assert "before" in detail and "now" in detail
    row = next(r for r in comparison.questions if r.id == shown[0])
    assert row.current is not None and row.current.documents
    title = comparison.documents[row.current.documents[0]].title
    assert title in detail

    browser.evaluate(
        "(() => { const s = document.getElementById('sort'); s.value = 'rank_worse';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    changes = [r.rank_change for r in comparison.questions if r.id in flipped]
    worst = max(c for c in changes if c is not None)
    first = browser.evaluate(SHOWN_IDS)[0]
    assert next(r.rank_change for r in comparison.questions if r.id == first) == worst

    time.sleep(1.0)  # any late request (a chart's, a font's) would be sent by now
    assert browser.evaluate("window.__violations") == []
    requested = [u for u in browser.requested() if not u.startswith("data:")]  # data: URLs never leave the page
    assert requested == [url], requested


@pytest.mark.slow
def test_metadata_only_shows_no_text_and_no_document_and_says_so(sample_store: Path, tmp_path: Path) -> None:
    comparison = sample_comparison(sample_store, PrivacyMode.METADATA_ONLY)
    assert comparison.privacy is PrivacyMode.METADATA_ONLY
    out = write_report(comparison, tmp_path / "report.html")
    content = out.read_bytes()
    golden = resolve_golden_set("transit-sample", ())
    assert golden.corpus is not None
    document_ids = [document.id for document in load_corpus(golden.corpus)]
    assert len(document_ids) == 72 and len(golden.questions) == 81
    leaked = [q.text for q in golden.questions if q.text.encode() in content]
    leaked += [d for d in document_ids if d.encode() in content]
    assert leaked == []
    text = content.decode()
    assert "metadata_only" in text
    assert "it cannot show the question text, the documents each run returned" in text
    for note in comparison.notes:
        assert str(escape(note)) in text
    elements = parsed(out)
    data = embedded(elements, "ge-data")
    assert data["text"] is None and data["document_ids"] == [] and data["current"]["documents"] is None
    assert data["id"] == [row.id for row in comparison.questions]  # ids and outcomes are metadata
