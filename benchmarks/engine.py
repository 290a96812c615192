"""Scoring engines side by side: goldeneval's columnar core against a plain-numpy floor,
goldeneval's per-question path, pytrec-eval and ranx (issue 11).

Synthetic runs, built with numpy: N questions x 100 ranked document ids drawn from a corpus
of 10 x N documents (so a few rankings repeat a document, as chunk-grained ones do), and 1-3
relevant documents per question, about half of them retrieved, nearer the top than the
bottom.  Every engine computes hit@1, hit@3, MRR@10 and nDCG@10 per question; each evaluation
is timed three times and the median reported, next to what building the engine's input cost
(reported apart, measured once) and, for ranx, the first call's JIT compilation.

* **numpy floor** -- the four metrics straightforwardly vectorised on the N x 100 matrix: the
  first 10 ids compared with a padded N x 3 matrix of relevant ids, no collapse of repeated
  ids, no depth.  What plain numpy costs at the least; the ratio column divides by it.
* **columnar** -- ``goldeneval.retrieval.columnar.score``: the same metrics plus protocol v1's top-1/top-3,
  repeated ids collapsed to their first occurrence, on CSR arrays (``Rankings``/``Judgements``
  built from the matrix without copying).  "to cutoff" counts distinct documents up to the
  deepest cutoff (``depth_limit=10``, what flagging an unfilled cutoff needs); "full depth"
  counts all of them (``depth_limit=None``), which reads all 100 ids of every ranking.
  ``encode`` times building the arrays from pyarrow string lists with one dictionary encoding.
* **per-question** -- ``goldeneval.retrieval.scoring.score_question`` per question (GoldenQuestion objects
  and Python string lists built apart).
* **pytrec-eval** -- ``RelevanceEvaluator.evaluate`` on dicts (building them apart); MRR@10 is
  ``recip_rank`` on a second run cut at depth 10, as trec_eval defines it.
* **ranx** -- ``ranx.evaluate`` (numba, all cores) on ``Qrels``/``Run`` (building them apart).

A peer is skipped, with the reason printed, when its time (build + 3 evaluations) or memory,
extrapolated linearly from the largest size it ran at, would exceed ``--max-seconds`` (600)
or half of this machine's memory (it is shared; ``--memory-share``).  The columnar core's peak
RSS at each size is measured in a fresh subprocess (``resource.getrusage().ru_maxrss``), inputs
included.

    .venv/bin/python -m benchmarks.engine [--sizes 10000,100000,1000000] [--json PATH]

Nothing here is a test: timings are reported, never asserted.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from goldeneval.retrieval import columnar

DEPTH = 100
"""Ranked ids per question."""
CUTOFF = 10
METRICS = ("hit@1", "hit@3", "mrr@10", "ndcg@10")
REPEATS = 3
MEMORY_SHARE = 0.5
"""Fraction of the machine's memory a peer may be expected to need: the development machine is
shared, so a peer must leave room for the other engineers' processes."""
QUESTION_TOLERANCE = 1e-9
"""Largest |difference| of a peer's per-question value from the columnar core's (rounding only)."""
PEER_CHUNK = 100_000
"""Questions per chunk for a peer whose whole run would need more than that share."""


@dataclass(frozen=True)
class Synthetic:
    """A run as the numpy floor and the columnar core read it."""

    ranked: NDArray[np.int32]
    """N x DEPTH document codes in rank order."""
    relevant_offsets: NDArray[np.int64]
    relevant: NDArray[np.int32]
    """Relevant document codes per question (CSR); codes >= corpus are never retrieved."""

    @property
    def questions(self) -> int:
        return int(self.ranked.shape[0])


def synthetic(n: int, seed: int = 42) -> Synthetic:
    """N rankings of DEPTH codes from a corpus of 10 N and 1-3 relevant codes per question."""
    rng = np.random.default_rng(seed)
    corpus = 10 * n
    ranked = rng.integers(0, corpus, size=(n, DEPTH), dtype=np.int32)
    counts = rng.integers(1, 4, size=n)
    slots = np.zeros((n, 3), dtype=np.int64)
    for j in range(3):
        position = np.minimum((DEPTH * rng.random(n) ** 2).astype(np.int64), DEPTH - 1)
        retrieved = ranked[np.arange(n), position].astype(np.int64)
        slots[:, j] = np.where(rng.random(n) < 0.5, retrieved, corpus + 3 * np.arange(n) + j)
    # The same document twice for one question (a repeated id drawn twice): make it unjudged.
    for j, i in ((1, 0), (2, 0), (2, 1)):
        clash = slots[:, j] == slots[:, i]
        slots[clash, j] = corpus + 3 * np.flatnonzero(clash) + j
    keep = np.arange(3)[None, :] < counts[:, None]
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return Synthetic(ranked, offsets, slots[keep].astype(np.int32))


