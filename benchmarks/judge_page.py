"""The judging page on a large pool (issue 40): ``goldeneval judge`` on a 500,000-pair file.

A generated corpus (``--documents``, default 2,000 pages of about 300 words, as ``corpus.jsonl``)
and a judgments file of ``--questions`` questions x ``--depth`` pooled documents each (default
25,000 x 20 = 500,000 pool lines, a tenth of the questions judged already), then:

* ``goldeneval judge`` started as a whole process: the seconds until it answers on its port
  (it reads the file once, before serving), and its peak RSS once the page was opened;
* the page opened in headless Chromium (``tests/chromium.py``: DevTools, a fresh profile,
  no network) against its peers in the same browser, alternating, each from navigation start:
  a blank page, and the same page over a 5-pair file served the same way: first contentful
  paint and the moment the first unjudged pair is on screen (the page's
  ``goldeneval-judge-ready`` mark), median of the rounds;
* the size of ``/api/state`` and of one ``/api/question``.

    .venv/bin/python -m benchmarks.judge_page [--questions 25000] [--depth 20] [--rounds 3]

Nothing is asserted: timings are reported beside their peers (issue 40's target: first paint
under a second at 500,000 pairs).
"""

from __future__ import annotations

import argparse
import json
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

from benchmarks.measure import REPO, clean_env, goldeneval_command
from goldeneval.judgments.judgments import json_string, pool_line_json, source_json

WORDS = tuple(
    [
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
        "transfer",
        "airport",
        "harbour",
        "station",
        "card",
        "monthly",
        "annual",
        "weekend",
        "holiday",
        "disruption",
        "strike",
        "accessible",
        "wheelchair",
        "lift",
        "escalator",
        "parking",
        "permit",
        "resident",
        "lost",
        "property",
        "complaint",
        "contact",
        "office",
        "opening",
        "hours",
    ]
)
_TIMINGS = (
    "(() => { const at = n => { const e = performance.getEntriesByName(n); return e.length ? e[0].startTime : null; };"
    " return {fcp: at('first-contentful-paint'), ready: at('goldeneval-judge-ready')}; })()"
)


def write_inputs(folder: Path, questions: int, depth: int, documents: int, seed: int = 40) -> tuple[Path, Path]:
    """A corpus of ``documents`` pages and a judgments file of ``questions`` x ``depth`` pool lines
    (the first tenth of the questions judged by ``bench``)."""
    generator = random.Random(seed)
    corpus = folder / "corpus.jsonl"
    with corpus.open("w", encoding="utf-8") as out:
        for d in range(documents):
            title = " ".join(generator.choices(WORDS, k=4)).capitalize()
            text = " ".join(generator.choices(WORDS, k=300))
            out.write(json.dumps({"_id": f"doc{d}", "title": title, "text": text}) + "\n")
    judgments = folder / "judgments.jsonl"
    sources = [source_json("goldeneval.lexical", rank) for rank in range(1, depth + 1)]
    with judgments.open("w", encoding="utf-8") as out:
        for q in range(questions):
            question = json_string(f"q{q:06d}")
            text = json_string(" ".join(generator.choices(WORDS, k=8)).capitalize() + "?")
            for rank, d in enumerate(generator.sample(range(documents), depth), start=1):
                out.write(pool_line_json(question, json_string(f"doc{d}"), sources[rank - 1], text))
        for q in range(questions // 10):
            for d in range(depth):
                line = {"question": f"q{q:06d}", "document": f"doc{d}", "grade": 0, "assessor": "bench"}
                out.write(json.dumps(line) + "\n")
    return corpus, judgments


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _serve(judgments: Path, corpus: Path, log: Path) -> tuple[subprocess.Popen[bytes], str, float]:
    port = _free_port()
    command = [goldeneval_command(), "judge", str(judgments), "--corpus", str(corpus), "--assessor", "bench",
               "--port", str(port)]  # fmt: skip
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=log.open("wb"), stderr=subprocess.STDOUT, env=clean_env(), cwd=REPO)
    url = f"http://127.0.0.1:{port}/"
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5):
                return process, url, time.perf_counter() - started
        except OSError:
            if process.poll() is not None or time.perf_counter() - started > 600:
                raise SystemExit(f"goldeneval judge did not start: {log.read_text()[-2000:]}") from None
            time.sleep(0.1)


def _size(url: str) -> int:
    with urllib.request.urlopen(url, timeout=60) as response:
        return len(response.read())


