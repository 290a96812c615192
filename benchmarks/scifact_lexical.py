"""SciFact (BEIR, test split, 300 queries): quality and speed of ``goldeneval.lexical``.

Quality: nDCG@10 and Recall@100 of the retriever's top-100 run, computed by pytrec-eval
(trec_eval), next to the published figures in ../shared/datasets/README.md.

Speed, side by side with a peer in the same run: goldeneval's retriever against bare
bm25s driven the way its documentation shows (tokenize all queries, one batched
``retrieve``), so the ratio shows what the per-question contract costs.

    .venv/bin/python -m benchmarks.scifact_lexical [--data ../shared/datasets/scifact]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import bm25s
import pytrec_eval

from goldeneval.core.corpus import load_corpus
from goldeneval.core.text import bm25_tokenize
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"
DEPTH = 100


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args()

    corpus = load_corpus(args.data)
    golden = load_beir_set(args.data, "test", corpus)
    qrels = {q.id: dict.fromkeys(q.expected, 1) for q in golden.questions}

    with tempfile.TemporaryDirectory() as cache:
        start = time.perf_counter()
        retriever = LexicalRetriever(corpus, Path(cache))
        index_s = time.perf_counter() - start
        start = time.perf_counter()
        cached = LexicalRetriever(corpus, Path(cache))
        load_s = time.perf_counter() - start
        if not cached.index_loaded_from_cache:
            raise SystemExit("the second build did not load the cached index")

        start = time.perf_counter()
        run = {}
        for question in golden.questions:
            ranking = retriever.retrieve(question.text, DEPTH)
            run[question.id] = {doc: float(DEPTH - rank) for rank, doc in enumerate(ranking)}
        ours_s = time.perf_counter() - start

    # The peer: bare bm25s, batched, same analyser and parameters.
    texts = [f"{d.title}\n{d.text}" for d in corpus]
    start = time.perf_counter()
    peer = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    peer.index(bm25_tokenize(texts), show_progress=False)
    peer_index_s = time.perf_counter() - start
    start = time.perf_counter()
    query_tokens = bm25_tokenize([q.text for q in golden.questions])
    peer.retrieve(query_tokens, k=DEPTH, show_progress=False, n_threads=1)
    peer_s = time.perf_counter() - start

    evaluator = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10", "recall.100"})
    per_query = evaluator.evaluate(run)
    ndcg = sum(v["ndcg_cut_10"] for v in per_query.values()) / len(per_query)
    recall = sum(v["recall_100"] for v in per_query.values()) / len(per_query)

    print(f"# SciFact test ({len(golden.questions)} queries, {len(corpus)} documents), goldeneval.lexical\n")
    print("| measure | goldeneval.lexical | reference (bm25s, measured for ../shared/datasets) |")
    print("| --- | --- | --- |")
    print(f"| nDCG@10 | {ndcg:.4f} | 0.6863 |")
    print(f"| Recall@100 | {recall:.4f} | 0.9127 |")
    print()
    print("| cost | goldeneval | bare bm25s (peer) | ratio |")
    print("| --- | --- | --- | --- |")
    print(f"| index build | {index_s:.2f} s | {peer_index_s:.2f} s | {index_s / peer_index_s:.2f} |")
    print(f"| index from cache | {load_s:.3f} s | - | - |")
    print(
        f"| {len(golden.questions)} queries, top-{DEPTH} | {ours_s:.3f} s (one call each) | "
        f"{peer_s:.3f} s (one batch) | {ours_s / peer_s:.2f} |"
    )


if __name__ == "__main__":
    main()
