"""A run's life in the result store, the same for every kind: recorded and judged
(:mod:`~goldeneval.history.door`), compared with the earlier run its baseline chooses
(:mod:`~goldeneval.history.comparison`), purged when old (:mod:`~goldeneval.history.retention`).

It stands above the store and below the kinds: it reads and writes runs through
:mod:`goldeneval.store` (the :class:`~goldeneval.store.Store`, the spool of runs the store
could not take, the Parquet files a purge deletes) and imports no kind.
"""
