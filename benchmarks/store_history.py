"""Does ``goldeneval retrieval`` slow down as the result store fills up?

A 1,000-question set, a zero-cost in-memory retriever (so the cost measured is goldeneval's
own: scoring, the store write, the baseline query, the verdict), and stores that already
hold 10, 1,000 and 5,000 earlier complete runs of the same series with full per-question
details.  Each configuration runs the command five times in this process and reports the
median, next to the empty-store time (the peer) as a ratio.  For contrast it also times
what choosing a baseline cost before it was an indexed query: reading the series' whole
history with its details into Python.

    .venv/bin/python -m benchmarks.store_history [--history 10,1000,5000] [--questions 1000]

Nothing here is a test; the numbers go into benchmarks/README.md by hand.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import duckdb
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.store import ResultStore

PLUGIN = textwrap.dedent(
    '''
    import json
    from pathlib import Path

    from goldeneval.core.provenance import Provenance


    class Lookup:
        """Answers from a dict: no retrieval cost at all."""

        def __init__(self, rankings):
            self.rankings = rankings

        def retrieve(self, question, limit):
            return self.rankings[question][:limit]

        def provenance(self):
            return Provenance(corpus_revision="bench-corpus-1", model_revision="not_applicable",
                              chunking_identity="not_applicable", pipeline_identity="lookup")


    def build(context):
        return Lookup(json.loads(Path(context.options["rankings"]).read_text()))
    '''
)


def _workspace(root: Path, questions: int) -> list[str]:
    (root / "bench_lookup.py").write_text(PLUGIN)
    rows, rankings = [], {}
    for i in range(questions):
        text = f"question number {i}"
        rows.append({"id": f"q{i:05d}", "text": text, "form": "MATCH" if i % 2 else "GAP", "expected": [f"d{i}"]})
        rankings[text] = [f"d{i}#0", f"d{(i + 1) % questions}#0", f"d{i}#1"] + [f"d{j}" for j in range(7)]
    header = json.dumps({"set": {"id": "bench"}})
    (root / "set.jsonl").write_text("\n".join([header, *map(json.dumps, rows)]) + "\n")
    (root / "rankings.json").write_text(json.dumps(rankings))
    return [
        "retrieval",
        "--set",
        str(root / "set.jsonl"),
        "--retriever",
        "bench_lookup:build",
        "--option",
        f"rankings={root / 'rankings.json'}",
        "--no-progress",
        "--format",
        "json",
    ]


def _run(args: list[str], store: Path) -> float:
    start = time.perf_counter()
    result = CliRunner().invoke(main, [*args, "--store", str(store)])
    elapsed = time.perf_counter() - start
    if result.exit_code != 0:
        raise SystemExit(f"goldeneval retrieval failed ({result.exit_code}): {result.output[-2000:]}")
    return elapsed


def _fill(store: Path, history: int) -> None:
    """Copy the one stored run ``history - 1`` times, each a minute earlier, in one statement.
    Every copy's details differ (its latencies get a prefix), so no copy compresses to nothing."""
    if history <= 1:
        return
    con = duckdb.connect(str(store))
    columns = [row[0] for row in con.execute("DESCRIBE runs").fetchall()]
    select = ", ".join(
        "md5(id || '-' || range::VARCHAR)"
        if c == "id"
        else "created_at - to_minutes(range + 1)"
        if c == "created_at"
        else """replace(details, '"latency_ms": ', '"latency_ms": ' || (range + 1)::VARCHAR)"""
        if c == "details"
        else c
        for c in columns
    )
    con.execute(f"INSERT INTO runs SELECT {select} FROM runs, range({history - 1})")
    con.close()


def measure(history_sizes: list[int], questions: int, repeats: int = 5) -> list[dict[str, float]]:
    results = []
    with tempfile.TemporaryDirectory(prefix="goldeneval-bench-") as tmp:
        root = Path(tmp)
        sys.path.insert(0, str(root))
        args = _workspace(root, questions)
        for history in history_sizes:
            store = root / f"history-{history}.duckdb"
            if history:
                _run(args, store)
                _fill(store, history)
            times = [_run(args, store) for _ in range(repeats)]
            started = time.perf_counter()
            ResultStore(store).list_runs(set_id="bench", with_details=True)
            full_read = time.perf_counter() - started
            results.append(
                {
                    "history": history,
                    "median_s": statistics.median(times),
                    "full_history_read_s": full_read,
                    "store_mb": store.stat().st_size / 1e6,
                }
            )
    return results


def main_(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--history", default="10,1000,5000", help="earlier runs in the store (comma-separated)")
    parser.add_argument("--questions", type=int, default=1000)
    options = parser.parse_args(argv)
    sizes = [int(part) for part in options.history.split(",")]
    rows = measure(sizes, options.questions)
    empty = rows[0]["median_s"]
    print(f"goldeneval retrieval, {options.questions} questions, zero-cost retriever (median of 5)")
    print("| earlier runs | store size | goldeneval retrieval | ratio to the first row | reading the history |")
    print("| --- | --- | --- | --- | --- |")
    for row in rows:
        print(
            f"| {int(row['history']):,} | {row['store_mb']:.0f} MB | {row['median_s']:.2f} s | "
            f"{row['median_s'] / empty:.2f} | {row['full_history_read_s']:.2f} s |"
        )


if __name__ == "__main__":
    main_()
