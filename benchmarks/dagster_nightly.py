"""The README's main command (``python -m pipelines.main``), with the retrievers it builds counted.

Runs :func:`pipelines.main.main` in this process -- the ``nightly_evaluation`` job once per
(set x retriever) partition of ``$GOLDENEVAL_CONFIG``, then the regression sensor's
``regression_check`` runs and the summary -- after wrapping the one function through which
every evaluation builds its retriever (``goldeneval.retrieval.pipeline.build_retriever``), so that it
can say what each build did: whether a lexical index was loaded from the cache or built, and
how many chunks a model encoded (0 when every embedding came from the cache).

    DAGSTER_HOME=... GOLDENEVAL_CONFIG=suite.yaml .venv/bin/python -m benchmarks.dagster_nightly --counts OUT.json

``OUT.json``: the exit status, seconds to import and to run, and one record per build.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from typing import Any

STARTED = time.perf_counter()


class _NeverBuilt:
    """Stands for a retriever class whose module the run never imported: nothing is one."""


def _loaded_class(module: str, name: str) -> type[Any]:
    """``module.name`` if the run imported ``module``, else :class:`_NeverBuilt`.  A retriever
    of a module never imported cannot exist, and importing one here (bm25s, torch) would add
    to the measured process a cost the README's command did not have."""
    loaded = sys.modules.get(module)
    found = getattr(loaded, name, None) if loaded is not None else None
    return found if isinstance(found, type) else _NeverBuilt


def describe(retriever: object) -> dict[str, Any]:
    """What building ``retriever`` did, as far as the built-in retrievers report it."""
    retrievers = "goldeneval.retrieval.retrievers"
    dense_class = _loaded_class(f"{retrievers}.dense", "DenseRetriever")
    hybrid_class = _loaded_class(f"{retrievers}.hybrid", "HybridRetriever")
    lexical_class = _loaded_class(f"{retrievers}.lexical", "LexicalRetriever")
    reranked_class = _loaded_class(f"{retrievers}.reranked", "RerankedRetriever")
    scorer_class = _loaded_class(f"{retrievers}.reranked", "DenseScorer")

    record: dict[str, Any] = {"type": type(retriever).__name__}
    lexical = retriever if isinstance(retriever, lexical_class) else None
    dense = retriever if isinstance(retriever, dense_class) else None
    if isinstance(retriever, hybrid_class):
        lexical, dense = retriever.lexical, retriever.dense
    if isinstance(retriever, reranked_class):
        first = retriever.first_stage
        lexical = first if isinstance(first, lexical_class) else None
        dense = retriever.scorer.dense if isinstance(retriever.scorer, scorer_class) else None
    if lexical is not None:
        record["lexical_index_loaded_from_cache"] = lexical.index_loaded_from_cache
    if dense is not None:
        record["chunks_encoded"] = dense.counters.encoded
        record["chunks_from_cache"] = dense.counters.cached
    return record


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--counts", type=Path, required=True, help="write the JSON record here")
    args = parser.parse_args(argv)

    import goldeneval.retrieval.pipeline
    import pipelines.main

    built: list[tuple[str, float, object]] = []
    original = goldeneval.retrieval.pipeline.build_retriever  # type: ignore[attr-defined]

    def counting(retriever_id: str, context: Any) -> Any:
        start = time.perf_counter()
        retriever = original(retriever_id, context)
        built.append((retriever_id, time.perf_counter() - start, retriever))
        return retriever

    goldeneval.retrieval.pipeline.build_retriever = counting  # type: ignore[attr-defined]
    imported = time.perf_counter()
    summary = io.StringIO()
    with contextlib.redirect_stdout(summary):
        status = pipelines.main.main([])
    finished = time.perf_counter()
    builds = [{"retriever_id": i, "build_s": seconds, **describe(r)} for i, seconds, r in built]
    record = {
        "exit_status": status,
        "import_s": imported - STARTED,
        "run_s": finished - imported,
        "builds": builds,
        "summary": summary.getvalue(),
    }
    args.counts.write_text(json.dumps(record, indent=2), encoding="utf-8")
    print(summary.getvalue())
    pipelines.main.ending()  # the process ends here, as the command's does (pipelines.main.command)


if __name__ == "__main__":
    main()
