"""Columnar scoring core: ADR-072's hit rates and trec_eval's rank metrics over whole runs at once.

A million questions must never mean a million Python objects: a run is two CSR pairs of numpy
arrays, and every step reads them whole.  The core is split by idea, each module below the one
that reads it:

* :mod:`~goldeneval.retrieval.columnar.rows` -- :class:`Rankings` and :class:`Judgements`, the
  CSR arrays, checked where they are built;
* :mod:`~goldeneval.retrieval.columnar.encoding` -- :func:`encode`: string ids to codes against
  one vocabulary shared by both sides;
* :mod:`~goldeneval.retrieval.columnar.scan` -- the scan that collapses repeated ids and locates
  judged documents, and :func:`collapse`;
* :mod:`~goldeneval.retrieval.columnar.scores` -- :func:`score`: protocol v1 and the rank
  metrics, with their exact semantics;
* :mod:`~goldeneval.retrieval.columnar.judged` -- judged@k: which ranked documents carry a
  judgment.

Callers import the names from here; the modules are where each is defined and explained.
"""

from __future__ import annotations

from goldeneval.retrieval.columnar.encoding import Encoded, encode
from goldeneval.retrieval.columnar.judged import judged_at, judged_mask, unjudged_ranks
from goldeneval.retrieval.columnar.rows import BoolArray, CodeArray, FloatArray, Int64Array, Judgements, Rankings
from goldeneval.retrieval.columnar.scan import collapse
from goldeneval.retrieval.columnar.scores import PROTOCOL_DEPTH, ColumnarScores, question_metrics, score

__all__ = [
    "PROTOCOL_DEPTH",
    "BoolArray",
    "CodeArray",
    "ColumnarScores",
    "Encoded",
    "FloatArray",
    "Int64Array",
    "Judgements",
    "Rankings",
    "collapse",
    "encode",
    "judged_at",
    "judged_mask",
    "question_metrics",
    "score",
    "unjudged_ranks",
]