# --------------------------------------------------------------------------------------------
# Engines.  Each returns {metric: per-question values} (or means) so that they can be compared.
# --------------------------------------------------------------------------------------------


def numpy_floor(run: Synthetic) -> dict[str, NDArray[np.float64]]:
    """hit@1, hit@3, MRR@10, nDCG@10 on the raw matrix, as directly as numpy allows."""
    n = run.questions
    counts = np.diff(run.relevant_offsets)
    widest = int(counts.max())
    padded = np.full((n, widest), -1, dtype=np.int32)
    rows = np.repeat(np.arange(n), counts)
    padded[rows, np.arange(rows.size) - np.repeat(run.relevant_offsets[:-1], counts)] = run.relevant
    top = run.ranked[:, :CUTOFF]
    rel = top == padded[:, :1]
    for j in range(1, widest):
        rel |= top == padded[:, j : j + 1]
    first = rel.argmax(axis=1)
    found = rel[np.arange(n), first]
    discount = 1.0 / np.log2(np.arange(2, CUTOFF + 2))
    ideal = np.cumsum(discount)[np.minimum(counts, CUTOFF) - 1]
    return {
        "hit@1": rel[:, 0].astype(np.float64),
        "hit@3": rel[:, :3].any(axis=1).astype(np.float64),
        "mrr@10": found / (first + 1.0),
        "ndcg@10": (rel.astype(np.float64) @ discount) / ideal,
    }


def columnar_inputs(run: Synthetic) -> tuple[columnar.Rankings, columnar.Judgements]:
    offsets = np.arange(0, run.ranked.size + 1, DEPTH, dtype=np.int64)
    return (
        columnar.Rankings(offsets, run.ranked.reshape(-1)),
        columnar.Judgements.binary(run.relevant_offsets, run.relevant),
    )


def columnar_core(run: Synthetic, depth_limit: int | None) -> dict[str, NDArray[np.float64]]:
    rankings, judgements = columnar_inputs(run)
    scores = columnar.score(rankings, judgements, METRICS, depth_limit=depth_limit)
    return dict(scores.metrics)


def string_lists(run: Synthetic) -> tuple[list[list[str]], list[list[str]]]:
    """The run as Python lists of string ids: what the Python-object peers start from."""
    names = np.char.add("d", run.ranked.astype(str))
    rankings = names.tolist()
    relevant = np.char.add("d", run.relevant.astype(str)).tolist()
    judged = [relevant[a:b] for a, b in zip(run.relevant_offsets[:-1], run.relevant_offsets[1:], strict=True)]
    return rankings, judged


# --------------------------------------------------------------------------------------------
# Measurement
# --------------------------------------------------------------------------------------------


def rss_bytes() -> int:
    """Current resident set size (Linux /proc), to estimate what a peer's inputs hold."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def machine_memory() -> int:
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def timed(call: Callable[[], Any], repeats: int = REPEATS) -> tuple[list[float], Any]:
    times, result = [], None
    for _ in range(repeats):
        gc.collect()
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return times, result


@dataclass
class Measure:
    engine: str
    n: int
    eval_s: list[float] = field(default_factory=list)
    build_s: float | None = None
    jit_s: float | None = None
    memory_bytes: int | None = None
    means: dict[str, float] = field(default_factory=dict)
    skipped: str | None = None
    note: str | None = None
    chunks: int | None = None
    """Measured in this many chunks (build and scoring times summed over them); None: whole run."""
    chunk_questions: int | None = None
    """Questions per chunk (the last may hold fewer); ``memory_bytes`` is then one chunk's."""
    max_question_difference: float | None = None
    """Largest |difference| of a per-question value from the columnar core's, every question."""

    @property
    def median(self) -> float | None:
        return statistics.median(self.eval_s) if self.eval_s else None

    @property
    def total(self) -> float:
        return (self.build_s or 0.0) + (self.jit_s or 0.0) + sum(self.eval_s)


