"""SciFact (BEIR, test split, 300 queries): lexical, dense, hybrid and reranked side by side.

For each built-in retriever, in a process of its own (so that peak memory is its own):

* quality — nDCG@10 and Recall@100 of its top-100 document ranking, computed by pytrec-eval
  (trec_eval); top-1 and top-3 hit rates by goldeneval's scoring protocol v1;
* cost — index/encode time with a cold cache and again with the warm cache (and how many
  chunks the warm build encoded: it must be zero), queries per second over the 300
  top-100 queries, and peak resident memory (``ru_maxrss``).

Lexical and dense index the corpus, so their cold builds are measured; hybrid and reranked
are built on the caches those two left (their cold cost is the sum of the two).  The caches
live in a fresh temporary folder unless ``--cache-dir`` names one; a cache found already
filled there is reported as such instead of a cold time.

    .venv/bin/python -m benchmarks.scifact_retrievers [--data ../shared/datasets/scifact]
        [--cache-dir DIR] [--out benchmarks/scifact_retrievers.md]
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import platform
import resource
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytrec_eval

from goldeneval.core.corpus import load_corpus
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.retrievers import Retriever, RetrieverContext, build_retriever, document_id_mapper
from goldeneval.retrieval.retrievers.dense import DenseRetriever
from goldeneval.retrieval.retrievers.hybrid import HybridRetriever
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever
from goldeneval.retrieval.retrievers.reranked import DenseScorer, RerankedRetriever

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"
DEFAULT_OUT = Path(__file__).resolve().parent / "scifact_retrievers.md"
DEPTH = 100
RETRIEVERS = ("goldeneval.lexical", "goldeneval.dense", "goldeneval.hybrid", "goldeneval.reranked")
INDEXING = ("goldeneval.lexical", "goldeneval.dense")
"""The retrievers that build an index or embeddings of their own; the others reuse them."""


def _encoded_chunks(retriever: object) -> int | None:
    """Chunks the model encoded while building ``retriever`` (None: it has no model)."""
    dense: DenseRetriever | None = None
    if isinstance(retriever, DenseRetriever):
        dense = retriever
    elif isinstance(retriever, HybridRetriever):
        dense = retriever.dense
    elif isinstance(retriever, RerankedRetriever) and isinstance(retriever.scorer, DenseScorer):
        dense = retriever.scorer.dense
    return dense.counters.encoded if dense is not None else None


def _timed(build: Callable[[], Retriever]) -> tuple[Retriever, float]:
    start = time.perf_counter()
    built = build()
    return built, time.perf_counter() - start


def measure(retriever_id: str, data: Path, cache_dir: Path) -> dict[str, Any]:
    """Everything the table reports for one retriever; runs in a child process."""
    corpus = load_corpus(data)
    golden = load_beir_set(data, "test", corpus)
    context = RetrieverContext(corpus=corpus, cache_dir=cache_dir)
    first, first_s = _timed(lambda: build_retriever(retriever_id, context))
    first_encoded = _encoded_chunks(first)
    cold_found_warm = retriever_id in INDEXING and (
        (isinstance(first, LexicalRetriever) and first.index_loaded_from_cache) or first_encoded == 0
    )
    del first
    retriever, warm_s = _timed(lambda: build_retriever(retriever_id, context))
    to_document = document_id_mapper()

    start = time.perf_counter()
    run: dict[str, dict[str, float]] = {}
    for question in golden.questions:
        documents = list(dict.fromkeys(to_document(i) for i in retriever.retrieve(question.text, DEPTH)))
        run[question.id] = {doc: float(DEPTH - rank) for rank, doc in enumerate(documents[:DEPTH])}
    query_s = time.perf_counter() - start

    qrels = {q.id: dict.fromkeys(q.expected, 1) for q in golden.questions}
    per_query = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"}).evaluate(run)
    hits = evaluate_retrieval(golden, retriever, retriever_id, timeout_s=None).aggregates.overall
    return {
        "retriever": retriever_id,
        "documents": len(corpus),
        "queries": len(golden.questions),
        "ndcg10": sum(v["ndcg_cut_10"] for v in per_query.values()) / len(per_query),
        "recall100": sum(v["recall_100"] for v in per_query.values()) / len(per_query),
        "top1": hits.top1_rate,
        "top3": hits.top3_rate,
        "cold_s": None if retriever_id not in INDEXING or cold_found_warm else first_s,
        "cold_encoded": first_encoded,
        "warm_s": warm_s,
        "warm_encoded": _encoded_chunks(retriever),
        "qps": len(golden.questions) / query_s,
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def _cold(result: dict[str, Any]) -> str:
    if result["cold_s"] is not None:
        encoded = result["cold_encoded"]
        return f"{result['cold_s']:.1f} s" + (f" ({encoded} chunks encoded)" if encoded else "")
    if result["retriever"] in INDEXING:
        return "not measured (cache was already warm)"
    return "lexical + dense (reuses their caches)"


def _warm(result: dict[str, Any]) -> str:
    encoded = result["warm_encoded"]
    return f"{result['warm_s']:.2f} s" + ("" if encoded is None else f" ({encoded} chunks encoded)")


def render(results: list[dict[str, Any]]) -> str:
    first = results[0]
    lines = [
        f"# SciFact test: {first['queries']} queries, {first['documents']} documents",
        "",
        f"Measured {datetime.now(UTC):%Y-%m-%d} on {os.cpu_count()} CPU cores ({platform.machine()}), "
        "one process per retriever, with `python -m benchmarks.scifact_retrievers`.",
        "nDCG@10 and Recall@100: pytrec-eval on the top-100 documents; hit rates: goldeneval "
        "scoring protocol v1 (30 raw ids, distinct documents).",
        "",
        "| retriever | nDCG@10 | Recall@100 | top-1 hit | top-3 hit | index/encode, cold cache "
        "| index/encode, warm cache | queries/s | peak memory |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in results:
        lines.append(
            f"| {r['retriever']} | {r['ndcg10']:.4f} | {r['recall100']:.4f} | {r['top1']:.4f} | "
            f"{r['top3']:.4f} | {_cold(r)} | {_warm(r)} | {r['qps']:.1f} | {r['peak_rss_mib']:.0f} MiB |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--cache-dir", type=Path, default=None, help="Default: a fresh temporary folder.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--only", action="append", choices=RETRIEVERS, help="Measure only these (repeatable).")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="goldeneval-bench-") as temporary:
        cache_dir = args.cache_dir or Path(temporary)
        results = []
        for retriever_id in args.only or RETRIEVERS:
            # A fresh process per retriever: its peak memory is its own, not its predecessors'.
            with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
                result = pool.submit(measure, retriever_id, args.data, cache_dir).result()
            if result["warm_encoded"]:
                raise SystemExit(f"{retriever_id}: the warm build encoded {result['warm_encoded']} chunks")
            print(f"{retriever_id}: {result}", flush=True)
            results.append(result)
    table = render(results)
    args.out.write_text(table, encoding="utf-8")
    print(table)


if __name__ == "__main__":
    main()
