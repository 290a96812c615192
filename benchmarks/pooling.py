"""Pooling benchmark (issue 23): ``goldeneval pool`` on 10,000 questions x 3 retrievers at depth 20.

Not a test: it reports, never asserts.  The three retrievers are zero-cost
(:func:`factory`: ``benchmarks.pooling:factory``, the in-memory
:class:`benchmarks.zero_retriever.ZeroCostRetriever` with rankings shifted by option ``shift``,
so that the three overlap in part: shifts 0, 7 and 14 give 34 distinct documents a question),
so the time ``goldeneval pool`` takes is the framework's: loading the set, asking, pooling,
writing the judgments file.  Measured as whole processes from outside (wall, CPU and peak RSS
of the process tree, by ``wait4``, with :func:`benchmarks.measure.measure`):

* ``pool``: the first pooling, into a new judgments file;
* ``pool again``: the same command once more (reads the file, appends nothing);
* the retrievers' own time, two ways: each retriever's factory (its precomputation, which
  the factory times itself with option ``timing``), and each retriever run through
  ``goldeneval retrieval`` into a fresh store (a whole evaluation run of the same retriever);

and prints a Markdown table with the ratios to the sum of the three retrievals.

```bash
.venv/bin/python -m benchmarks.pooling                    # 10,000 questions, depth 20
.venv/bin/python -m benchmarks.pooling --questions 500    # a quick look
```
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.measure import REPO, Measured, clean_env, goldeneval_command, measure
from benchmarks.zero_retriever import ZeroCostRetriever, write_set
from goldeneval.retrieval.retrievers.base import RetrieverContext

SHIFTS = (0, 7, 14)
DOCUMENTS = 997
FACTORY = "benchmarks.pooling:factory"


def factory(context: RetrieverContext) -> ZeroCostRetriever:
    """Question ``i``'s ranking: ``depth`` distinct documents from ``(31 i + shift) mod 997`` on."""
    start = time.perf_counter()
    depth = int(context.options.get("depth", "20"))
    shift = int(context.options.get("shift", "0"))
    rankings: dict[str, tuple[str, ...]] = {}
    if context.golden_set is not None:
        for i, question in enumerate(context.golden_set.questions):
            first = i * 31 + shift
            rankings[question.text] = tuple(f"doc{(first + j) % DOCUMENTS}#0" for j in range(depth))
    retriever = ZeroCostRetriever(rankings, tuple(f"doc{j}#0" for j in range(depth)))
    timing = context.options.get("timing")
    if timing:
        Path(timing).write_text(json.dumps({"factory_s": time.perf_counter() - start}), encoding="utf-8")
    return retriever


def _row(name: str, measured: Measured, reference: float | None) -> str:
    ratio = f"{measured.wall_s / reference:.2f}x" if reference else ""
    cpu = measured.user_s + measured.system_s
    return f"| {name} | {measured.wall_s:.2f} | {cpu:.2f} | {measured.peak_rss_bytes / 2**20:.0f} | {ratio} |"


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=1800.0, help="Seconds per command before it is killed.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="goldeneval-pooling-") as tmp:
        work = Path(tmp)
        set_path = write_set(work / "set.jsonl", args.questions, set_id="pooling")
        env = clean_env(GOLDENEVAL_TABLES=work / "tables")
        options: list[str] = []
        for n, shift in enumerate(SHIFTS, start=1):
            options += ["--retriever", FACTORY, "--option", f"{n}:shift={shift}"]
        options += ["--option", f"depth={args.depth}"]
        out = work / "judgments.jsonl"
        pool_command = [goldeneval_command(), "pool", "--set", str(set_path), *options, "--depth", str(args.depth),
                        "--out", str(out), "--cache-dir", str(work / "cache")]  # fmt: skip

        def run(command: list[str], log: str) -> Measured:
            measured = measure(command, env=env, cwd=REPO, log=work / log, timeout_s=args.timeout)
            if not measured.ok:
                raise SystemExit(f"{measured.command} failed:\n{(work / log).read_text()[-2000:]}")
            return measured

        first = run(pool_command, "pool.log")
        pairs = sum(1 for _ in out.open("rb"))
        size = out.stat().st_size
        again = run(pool_command, "pool-again.log")
        retrievals: list[Measured] = []
        factories: list[float] = []
        for n, shift in enumerate(SHIFTS, start=1):
            timing = work / f"factory-{n}.json"
            command = [goldeneval_command(), "retrieval", "--set", str(set_path), "--retriever", FACTORY,
                       "--option", f"shift={shift}", "--option", f"depth={args.depth}", "--option",
                       f"timing={timing}", "--no-progress", "--store", str(work / f"store-{n}" / "results.duckdb"),
                       "--cache-dir", str(work / "cache")]  # fmt: skip
            retrievals.append(run(command, f"retrieval-{n}.log"))
            factories.append(json.loads(timing.read_text())["factory_s"])
    reference = sum(m.wall_s for m in retrievals)
    cpu_reference = sum(m.user_s + m.system_s for m in retrievals)
    lines = [
        f"Pooling {args.questions:,} questions x {len(SHIFTS)} zero-cost retrievers at depth {args.depth}: "
        f"{pairs:,} pairs, a {size / 2**20:.1f} MiB judgments file.",
        "",
        "| command | wall s | CPU s | peak RSS MiB | wall / the 3 retrievals |",
        "|---|---:|---:|---:|---:|",
        _row("`goldeneval pool` (new file)", first, reference),
        _row("`goldeneval pool` again (nothing new)", again, reference),
        *(_row(f"`goldeneval retrieval`, retriever {n}", m, reference) for n, m in enumerate(retrievals, start=1)),
        f"| the 3 retrievals together | {reference:.2f} | {cpu_reference:.2f} | | 1.00x |",
        f"| the 3 retrievers' factories (their own precomputation) | {sum(factories):.2f} | | | "
        f"{sum(factories) / reference:.2f}x |",
    ]
    print("\n".join(lines))
    return {
        "questions": args.questions,
        "depth": args.depth,
        "pairs": pairs,
        "file_bytes": size,
        "pool": first.__dict__,
        "pool_again": again.__dict__,
        "retrievals": [m.__dict__ for m in retrievals],
        "factories_s": factories,
    }


if __name__ == "__main__":
    main()
