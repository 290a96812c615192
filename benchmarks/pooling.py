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

and, as peers in the same run (each a process of its own, measured the same way):

* ``retrievers only``: the same three retrievers asked exactly as ``goldeneval pool`` asks
  them (:func:`goldeneval.judgments.pool.retriever_rankings`), their rankings held, nothing
  pooled: the retrievers' own CPU and peak RSS;
* ``retrievers and a plain loop``: the same, then a plain Python pooling loop (a dict of pairs,
  one ``json.dumps`` a line) writing the same lines;
* ``bare plain loop`` (:mod:`benchmarks.pooling_bare`): the same rankings made and pooled in
  plain Python, no goldeneval imported at all (the issue's "plain pooling loop").

It prints a Markdown table with the ratios to the sum of the three retrievals, and the ratios
issue 40 asks of ``goldeneval pool``: its CPU over a plain loop's (at most 1.5x; over both
plain peers), and its peak RSS over the retrievers' own (at most 100 MiB more).

```bash
.venv/bin/python -m benchmarks.pooling                    # 10,000 questions, depth 20
.venv/bin/python -m benchmarks.pooling --questions 500    # a quick look
```
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.measure import REPO, clean_env, goldeneval_command, measure
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


def peer(argv: list[str]) -> None:
    """A peer process: ``retrievers`` asks the three retrievers as ``goldeneval pool`` does and
    holds their rankings; ``plain`` then pools them in a plain loop into ``--out``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("kind", choices=["retrievers", "plain"])
    parser.add_argument("--set", required=True, type=Path)
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--cache-dir", required=True, type=Path)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    from goldeneval.judgments.pool import RetrieverSource, retriever_rankings
    from goldeneval.retrieval.golden import load_draft_set

    golden_set = load_draft_set(args.set)
    asked = []
    for shift in SHIFTS:
        source = RetrieverSource(FACTORY, {"shift": str(shift), "depth": str(args.depth)})
        rankings, _ = retriever_rankings(golden_set, source, args.depth, corpus=None, cache_dir=args.cache_dir,
                                         timeout_s=60.0)  # fmt: skip
        asked.append((source.label, rankings))
    if args.kind == "retrievers":
        return
    found: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for label, rankings in asked:
        for question, documents in rankings.items():
            for rank, document in enumerate(documents, start=1):
                found.setdefault((question, document), []).append({"source": label, "rank": rank})
    texts = {question.id: question.text for question in golden_set.questions}
    with args.out.open("w", encoding="utf-8") as out:
        for (question, document), sources in found.items():
            line = {"question": question, "document": document, "grade": None, "assessor": None,
                    "judged_at": None, "sources": sources, "question_text": texts[question]}  # fmt: skip
            out.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")


def _row(name: str, measured: dict[str, Any], reference: float | None) -> str:
    ratio = f"{measured['wall_s'] / reference:.2f}x" if reference else ""
    return (
        f"| {name} | {measured['wall_s']:.2f} | {_cpu(measured):.2f} | {measured['peak_rss_bytes'] / 2**20:.0f} "
        f"| {ratio} |"
    )


def _cpu(measured: dict[str, Any]) -> float:
    return float(measured["user_s"] + measured["system_s"])


def measure_pooling(questions: int, depth: int, timeout_s: float) -> dict[str, Any]:
    """Every command and peer of the module docstring, measured once each; the numbers, and
    the ratios issue 40 asks for."""
    with tempfile.TemporaryDirectory(prefix="goldeneval-pooling-") as tmp:
        work = Path(tmp)
        set_path = write_set(work / "set.jsonl", questions, set_id="pooling")
        env = clean_env(GOLDENEVAL_TABLES=work / "tables")
        options: list[str] = []
        for n, shift in enumerate(SHIFTS, start=1):
            options += ["--retriever", FACTORY, "--option", f"{n}:shift={shift}"]
        options += ["--option", f"depth={depth}"]
        out = work / "judgments.jsonl"
        pool_command = [goldeneval_command(), "pool", "--set", str(set_path), *options, "--depth", str(depth),
                        "--out", str(out), "--cache-dir", str(work / "cache")]  # fmt: skip

        def run(command: list[str], log: str) -> dict[str, Any]:
            measured = measure(command, env=env, cwd=REPO, log=work / log, timeout_s=timeout_s)
            if not measured.ok:
                raise SystemExit(f"{measured.command} failed:\n{(work / log).read_text()[-2000:]}")
            return dict(measured.__dict__)

        first = run(pool_command, "pool.log")
        pairs = sum(1 for _ in out.open("rb"))
        size = out.stat().st_size
        again = run(pool_command, "pool-again.log")
        peer_args = ["--set", str(set_path), "--depth", str(depth), "--cache-dir", str(work / "cache")]
        own = run([sys.executable, "-m", "benchmarks.pooling", "--peer", "retrievers", *peer_args], "peer-1.log")
        plain_out = work / "plain.jsonl"
        plain = run([sys.executable, "-m", "benchmarks.pooling", "--peer", "plain", *peer_args, "--out",
                     str(plain_out)], "peer-2.log")  # fmt: skip
        bare_out = work / "bare.jsonl"
        bare = run([sys.executable, "-m", "benchmarks.pooling_bare", str(set_path), str(bare_out), str(depth)],
                   "peer-3.log")  # fmt: skip
        for written in (plain_out, bare_out):
            plain_pairs = sum(1 for _ in written.open("rb"))
            if plain_pairs != pairs:
                raise SystemExit(f"{written.name}: the plain loop wrote {plain_pairs} pairs, goldeneval pool {pairs}")
        retrievals: list[dict[str, Any]] = []
        factories: list[float] = []
        for n, shift in enumerate(SHIFTS, start=1):
            timing = work / f"factory-{n}.json"
            command = [goldeneval_command(), "retrieval", "--set", str(set_path), "--retriever", FACTORY,
                       "--option", f"shift={shift}", "--option", f"depth={depth}", "--option",
                       f"timing={timing}", "--no-progress", "--store", str(work / f"store-{n}" / "results.duckdb"),
                       "--cache-dir", str(work / "cache")]  # fmt: skip
            retrievals.append(run(command, f"retrieval-{n}.log"))
            factories.append(json.loads(timing.read_text())["factory_s"])
    return {
        "questions": questions,
        "depth": depth,
        "pairs": pairs,
        "file_bytes": size,
        "pool": first,
        "pool_again": again,
        "retrievals": retrievals,
        "factories_s": factories,
        "retrievers_only": own,
        "plain_loop": plain,
        "bare_loop": bare,
        "cpu_over_plain_loop": _cpu(first) / _cpu(plain),
        "cpu_over_plain_loop_again": _cpu(again) / _cpu(plain),
        "cpu_over_bare_loop": _cpu(first) / _cpu(bare),
        "peak_rss_over_retrievers_mib": (first["peak_rss_bytes"] - own["peak_rss_bytes"]) / 2**20,
        "peak_rss_over_retrievers_again_mib": (again["peak_rss_bytes"] - own["peak_rss_bytes"]) / 2**20,
    }


def section_pooling(options: dict[str, Any], _work: Path) -> dict[str, Any]:
    """The ``pooling`` section of ``python -m benchmarks.run``."""
    return measure_pooling(int(options.get("pooling_questions", 10_000)), 20, float(options["timeout_s"]))


def render_pooling(data: dict[str, Any]) -> list[str]:
    retrievals = data["retrievals"]
    reference = sum(m["wall_s"] for m in retrievals)
    cpu_reference = sum(_cpu(m) for m in retrievals)
    factories = sum(data["factories_s"])
    return [
        f"`goldeneval pool` of {data['questions']:,} questions x {len(SHIFTS)} zero-cost retrievers at depth "
        f"{data['depth']} (`benchmarks/pooling.py`): {data['pairs']:,} pairs, a {data['file_bytes'] / 2**20:.1f} MiB "
        "judgments file; each command a whole process, measured from outside; the peers in the same run.",
        "",
        "| command | wall s | CPU s | peak RSS MiB | wall / the 3 retrievals |",
        "|---|---:|---:|---:|---:|",
        _row("`goldeneval pool` (new file)", data["pool"], reference),
        _row("`goldeneval pool` again (nothing new)", data["pool_again"], reference),
        *(_row(f"`goldeneval retrieval`, retriever {n}", m, reference) for n, m in enumerate(retrievals, start=1)),
        f"| the 3 retrievals together | {reference:.2f} | {cpu_reference:.2f} | | 1.00x |",
        f"| the 3 retrievers' factories (their own precomputation) | {factories:.2f} | | | "
        f"{factories / reference:.2f}x |",
        _row("peer: the 3 retrievers only, asked as `pool` asks them", data["retrievers_only"], reference),
        _row("peer: the same and a plain Python pooling loop", data["plain_loop"], reference),
        _row("peer: a bare plain Python pooling loop, no goldeneval", data["bare_loop"], reference),
        "",
        f"`goldeneval pool` CPU / the retrievers and a plain loop's: {data['cpu_over_plain_loop']:.2f}x new file, "
        f"{data['cpu_over_plain_loop_again']:.2f}x again (target at most 1.5x); / the bare loop's: "
        f"{data['cpu_over_bare_loop']:.2f}x. Peak RSS over the retrievers' own: "
        f"{data['peak_rss_over_retrievers_mib']:+.0f} MiB new file, "
        f"{data['peak_rss_over_retrievers_again_mib']:+.0f} MiB again (target at most +100 MiB).",
    ]


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--depth", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=1800.0, help="Seconds per command before it is killed.")
    args = parser.parse_args(argv)
    data = measure_pooling(args.questions, args.depth, args.timeout)
    print("\n".join(render_pooling(data)))
    return data


if __name__ == "__main__":
    if sys.argv[1:2] == ["--peer"]:
        peer(sys.argv[2:])
    else:
        main()
