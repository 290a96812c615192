"""The store's schema: its tables, columns and additive migrations, versioned.

Every backend runs the same migrations (:meth:`goldeneval.store.base.Store._migrate`); a
migration only adds, so old rows keep absent provenance absent: never backfilled, never zero."""

from __future__ import annotations

from goldeneval.core.provenance import PROVENANCE_FIELDS
from goldeneval.core.storage import STORE

STORE_ENV = STORE.env
DEFAULT_STORE_PATH = STORE.default
"""Relative to the suite file's folder, else to the working directory (goldeneval.core.storage)."""
LOCK_TIMEOUT_S = 600.0

PROVENANCE_COLUMNS = PROVENANCE_FIELDS
IDENTITY_COLUMNS = ("label_digest", "benchmark_fingerprint", "variant_fingerprint", "privacy")


_MIGRATIONS: tuple[tuple[int, str, tuple[str, ...]], ...] = (
    (
        1,
        "runs, per-slice rates and nullable provenance",
        (
            """
            CREATE TABLE runs (
                id VARCHAR PRIMARY KEY,
                created_at TIMESTAMP NOT NULL,
                set_id VARCHAR NOT NULL,
                model VARCHAR NOT NULL,
                grader VARCHAR NOT NULL,
                pass_rate DOUBLE,
                mean_score DOUBLE,
                question_count INTEGER NOT NULL,
                scored_count INTEGER NOT NULL,
                error_count INTEGER NOT NULL,
                status VARCHAR NOT NULL CHECK (status IN ('complete', 'incomplete')),
                details JSON NOT NULL,
                corpus_revision VARCHAR,
                model_revision VARCHAR,
                chunking_identity VARCHAR,
                pipeline_identity VARCHAR,
                execution_revision VARCHAR
            )
            """,
            "CREATE INDEX runs_series ON runs (set_id, model, grader, created_at)",
            """
            CREATE TABLE run_slices (
                run_id VARCHAR NOT NULL,
                slice_kind VARCHAR NOT NULL,
                slice_value VARCHAR NOT NULL,
                question_count INTEGER NOT NULL,
                scored_count INTEGER NOT NULL,
                pass_rate DOUBLE,
                mean_score DOUBLE,
                PRIMARY KEY (run_id, slice_kind, slice_value)
            )
            """,
        ),
    ),
)
_MIGRATIONS += (
    (
        2,
        "ADR-215: label digest, benchmark and variant fingerprints, privacy mode",
        (
            # Additive only: rows written before keep NULL (unknown), never a backfilled value.
            "ALTER TABLE runs ADD COLUMN label_digest VARCHAR",
            "ALTER TABLE runs ADD COLUMN benchmark_fingerprint VARCHAR",
            "ALTER TABLE runs ADD COLUMN variant_fingerprint VARCHAR",
            "ALTER TABLE runs ADD COLUMN privacy VARCHAR",
        ),
    ),
)
_MIGRATIONS += (
    (
        3,
        "one series for the CLI and Dagster: the retriever id behind the series name, the Dagster run of the tables",
        (
            # NULL for older rows: the retriever id was the series name, the tables run is in details.
            "ALTER TABLE runs ADD COLUMN retriever_id VARCHAR",
            "ALTER TABLE runs ADD COLUMN tables_run_id VARCHAR",
        ),
    ),
)
_MIGRATIONS += (
    (
        4,
        "a regression stays red until a person accepts it: who accepted which run, when and why",
        (
            # A new table: nothing of a stored run changes; a run nobody accepted has no row.
            """
            CREATE TABLE acceptances (
                run_id VARCHAR NOT NULL,
                accepted_at TIMESTAMP NOT NULL,
                accepted_by VARCHAR NOT NULL,
                reason VARCHAR NOT NULL,
                PRIMARY KEY (run_id, accepted_at)
            )
            """,
        ),
    ),
)
_MIGRATIONS += (
    (
        5,
        "issue 43: a content-free manifest per benchmark fingerprint, so a mismatch says what changed",
        (
            # One row per benchmark, written by the first run that measured it; no run refers to
            # it by anything but its fingerprint.  ``manifest`` holds digests (and, under full
            # privacy only, document ids): goldeneval.core.manifest.
            """
            CREATE TABLE benchmark_manifests (
                benchmark_fingerprint VARCHAR PRIMARY KEY,
                created_at TIMESTAMP NOT NULL,
                privacy VARCHAR NOT NULL,
                document_count INTEGER,
                question_count INTEGER NOT NULL,
                manifest JSON NOT NULL
            )
            """,
        ),
    ),
)
SCHEMA_VERSION = _MIGRATIONS[-1][0]
_SCHEMA_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
)