def means_of(values: dict[str, Any]) -> dict[str, float]:
    return {name: float(np.nanmean(np.asarray(v, dtype=np.float64))) for name, v in values.items()}


class Peers:
    """Runs each slow peer at increasing sizes: whole, or in chunks of ``peer_chunk`` questions
    when the whole run would need more than the machine's memory share, or skipped when even
    that is too costly (both extrapolated linearly from the largest size it ran at)."""

    def __init__(self, max_seconds: float, memory_share: float = MEMORY_SHARE, peer_chunk: int = 0) -> None:
        self.max_seconds = max_seconds
        self.memory_share = memory_share
        self.peer_chunk = peer_chunk
        self.last: dict[str, Measure] = {}
        self.ranx_compiled = False

    def plan(self, engine: str, n: int, chunkable: bool) -> tuple[int | None, str | None]:
        """(questions per chunk, or None for the whole run; the reason to skip, or None)."""
        share = self.memory_share * machine_memory()
        previous = self.last.get(engine)
        if previous is None:
            # Nothing to extrapolate from: a run bigger than one chunk is chunked to be safe.
            chunk = self.peer_chunk if chunkable and 0 < self.peer_chunk < n else None
            return chunk, None
        per_question_s = (previous.total - (previous.jit_s or 0.0)) / previous.n
        per_question_memory = (previous.memory_bytes or 0) / (previous.chunk_questions or previous.n)
        seconds = per_question_s * n
        if seconds > self.max_seconds:
            return None, (
                f"skipped: would take about {seconds / 60:.0f} min "
                f"(build + {REPEATS} runs, from {previous.n:,} questions) > {self.max_seconds / 60:.0f} min"
            )
        memory = per_question_memory * n
        if memory <= share:
            return None, None
        chunk = min(self.peer_chunk, n) if chunkable else 0
        if chunk and per_question_memory * chunk <= share:
            return chunk, None
        return None, (
            f"skipped: would need about {memory / 2**30:.0f} GiB (from {previous.n:,} questions), "
            f"over {self.memory_share:.0%} of this shared machine's {machine_memory() / 2**30:.0f} GiB"
        )

    def measure(
        self,
        engine: str,
        n: int,
        body: Callable[[Measure, int | None], None],
        chunkable: bool = False,
        prepare: Callable[[Measure], None] | None = None,
    ) -> Measure:
        """``body(measure, questions per chunk or None)``; ``prepare(measure)`` first, outside the
        memory measured (ranx's JIT compilation, whose memory does not grow with the run)."""
        measure = Measure(engine, n)
        chunk, reason = self.plan(engine, n, chunkable)
        if reason is not None:
            measure.skipped = reason
            return measure
        if prepare is not None:
            prepare(measure)
        previous = self.last.get(engine)
        gc.collect()
        before = rss_bytes()
        body(measure, chunk)
        # The body records the RSS while its inputs and results are alive; keep what it added.
        measure.memory_bytes = max((measure.memory_bytes or rss_bytes()) - before, 1)
        if measure.chunks is not None and previous is not None:
            whole = (previous.memory_bytes or 0) / (previous.chunk_questions or previous.n) * n
            measure.note = _join(
                measure.note,
                f"RSS added {measure.memory_bytes / 2**20:,.0f} MiB at most (one chunk); "
                f"the whole run at once would need about {whole / 2**30:.1f} GiB",
            )
        self.last[engine] = measure
        gc.collect()
        return measure


def _join(*parts: str | None) -> str | None:
    kept = [p for p in parts if p]
    return "; ".join(kept) if kept else None


def per_question(run: Synthetic, measure: Measure, chunk: int | None = None) -> None:
    from goldeneval.retrieval.golden import GoldenQuestion
    from goldeneval.retrieval.metrics import parse_metrics
    from goldeneval.retrieval.scoring import score_question

    start = time.perf_counter()
    rankings, judged = string_lists(run)
    questions = [
        GoldenQuestion(id=f"q{i}", text=f"question {i}", form="MATCH", expected=frozenset(expected))
        for i, expected in enumerate(judged)
    ]
    metrics = parse_metrics(list(METRICS))
    measure.build_s = time.perf_counter() - start

    def identity(doc: str) -> str:
        return doc

    def evaluate() -> list[Any]:
        return [score_question(q, r, 0.0, identity, metrics) for q, r in zip(questions, rankings, strict=True)]

    measure.eval_s, results = timed(evaluate)
    measure.memory_bytes = rss_bytes()
    measure.means = {name: statistics.fmean(r.metrics[name] for r in results if name in r.metrics) for name in METRICS}


