"""The peer of ``goldeneval retrieval --retriever goldeneval.lexical`` on a BEIR folder: bm25s plus pytrec-eval.

What a user would write without goldeneval: read ``corpus.jsonl``, ``queries.jsonl`` and
``qrels/<split>.tsv`` with the standard library, tokenise with bm25s' tokenizer and the same
analyser goldeneval.lexical uses (bm25s' default token pattern, its English stop words,
PyStemmer's English Snowball stemmer; title and text joined by a newline), index with
``BM25(k1=1.5, b=0.75, method="lucene")``, retrieve the top ``--depth`` documents of every
query of the split in one batch, write a TREC run file, and score the run against the qrels
with pytrec-eval: the rank metrics ``goldeneval retrieval`` reports by default (hit@1, 3, 5
and 10 as trec_eval's ``success``, MRR@10 as ``recip_rank`` on the run cut at 10, recall@10,
nDCG@10, recall@100), averaged over the judged queries.  Nothing of goldeneval is imported,
so the whole process is the peer's.

With ``--index-dir`` the index is loaded from there when it exists, else built and saved
there (bm25s' own ``save``/``load``): the warm and cold halves of goldeneval's index cache.

    .venv/bin/python -m benchmarks.bm25s_bare DATA --run OUT.trec [--index-dir DIR] [--split test]

Prints one JSON line: queries, documents, whether the index was loaded, the metrics, and the
seconds of each step.
"""

from __future__ import annotations

import argparse
import csv
import json
import time
from pathlib import Path

import bm25s
import pytrec_eval
import Stemmer
from bm25s.stopwords import STOPWORDS_EN

TOKEN_PATTERN = r"(?u)\b\w\w+\b"
MRR_DEPTH = 10
"""trec_eval's ``recip_rank`` has no cutoff: MRR@10 is it on the run cut at 10."""
MEASURES = {"success.1,3,5,10", "recall.10,100", "ndcg_cut.10"}
"""The rest of goldeneval's default report, in trec_eval's names."""


def main(argv: list[str] | None = None) -> None:
    started = time.perf_counter()
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("data", type=Path, help="a BEIR folder: corpus.jsonl, queries.jsonl, qrels/<split>.tsv")
    parser.add_argument("--run", type=Path, required=True, help="write the TREC run file here")
    parser.add_argument("--index-dir", type=Path, help="load the index from here, or build and save it here")
    parser.add_argument("--split", default="test")
    parser.add_argument("--depth", type=int, default=100)
    args = parser.parse_args(argv)

    steps: dict[str, float] = {}
    mark = time.perf_counter()
    ids, texts = [], []
    with (args.data / "corpus.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                doc = json.loads(line)
                ids.append(str(doc["_id"]))
                texts.append(f"{doc.get('title') or ''}\n{doc.get('text') or ''}")
    queries = {}
    with (args.data / "queries.jsonl").open(encoding="utf-8") as handle:
        for line in handle:
            if line.strip():
                query = json.loads(line)
                queries[str(query["_id"])] = query["text"]
    qrels: dict[str, dict[str, int]] = {}
    judged: dict[str, None] = {}  # the queries with a relevant judgement, in file order
    with (args.data / "qrels" / f"{args.split}.tsv").open(encoding="utf-8") as handle:
        for row in csv.DictReader(handle, delimiter="\t"):
            qrels.setdefault(row["query-id"], {})[row["corpus-id"]] = int(row["score"])
            if int(row["score"]) > 0:
                judged.setdefault(row["query-id"])
    wanted = list(judged)
    steps["read_s"] = time.perf_counter() - mark

    stemmer = Stemmer.Stemmer("english")
    stopwords = sorted(STOPWORDS_EN)
    mark = time.perf_counter()
    loaded = args.index_dir is not None and (args.index_dir / "params.index.json").exists()
    if loaded:
        model = bm25s.BM25.load(str(args.index_dir), show_progress=False)
    else:
        tokens = bm25s.tokenize(
            texts, token_pattern=TOKEN_PATTERN, stopwords=stopwords, stemmer=stemmer, show_progress=False
        )
        model = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
        model.index(tokens, show_progress=False)
        if args.index_dir is not None:
            model.save(str(args.index_dir), show_progress=False)
    steps["index_s"] = time.perf_counter() - mark

    mark = time.perf_counter()
    query_tokens = bm25s.tokenize(
        [queries[q] for q in wanted],
        token_pattern=TOKEN_PATTERN,
        stopwords=stopwords,
        stemmer=stemmer,
        return_ids=False,
        show_progress=False,
    )
    documents, scores = model.retrieve(query_tokens, k=min(args.depth, len(ids)), show_progress=False, n_threads=1)
    steps["retrieve_s"] = time.perf_counter() - mark

    mark = time.perf_counter()
    run: dict[str, dict[str, float]] = {}
    with args.run.open("w", encoding="utf-8") as out:
        for query_id, row, row_scores in zip(wanted, documents, scores, strict=True):
            ranked = run[query_id] = {}
            for rank, (doc, score) in enumerate(zip(row, row_scores, strict=True), start=1):
                ranked[ids[int(doc)]] = float(score)
                out.write(f"{query_id} Q0 {ids[int(doc)]} {rank} {float(score):.6f} bm25s\n")
    steps["write_s"] = time.perf_counter() - mark

    mark = time.perf_counter()
    per_query = pytrec_eval.RelevanceEvaluator(qrels, MEASURES).evaluate(run)
    top = {q: dict(sorted(docs.items(), key=lambda item: -item[1])[:MRR_DEPTH]) for q, docs in run.items()}
    for query_id, values in pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(top).items():
        per_query.setdefault(query_id, {})[f"recip_rank_{MRR_DEPTH}"] = values["recip_rank"]
    names = sorted({name for values in per_query.values() for name in values})
    metrics = {name: sum(per_query.get(q, {}).get(name, 0.0) for q in wanted) / len(wanted) for name in names}
    steps["evaluate_s"] = time.perf_counter() - mark
    steps["in_process_s"] = time.perf_counter() - started
    print(
        json.dumps({"queries": len(wanted), "documents": len(ids), "index_loaded": loaded, "metrics": metrics, **steps})
    )


if __name__ == "__main__":
    main()
