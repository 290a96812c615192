"""The result store (ADR-060 decision 4, ADR-072 decision 4): one log of runs, on DuckDB or PostgreSQL.

One row per run in ``runs``, keyed for comparison by (set, model, grader): for retrieval runs
``model`` is the retriever id, ``grader`` is ``retrieval_hit_rate``, ``pass_rate`` the top-1
and ``mean_score`` the top-3 hit rate.  ``details`` holds a JSON snapshot per question;
``run_slices`` holds the rates per form and per hard class.  Provenance columns are nullable:
absent means unknown, never zero.

There is one store interface, :class:`Store`, and two implementations: :class:`ResultStore`,
the embedded default, one DuckDB file; and ``goldeneval.store.postgres.PostgresResultStore``,
a PostgreSQL database many machines can share, selected by a ``postgresql://`` URL
(:func:`open_store`).  Every query, the schema, its additive migrations and the rules of
saving (idempotency, validation) are written once, here, in :class:`Store`; a backend only
supplies connections, transactions and its SQL dialect (:class:`Dialect`).

Every run is written in one transaction, so a killed writer leaves no partial run.  DuckDB
allows one writing process per file; every writing connection is taken under a file lock
beside the database, so concurrent writers wait instead of failing.  Readers open the file
read-only without that lock: they wait only for the commit in progress, never for the
writers queued behind it.  On PostgreSQL the database's own transactions do both jobs (see
``goldeneval.store.postgres``).  The schema is versioned and migrations are additive.

This package's names are imported on first use (:data:`_LAZY`): parsing a location costs
no database driver.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

from goldeneval.store.location import StoreLocation, redact_url, resolve_store, resolve_store_path, url_secrets

if TYPE_CHECKING:
    from goldeneval.core.records import RunRecord, SliceRates, StoredRun
    from goldeneval.store.base import Store
    from goldeneval.store.copy import CopyReport, copy_runs
    from goldeneval.store.duckdb_store import ResultStore
    from goldeneval.store.schema import DEFAULT_STORE_PATH, SCHEMA_VERSION, STORE_ENV
    from goldeneval.store.sql import Acceptance, Dialect

_LAZY = {
    "RunRecord": "goldeneval.core.records",
    "SliceRates": "goldeneval.core.records",
    "StoredRun": "goldeneval.core.records",
    "Acceptance": "goldeneval.store.sql",
    "Dialect": "goldeneval.store.sql",
    "Store": "goldeneval.store.base",
    "CopyReport": "goldeneval.store.copy",
    "copy_runs": "goldeneval.store.copy",
    "ResultStore": "goldeneval.store.duckdb_store",
    "DEFAULT_STORE_PATH": "goldeneval.store.schema",
    "SCHEMA_VERSION": "goldeneval.store.schema",
    "STORE_ENV": "goldeneval.store.schema",
}
"""Where each name is defined: imported on first use, so that what only parses a store
location (the CLI's ``--store`` option, the suite file) loads neither DuckDB nor numpy."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "Acceptance",
    "CopyReport",
    "Dialect",
    "ResultStore",
    "RunRecord",
    "SliceRates",
    "Store",
    "StoreLocation",
    "StoredRun",
    "copy_runs",
    "open_store",
    "redact_url",
    "resolve_store",
    "resolve_store_path",
    "store_exists",
    "url_secrets",
]


def open_store(location: StoreLocation | str | os.PathLike[str]) -> Store:
    """Open (creating or upgrading its schema) the store at ``location``: a DuckDB
    :class:`ResultStore` for a path, a ``PostgresResultStore`` for a ``postgresql://`` URL."""
    where = StoreLocation.parse(location)
    if where.path is not None:
        from goldeneval.store.duckdb_store import ResultStore

        return ResultStore(where.path)
    from goldeneval.store.postgres import PostgresResultStore

    return PostgresResultStore(where)


def store_exists(location: StoreLocation | str | os.PathLike[str]) -> bool:
    """Whether a store is there already: the DuckDB file exists, or the PostgreSQL database
    holds the store's schema.  Reading commands ask first, so they create nothing."""
    where = StoreLocation.parse(location)
    if where.path is not None:
        return where.path.exists()
    from goldeneval.store.postgres import postgres_store_exists

    return postgres_store_exists(where)