# Peers that score each question independently, measured whole or chunk by chunk.


def part(run: Synthetic, start: int, stop: int) -> Synthetic:
    """Questions ``start:stop`` of a run (views, relevant offsets rebased)."""
    offsets = run.relevant_offsets[start : stop + 1]
    return Synthetic(run.ranked[start:stop], offsets - offsets[0], run.relevant[offsets[0] : offsets[-1]])


def qid(i: int) -> str:
    """Question ids that sort as their numbers do (ranx orders its results by id)."""
    return f"q{i:09d}"


def ranked_dicts(rankings: list[list[str]], first: int) -> dict[str, dict[str, float]]:
    """Each ranking as {doc: score}, descending scores, first occurrence of a repeated id kept
    (as the protocol collapses)."""
    scores = [float(DEPTH - i) for i in range(DEPTH)]
    run_dict: dict[str, dict[str, float]] = {}
    for i, ranking in enumerate(rankings, first):
        ranked: dict[str, float] = {}
        for doc, value in zip(ranking, scores, strict=True):
            ranked.setdefault(doc, value)
        run_dict[qid(i)] = ranked
    return run_dict


@dataclass(frozen=True)
class PeerSpec:
    """How a peer turns (part of) a run into its inputs, scores them, and reads per-question values."""

    build: Callable[[Synthetic, int], Any]
    """(questions, id of the first) -> the peer's inputs."""
    evaluate: Callable[[Any], Any]
    values: Callable[[Any, int, int], dict[str, NDArray[np.float64]]]
    """(evaluate's result, id of the first question, count) -> {metric: values in question order}."""


TREC_NAMES = {"hit@1": "success_1", "hit@3": "success_3", "ndcg@10": "ndcg_cut_10"}


def pytrec_build(run: Synthetic, first: int) -> tuple[Any, ...]:
    rankings, judged = string_lists(run)
    qrels = {qid(i): dict.fromkeys(docs, 1) for i, docs in enumerate(judged, first)}
    full = ranked_dicts(rankings, first)
    del rankings
    cut = {q: dict(list(ranked.items())[:CUTOFF]) for q, ranked in full.items()}
    return qrels, full, cut


def pytrec_evaluate(inputs: tuple[Any, ...]) -> tuple[dict[str, dict[str, float]], dict[str, dict[str, float]]]:
    import pytrec_eval

    qrels, full, cut = inputs
    main = pytrec_eval.RelevanceEvaluator(qrels, {"success.1,3", "ndcg_cut.10"}).evaluate(full)
    # MRR@10 is recip_rank on the run cut at depth 10, as trec_eval defines it.
    rr = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
    return main, rr


def pytrec_values(result: Any, first: int, count: int) -> dict[str, NDArray[np.float64]]:
    main, rr = result
    ids = [qid(i) for i in range(first, first + count)]
    values = {name: np.array([main[q][trec] for q in ids]) for name, trec in TREC_NAMES.items()}
    values["mrr@10"] = np.array([rr[q]["recip_rank"] for q in ids])
    return values


RANX_METRICS = ["hit_rate@1", "hit_rate@3", "mrr@10", "ndcg@10"]


def ranx_build(run: Synthetic, first: int) -> tuple[Any, Any]:
    import ranx

    rankings, judged = string_lists(run)
    run_dict = ranked_dicts(rankings, first)
    del rankings
    qrels = ranx.Qrels.from_dict({qid(i): dict.fromkeys(docs, 1) for i, docs in enumerate(judged, first)})
    ranx_run = ranx.Run.from_dict(run_dict)
    return qrels, ranx_run


def ranx_evaluate(inputs: tuple[Any, Any]) -> Any:
    import ranx

    qrels, ranx_run = inputs
    return ranx.evaluate(qrels, ranx_run, RANX_METRICS, return_mean=False, save_results_in_run=False)


def ranx_values(result: Any, first: int, count: int) -> dict[str, NDArray[np.float64]]:
    # Per-question arrays in the order of the (sorted, zero-padded) question ids.
    return {
        ours: np.asarray(result[theirs], dtype=np.float64) for ours, theirs in zip(METRICS, RANX_METRICS, strict=True)
    }


