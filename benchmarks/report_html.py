"""The ``report_html`` section of ``benchmarks.run``: the HTML report at 10,000 and 100,000 questions.

A comparison of N synthetic questions (:func:`synthetic_comparison`: two stored runs of the
bundled sample give the runs, the verdict and the slices; the questions, their rankings over a
corpus of N / 2 documents with titles and snippets, the flips and a 90-night trend with two
breaks are generated), then, each side by side with its peer:

* **Writing**: :func:`goldeneval.report.html.write_report` against ``json.dumps`` of the same
  comparison's ``comparison_json`` (what ``goldeneval compare --format json`` writes) into a
  file: wall time (median of the rounds) and file size.
* **Opening**: the report in headless Chromium (``tests/chromium.py``: DevTools, a fresh
  profile, no network), against a blank page (one paragraph) opened the same way in the same
  browser, alternating: first contentful paint, the moment the question table's first page is
  on screen (the page's ``goldeneval-table-ready`` mark) and the charts drawn
  (``goldeneval-charts-ready``), each from navigation start; median of the rounds.

    .venv/bin/python -m benchmarks.report_html [--sizes 10000,100000] [--rounds 3] [--json out.json]

Nothing is asserted: timings are reported beside their peers.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

__all__ = ["render_report_html", "section_report_html", "synthetic_comparison"]

DEFAULT_SIZES = (10_000, 100_000)
SHOWN = 5
FORMS = ("MATCH", "GAP")
HARD_CLASSES = ("normal", "near-duplicate", "boilerplate", "prose-free", "specific-vs-general", None)
WORDS = [
    "ticket",
    "fare",
    "zone",
    "refund",
    "pass",
    "delay",
    "ferry",
    "metro",
    "night",
    "bus",
    "senior",
    "student",
    "group",
    "luggage",
    "bicycle",
    "timetable",
    "platform",
    "accessible",
    "lift",
    "transfer",
    "airport",
    "annual",
    "monthly",
    "weekly",
    "day",
    "child",
    "family",
]


def _base_comparison(work: Path) -> Any:
    """The comparison of two stored lexical runs of the bundled sample (other BM25 parameters)."""
    from benchmarks.measure import REPO, SAMPLE_SET, clean_env, goldeneval_command
    from goldeneval.report.runs import compare_named
    from goldeneval.store import ResultStore

    store = work / "results.duckdb"
    command = [goldeneval_command(), "retrieval", "--set", SAMPLE_SET, "--retriever", "goldeneval.lexical"]
    command += ["--store", str(store), "--cache-dir", str(work / "cache"), "--no-progress"]
    env = clean_env(GOLDENEVAL_TABLES=work / "tables")
    for extra in ([], ["--option", "k1=0.3", "--option", "b=0.2"]):
        subprocess.run([*command, *extra], cwd=REPO, env=env, check=True, capture_output=True)
    runs = ResultStore(store).list_runs()
    return compare_named(ResultStore(store), runs[1].id, runs[0].id)


def synthetic_comparison(base: Any, n: int, seed: int = 7) -> Any:
    """``base`` with ``n`` generated questions, their documents and a 90-night trend."""
    from goldeneval.core.stats import PairedComparison
    from goldeneval.report.model import Flip, QuestionRow, Side, TrendPoint
    from goldeneval.report.sources import DocumentInfo

    rng = random.Random(seed)
    corpus = max(1_000, n // 2)
    doc_ids = [f"section-{k % 97:02d}/page-{k:07d}" for k in range(corpus)]

    def sentence(words: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(words))

    def side(relevant: int | None) -> Side:
        documents = tuple(rng.choice(doc_ids) for _ in range(SHOWN))
        outcomes = (relevant == 1, relevant is not None and relevant <= 3)
        unjudged = tuple(r for r in (1, 2, 3) if rng.random() < 0.05)
        return Side("ok", outcomes, documents, relevant, 100, unjudged)

    rows = []
    failing: dict[str, list[str]] = {"top-1 hit rate": [], "top-3 hit rate": []}
    passing: dict[str, list[str]] = {"top-1 hit rate": [], "top-3 hit rate": []}
    for i in range(n):
        qid = f"q-{i:07d}"
        before = side(rng.choice((1, 1, 2, 3, 4, 8, 20, None)))
        now = side(rng.choice((1, 1, 2, 3, 5, 9, 30, None)))
        lost = [r for r, a, b in zip(base.rates, before.outcomes, now.outcomes, strict=True) if a and not b]
        gained = [r for r, a, b in zip(base.rates, before.outcomes, now.outcomes, strict=True) if b and not a]
        for rate in lost:
            failing.setdefault(rate, []).append(qid)
        for rate in gained:
            passing.setdefault(rate, []).append(qid)
        flip = Flip.NEWLY_FAILING if lost else Flip.NEWLY_PASSING if gained else Flip.UNCHANGED
        text = f"{sentence(4).capitalize()} {i}: {sentence(7)}?"
        rows.append(
            QuestionRow(
                qid,
                text,
                rng.choice(FORMS),
                rng.choice(HARD_CLASSES),
                before,
                now,
                flip,
                tuple(lost or gained),
                False,
            )
        )
    documents = {d: DocumentInfo(f"{sentence(4).title()} ({d})", sentence(28)[:159] + "…") for d in doc_ids}
    paired = tuple(
        PairedComparison(rate, n, tuple(failing[rate]), tuple(passing[rate]), 0.5, (-0.01, 0.01)) for rate in base.rates
    )
    last = base.current.created_at
    trend = []
    for night in range(90):
        fingerprint = f"benchmark-v1:sha256:{night // 30}"
        trend.append(
            TrendPoint(
                f"{night:032x}",
                last - timedelta(days=89 - night),
                "complete",
                0.5 + 0.1 * rng.random(),
                0.7 + 0.1 * rng.random(),
                fingerprint,
                night > 0 and night % 30 == 0,
            )
        )
    return dataclasses.replace(base, questions=tuple(rows), documents=documents, paired=paired, trend=tuple(trend))


def _write_times(comparison: Any, work: Path, rounds: int) -> dict[str, Any]:
    from goldeneval.report.html import write_report
    from goldeneval.report.text import comparison_json

    report, peer = work / f"report-{len(comparison.questions)}.html", work / f"peer-{len(comparison.questions)}.json"
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(rounds):  # alternating, so both see the same machine
        started = time.perf_counter()
        write_report(comparison, report)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        peer.write_text(json.dumps(comparison_json(comparison)), encoding="utf-8")
        theirs.append(time.perf_counter() - started)
    return {
        "report": str(report),
        "write_s": statistics.median(ours),
        "write_s_range": [min(ours), max(ours)],
        "report_bytes": report.stat().st_size,
        "peer_write_s": statistics.median(theirs),
        "peer_bytes": peer.stat().st_size,
    }


_TIMINGS = (
    "(() => { const at = n => { const e = performance.getEntriesByName(n); return e.length ? e[0].startTime : null; };"
    " return {fcp: at('first-contentful-paint'), table: at('goldeneval-table-ready'),"
    " charts: at('goldeneval-charts-ready'), load: performance.getEntriesByType('navigation')[0].loadEventEnd}; })()"
)


def _open_times(pages: dict[str, Path], work: Path, rounds: int) -> dict[str, Any]:
    """Per page: median first contentful paint, table and charts ready (ms from navigation start)."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.chromium import chromium_path, headless_chromium

    if chromium_path() is None:
        return {"skipped": "chromium not installed"}
    measured: dict[str, list[dict[str, float | None]]] = {name: [] for name in pages}
    with headless_chromium(work / "chromium") as page:
        for _ in range(rounds):
            for name, path in pages.items():
                page.open("about:blank")
                time.sleep(0.2)
                page.open(path.as_uri())
                deadline = time.monotonic() + 300
                while True:
                    value = page.call("Runtime.evaluate", expression=_TIMINGS, returnByValue=True)["result"]["value"]
                    ready = value["fcp"] is not None and value["load"]
                    if name != "blank":
                        ready = ready and value["table"] is not None and value["charts"] is not None
                    if ready or time.monotonic() > deadline:
                        break
                    time.sleep(0.1)
                measured[name].append(value)

    def med(name: str, key: str) -> float | None:
        values = [float(x) for v in measured[name] if (x := v.get(key)) is not None]
        return statistics.median(values) if values else None

    return {name: {key: med(name, key) for key in ("fcp", "table", "charts", "load")} for name in pages}


