"""The defaults of a retrieval run that its declaration needs (:mod:`goldeneval.retrieval.settings`):
plain constants, so that declaring the run's flags and suite keys imports neither the scoring
(numpy, pyarrow) nor the asking machinery nor the retriever contract.  The modules that use
them import them from here."""

from __future__ import annotations

__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_CHUNK_SEPARATOR", "DEFAULT_HIT_CUTOFFS"]

DEFAULT_HIT_CUTOFFS: tuple[int, ...] = (1, 3, 5, 10)
"""The hit@k cutoffs a run reports unless told otherwise."""
DEFAULT_BATCH_SIZE = 32
"""Questions per ``retrieve_batch`` call when the retriever has one."""
DEFAULT_CHUNK_SEPARATOR = "#"
"""What separates a document id from its chunk number in a retriever's ids (``doc#3``)."""