PYTREC = PeerSpec(pytrec_build, pytrec_evaluate, pytrec_values)
RANX = PeerSpec(ranx_build, ranx_evaluate, ranx_values)


def largest_difference(ours: NDArray[np.float64], theirs: NDArray[np.float64]) -> float:
    if ours.shape != theirs.shape:
        raise ValueError(f"per-question values: {theirs.shape} against the columnar core's {ours.shape}")
    both_nan = np.isnan(ours) & np.isnan(theirs)
    difference = np.abs(ours - theirs)
    difference[both_nan] = 0.0
    return float(np.nanmax(difference, initial=0.0)) if not np.isnan(difference).any() else float("inf")


def independent_peer(
    run: Synthetic,
    measure: Measure,
    spec: PeerSpec,
    reference: dict[str, NDArray[np.float64]],
    chunk: int | None,
) -> None:
    """Build, score (REPEATS times) and check a peer on the whole run, or chunk by chunk: each
    chunk's inputs built, scored and discarded before the next, its times added to the totals
    (the k-th evaluation time = the sum of every chunk's k-th), its RSS the largest any chunk
    reached.  Every question's values are compared with the columnar core's (``reference``)."""
    n = run.questions
    size = chunk or n
    bounds = [*range(0, n, size), n]
    build_s, eval_s, peak = 0.0, [0.0] * REPEATS, 0
    sums = dict.fromkeys(METRICS, 0.0)
    worst = 0.0
    for first, stop in itertools.pairwise(bounds):
        gc.collect()
        start = time.perf_counter()
        inputs = spec.build(part(run, first, stop), first)
        build_s += time.perf_counter() - start
        times, result = timed(lambda inputs=inputs: spec.evaluate(inputs))  # type: ignore[misc]
        eval_s = [a + b for a, b in zip(eval_s, times, strict=True)]
        peak = max(peak, rss_bytes())
        del inputs
        values = spec.values(result, first, stop - first)
        del result
        for name in METRICS:
            sums[name] += float(values[name].sum())
            worst = max(worst, largest_difference(reference[name][first:stop], values[name]))
    measure.build_s, measure.eval_s, measure.memory_bytes = build_s, eval_s, peak
    measure.means = {name: total / n for name, total in sums.items()}
    measure.max_question_difference = worst
    if chunk is not None:
        measure.chunks, measure.chunk_questions = len(bounds) - 1, size
        measure.note = _join(
            measure.note,
            f"measured in {measure.chunks} chunks of {size:,} questions, build and scoring times summed over them",
        )


def ranx_jit(measure: Measure, peers: Peers) -> None:
    import ranx

    warnings.filterwarnings("ignore", module="ranx")  # numba type-safety chatter from ranx's kernels
    if peers.ranx_compiled:
        measure.note = "JIT already compiled in this process"
        return
    # First calls compile ranx's numba kernels: building Qrels/Run as well as evaluating.
    start = time.perf_counter()
    tiny_qrels = ranx.Qrels.from_dict({"q": {"a": 1}})
    tiny_run = ranx.Run.from_dict({"q": {"a": 2.0, "b": 1.0}})
    ranx.evaluate(tiny_qrels, tiny_run, RANX_METRICS, save_results_in_run=False)
    measure.jit_s = time.perf_counter() - start
    peers.ranx_compiled = True


def encode_time(run: Synthetic) -> float:
    """Seconds to build the columnar inputs from pyarrow list<string> columns (e.g. Parquet)."""
    import pyarrow as pa

    n = run.questions
    vocabulary = pa.array(np.char.add("d", np.arange(10 * n + 3 * n + 3).astype(str)), pa.large_string())
    ranked = pa.LargeListArray.from_arrays(
        pa.array(np.arange(0, run.ranked.size + 1, DEPTH)), vocabulary.take(pa.array(run.ranked.reshape(-1)))
    )
    judged = pa.LargeListArray.from_arrays(pa.array(run.relevant_offsets), vocabulary.take(pa.array(run.relevant)))
    start = time.perf_counter()
    columnar.encode(ranked, judged)
    return time.perf_counter() - start