def _peak_rss_mib(pid: int) -> float:
    """The largest VmHWM of the process and its children (the supervisor's child serves)."""
    peak = 0
    for candidate in [pid, *_children(pid)]:
        try:
            for line in Path(f"/proc/{candidate}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak = max(peak, int(line.split()[1]))
        except OSError:
            continue
    return peak / 1024


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def measure_page(questions: int, depth: int, documents: int, rounds: int) -> dict[str, Any]:
    sys.path.insert(0, str(REPO))
    from tests.chromium import chromium_path, headless_chromium

    with tempfile.TemporaryDirectory(prefix="goldeneval-judge-page-") as tmp:
        work = Path(tmp)
        (work / "big").mkdir()
        (work / "small").mkdir()
        corpus, big = write_inputs(work / "big", questions, depth, documents)
        _, small = write_inputs(work / "small", 1, 5, documents)
        blank = work / "blank.html"
        blank.write_text("<!DOCTYPE html><html><head><meta charset='utf-8'></head><body><p>blank</p></body></html>")
        result: dict[str, Any] = {
            "questions": questions,
            "depth": depth,
            "pairs": questions * depth,
            "file_bytes": big.stat().st_size,
            "rounds": rounds,
        }
        served = [_serve(big, corpus, work / "big.log"), _serve(small, corpus, work / "small.log")]
        try:
            (big_process, big_url, big_start), (_, small_url, small_start) = served
            result["startup_s"] = {"big": big_start, "small": small_start}
            result["state_bytes"] = _size(big_url + "api/state")
            result["question_bytes"] = _size(big_url + "api/question?index=0")
            if chromium_path() is None:
                result["open"] = {"skipped": "chromium not installed"}
                return result
            pages = {"blank": blank.as_uri(), "small": small_url, "big": big_url}
            measured: dict[str, list[dict[str, float | None]]] = {name: [] for name in pages}
            with headless_chromium(work / "chromium") as page:
                for _ in range(rounds):
                    for name, url in pages.items():
                        page.open("about:blank")
                        time.sleep(0.2)
                        page.open(url)
                        deadline = time.monotonic() + 120
                        while True:
                            value = page.call("Runtime.evaluate", expression=_TIMINGS, returnByValue=True)["result"][
                                "value"
                            ]
                            done = value["fcp"] is not None and (name == "blank" or value["ready"] is not None)
                            if done or time.monotonic() > deadline:
                                break
                            time.sleep(0.05)
                        measured[name].append(value)
            result["peak_rss_mib"] = _peak_rss_mib(big_process.pid)

            def med(name: str, key: str) -> float | None:
                values = [float(x) for v in measured[name] if (x := v.get(key)) is not None]
                return statistics.median(values) if values else None

            result["open"] = {name: {key: med(name, key) for key in ("fcp", "ready")} for name in pages}
        finally:
            for process, _, _ in served:
                process.terminate()
                process.wait(timeout=30)
    return result


def render(result: dict[str, Any]) -> list[str]:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value:,.0f} ms"

    opened = result.get("open", {})
    lines = [
        f"`goldeneval judge` on {result['pairs']:,} pooled pairs ({result['questions']:,} questions x "
        f"{result['depth']}; a {result['file_bytes'] / 2**20:.0f} MiB file): it answers on its port "
        f"{result['startup_s']['big']:.1f} s after it starts (5 pairs: {result['startup_s']['small']:.1f} s); "
        f"`/api/state` {result['state_bytes'] / 2**10:,.0f} KiB, one `/api/question` "
        f"{result['question_bytes'] / 2**10:,.0f} KiB; peak RSS {result.get('peak_rss_mib', 0):,.0f} MiB.",
        "",
    ]
    if "skipped" in opened:
        return [*lines, f"Opening in Chromium: skipped ({opened['skipped']})."]
    lines += [
        f"Headless Chromium, from navigation start, median of {result['rounds']} rounds:",
        "",
        "| page | first contentful paint | first pair on screen |",
        "| --- | --- | --- |",
        f"| blank page | {ms(opened['blank']['fcp'])} | - |",
        f"| judging page, 5 pairs | {ms(opened['small']['fcp'])} | {ms(opened['small']['ready'])} |",
        f"| judging page, {result['pairs']:,} pairs | {ms(opened['big']['fcp'])} | {ms(opened['big']['ready'])} |",
    ]
    return lines


def section_judge_page(options: dict[str, Any], _work: Path) -> dict[str, Any]:
    """The ``judge_page`` section of ``python -m benchmarks.run``."""
    return measure_page(int(options.get("judge_page_questions", 25_000)), 20, 2_000, 3)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=25_000)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--documents", type=int, default=2_000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, help="Write the numbers here too.")
    args = parser.parse_args(argv)
    result = measure_page(args.questions, args.depth, args.documents, max(args.rounds, 1))
    print("\n".join(render(result)))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2), encoding="utf-8")
    return result


if __name__ == "__main__":
    main()