def section_report_html(options: dict[str, Any], work: Path) -> dict[str, Any]:
    sizes = options.get("report_sizes") or list(DEFAULT_SIZES)
    rounds = max(int(options.get("report_rounds", 3)), 1)
    base = _base_comparison(work)
    blank = work / "blank.html"
    blank.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body><p>blank</p></body></html>")
    results: dict[str, Any] = {"sizes": {}, "rounds": rounds}
    pages = {"blank": blank}
    for n in sizes:
        comparison = synthetic_comparison(base, n)
        written = _write_times(comparison, work, rounds)
        results["sizes"][str(n)] = written
        pages[str(n)] = Path(written["report"])
        print(f"report_html: {n:,} questions written in {written['write_s']:.2f} s", flush=True)
        del comparison
    opened = _open_times(pages, work, rounds)
    results["open"] = opened
    return results


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f} ms"


def render_report_html(section: dict[str, Any]) -> list[str]:
    rows = [
        "| questions | report written | report size | peer: `comparison_json` + `json.dumps` written | peer size "
        "| time ratio | size ratio |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, size in section["sizes"].items():
        rows.append(
            f"| {int(n):,} | {size['write_s']:.2f} s | {size['report_bytes'] / 2**20:.1f} MiB "
            f"| {size['peer_write_s']:.2f} s | {size['peer_bytes'] / 2**20:.1f} MiB "
            f"| {size['write_s'] / size['peer_write_s']:.2f}x | {size['report_bytes'] / size['peer_bytes']:.2f}x |"
        )
    opened = section.get("open", {})
    lines = [
        f"`write_report` on a synthetic comparison (questions, 5 documents a side over a corpus of half as many "
        f"documents with titles and snippets, a 90-night trend) against the same comparison's JSON document, "
        f"median of {section['rounds']} alternating rounds.",
        "",
        *rows,
        "",
    ]
    if "skipped" in opened:
        lines.append(f"Opening in Chromium: skipped ({opened['skipped']}).")
        return lines
    blank = opened.get("blank", {})
    lines += [
        "Headless Chromium (no network), from navigation start, median of the rounds; the peer is a blank page "
        "opened the same way in the same browser.",
        "",
        "| page | first contentful paint | ratio to the blank page | question table shown | charts drawn | load |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, times in opened.items():
        ratio = "-" if not blank.get("fcp") or times.get("fcp") is None else f"{times['fcp'] / blank['fcp']:.1f}x"
        label = "blank page" if name == "blank" else f"report, {int(name):,} questions"
        lines.append(
            f"| {label} | {_ms(times.get('fcp'))} | {ratio} | {_ms(times.get('table'))} "
            f"| {_ms(times.get('charts'))} | {_ms(times.get('load'))} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.report_html", description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, DEFAULT_SIZES)), help="question counts")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="write the numbers here too")
    args = parser.parse_args(argv)
    options = {"report_sizes": [int(s) for s in args.sizes.split(",") if s.strip()], "report_rounds": args.rounds}
    with tempfile.TemporaryDirectory(prefix="goldeneval-bench-report-") as temporary:
        section = section_report_html(options, Path(temporary))
    if args.json:
        args.json.write_text(json.dumps(section, indent=2), encoding="utf-8")
    print("\n".join(render_report_html(section)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