def core_peak_rss(n: int, depth_limit: int | None) -> dict[str, int]:
    """Peak RSS of a fresh process that generates the run and scores it once with the core."""
    limit = "none" if depth_limit is None else str(depth_limit)
    output = subprocess.run(
        [sys.executable, "-m", "benchmarks.engine", "--rss-child", str(n), "--child-depth-limit", limit],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result: dict[str, int] = json.loads(output.strip().splitlines()[-1])
    return result


def high_water_mark() -> int:
    """VmHWM: this process's peak RSS, which (unlike ``ru_maxrss``) starts afresh at exec."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    return 0


def rss_child(n: int, depth_limit: int | None) -> None:
    run = synthetic(n)
    inputs = rss_bytes()
    columnar_core(run, depth_limit)
    print(
        json.dumps(
            {
                "inputs_rss": inputs,
                "peak_rss": high_water_mark(),
                "ru_maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
            }
        )
    )


# --------------------------------------------------------------------------------------------
# Report
# --------------------------------------------------------------------------------------------


def seconds(value: float | None) -> str:
    return "-" if value is None else (f"{value:.3f} s" if value < 10 else f"{value:.1f} s")


def cell(measure: Measure, floor: float) -> str:
    if measure.skipped:
        return measure.skipped
    median = measure.median or 0.0
    extras = []
    if measure.build_s is not None:
        extras.append(f"+{seconds(measure.build_s)} build")
    if measure.jit_s is not None:
        extras.append(f"+{seconds(measure.jit_s)} first-call JIT")
    if measure.note:
        extras.append(measure.note)
    extra = f" ({', '.join(extras)})" if extras else ""
    return f"{seconds(median)}{extra}, {median / floor:.2f}x"


def versions() -> dict[str, str]:
    from importlib.metadata import version

    found = {"python": platform.python_version()}
    for package in ("numpy", "pyarrow", "pytrec-eval-terrier", "ranx", "numba"):
        try:
            found[package] = version(package)
        except Exception:
            found[package] = "absent"
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000", help="question counts, comma-separated")
    parser.add_argument("--json", dest="json_path", help="also write the results as JSON to this path")
    parser.add_argument("--max-seconds", type=float, default=600.0, help="skip a peer expected to take longer")
    parser.add_argument("--peers", default="per-question,pytrec-eval,ranx", help="peers to run, comma-separated")
    parser.add_argument(
        "--memory-share",
        type=float,
        default=MEMORY_SHARE,
        help="skip a peer expected to need more than this fraction of the machine's memory",
    )
    parser.add_argument(
        "--peer-chunk",
        type=int,
        default=PEER_CHUNK,
        help="questions per chunk for a peer (pytrec-eval, ranx) whose whole run would exceed the memory share; "
        "0: skip it instead",
    )
    parser.add_argument("--rss-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--child-depth-limit", default="10", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.rss_child:
        rss_child(args.rss_child, None if args.child_depth_limit == "none" else int(args.child_depth_limit))
        return

    sizes = [int(s) for s in args.sizes.split(",")]
    wanted_peers = {p.strip() for p in args.peers.split(",") if p.strip()}
    peers = Peers(args.max_seconds, args.memory_share, args.peer_chunk)
    threads = {name: os.environ.get(name, "unset") for name in ("OMP_NUM_THREADS", "NUMBA_NUM_THREADS")}
    machine = {
        "cpus": os.cpu_count(),
        "memory_gib": round(machine_memory() / 2**30, 1),
        "platform": platform.platform(),
        "load_average": os.getloadavg(),
        "threads": threads,
        "versions": versions(),
    }
    print(f"# Scoring engines, {DEPTH} ranked ids per question, metrics {', '.join(METRICS)}\n")
    print(f"machine: {machine['cpus']} CPUs, {machine['memory_gib']} GiB, {machine['platform']}")
    print(f"versions: {machine['versions']}; threads: {threads} (numpy single-threaded; ranx uses all cores)")
    print(f"load average at start: {machine['load_average']}\n")

    report: dict[str, Any] = {"machine": machine, "metrics": list(METRICS), "depth": DEPTH, "sizes": {}}
    # Peak RSS first, from fresh processes started while this one is still small.
    peaks = {n: core_peak_rss(n, CUTOFF) for n in sizes}
    engines = ["numpy floor", "columnar, to cutoff", "columnar, full depth"]
    engines += [p for p in ("per-question", "pytrec-eval", "ranx") if p in wanted_peers]
    print("| N | " + " | ".join(engines) + " | columnar peak RSS (inputs) |")
    print("| --- " * (len(engines) + 2) + "|", flush=True)
    rows = []
    for n in sizes:
        run = synthetic(n)
        floor_times, floor_values = timed(lambda run=run: numpy_floor(run))  # type: ignore[misc]
        floor = statistics.median(floor_times)
        results = {"numpy floor": Measure("numpy floor", n, floor_times, means=means_of(floor_values))}
        per_question_values: dict[str, NDArray[np.float64]] = {}
        for name, limit in (("columnar, to cutoff", CUTOFF), ("columnar, full depth", None)):
            times, values = timed(lambda run=run, limit=limit: columnar_core(run, limit))  # type: ignore[misc]
            results[name] = Measure(name, n, times, means=means_of(values))
            if limit == CUTOFF:
                per_question_values = values  # what the peers' per-question values are checked against
        results["columnar, to cutoff"].build_s = encode_time(run)
        if "per-question" in wanted_peers:
            results["per-question"] = peers.measure("per-question", n, lambda m, c, run=run: per_question(run, m, c))  # type: ignore[misc]
        if "pytrec-eval" in wanted_peers:
            results["pytrec-eval"] = peers.measure(
                "pytrec-eval",
                n,
                lambda m, c, run=run, ref=per_question_values: independent_peer(run, m, PYTREC, ref, c),  # type: ignore[misc]
                chunkable=True,
            )
        if "ranx" in wanted_peers:
            results["ranx"] = peers.measure(
                "ranx",
                n,
                lambda m, c, run=run, ref=per_question_values: independent_peer(run, m, RANX, ref, c),  # type: ignore[misc]
                chunkable=True,
                prepare=lambda m: ranx_jit(m, peers),
            )
        del per_question_values
        rss = peaks[n]
        del run
        gc.collect()
        reference = results["columnar, to cutoff"].means
        deviation = {
            name: max((abs(m.means[k] - reference[k]) for k in reference if k in m.means), default=None)
            for name, m in results.items()
        }
        report["sizes"][str(n)] = {
            "engines": {name: {**asdict(m), "median_s": m.median} for name, m in results.items()},
            "columnar_peak_rss_bytes": rss["peak_rss"],
            "inputs_rss_bytes": rss["inputs_rss"],
            "max_mean_difference_vs_columnar": deviation,
            "max_question_difference_vs_columnar": {
                name: m.max_question_difference for name, m in results.items() if m.max_question_difference is not None
            },
            "ratio_vs_floor": {name: (m.median / floor if m.median else None) for name, m in results.items()},
        }
        rows.append((n, results, floor, rss, deviation))
        cells = [cell(results[name], floor) for name in engines]
        memory = f"{rss['peak_rss'] / 2**20:,.0f} MiB ({rss['inputs_rss'] / 2**20:,.0f} MiB)"
        print(f"| {n:,} | " + " | ".join(cells) + f" | {memory} |", flush=True)
        if args.json_path:
            with open(args.json_path, "w") as handle:
                json.dump(report, handle, indent=2)
    print("\nratio = median time / numpy floor's median time in the same run (lower is faster).")
    print(
        "columnar peak RSS: VmHWM of a fresh process that generates the run and scores it once (to cutoff);"
        " inputs = its RSS before scoring (interpreter, imports and the N x 100 int32 matrix)."
    )
    print("\nlargest |difference| of a metric's mean from the columnar core's (the floor does not collapse):")
    for n, _, _, _, deviation in rows:
        shown = ", ".join(f"{name}: {'-' if d is None else f'{d:.2e}'}" for name, d in deviation.items())
        print(f"- N = {n:,}: {shown}")
    print("\nlargest |difference| of a per-question value from the columnar core's, every question:")
    mismatched = []
    for n, results, _, _, _ in rows:
        checked = {
            name: m.max_question_difference for name, m in results.items() if m.max_question_difference is not None
        }
        mismatched += [f"{name} at {n:,}" for name, d in checked.items() if not d <= QUESTION_TOLERANCE]
        print(f"- N = {n:,}: " + (", ".join(f"{name}: {d:.2e}" for name, d in checked.items()) or "-"))
    print(f"\nload average at end: {os.getloadavg()}")
    if args.json_path:
        with open(args.json_path, "w") as handle:
            json.dump(report, handle, indent=2)
        print(f"\nJSON written to {args.json_path}")
    if mismatched:
        sys.exit(f"per-question values differ from the columnar core's: {', '.join(mismatched)}")


if __name__ == "__main__":
    main()
