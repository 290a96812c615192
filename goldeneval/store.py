"""The result store (ADR-060 decision 4, ADR-072 decision 4): one DuckDB file of runs.

One row per run in ``runs``, keyed for comparison by (set, model, grader): for retrieval runs
``model`` is the retriever id, ``grader`` is ``retrieval_hit_rate``, ``pass_rate`` the top-1
and ``mean_score`` the top-3 hit rate.  ``details`` holds a JSON snapshot per question;
``run_slices`` holds the rates per form and per hard class.  Provenance columns are nullable:
absent means unknown, never zero.

Every run is written in one transaction, so a killed writer leaves no partial run.  DuckDB
allows one writing process per file; every connection is taken under a file lock beside
the database, so concurrent writers wait instead of failing.  The schema is versioned and
migrations are additive.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
from filelock import FileLock, Timeout

from goldeneval.errors import StoreError
from goldeneval.provenance import PROVENANCE_FIELDS

__all__ = [
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "STORE_ENV",
    "ResultStore",
    "RunRecord",
    "SliceRates",
    "StoredRun",
    "resolve_store_path",
]

STORE_ENV = "GOLDENEVAL_STORE"
DEFAULT_STORE_PATH = Path(".goldeneval") / "results.duckdb"
"""Relative to the working directory: the project folder when run from it."""
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
SCHEMA_VERSION = _MIGRATIONS[-1][0]


def resolve_store_path(option: str | Path | None = None) -> Path:
    """``--store`` if given, else ``$GOLDENEVAL_STORE``, else ``.goldeneval/results.duckdb``."""
    if option:
        return Path(option)
    env = os.environ.get(STORE_ENV)
    return Path(env) if env else DEFAULT_STORE_PATH


@dataclass(frozen=True)
class SliceRates:
    """The rates of one slice (a form or a hard class) of a run."""

    kind: str
    value: str
    questions: int
    scored: int
    pass_rate: float | None
    mean_score: float | None


@dataclass(frozen=True)
class RunRecord:
    """A run as the store sees it, before it has an id."""

    set_id: str
    model: str
    grader: str
    pass_rate: float | None
    mean_score: float | None
    question_count: int
    scored_count: int
    error_count: int
    details: Mapping[str, Any]
    slices: Sequence[SliceRates] = ()
    provenance: Mapping[str, str | None] = field(default_factory=dict)
    created_at: datetime | None = None
    label_digest: str | None = None
    benchmark_fingerprint: str | None = None
    variant_fingerprint: str | None = None
    privacy: str | None = None

    @property
    def status(self) -> str:
        return "complete" if self.error_count == 0 else "incomplete"


@dataclass(frozen=True)
class StoredRun:
    id: str
    created_at: datetime
    set_id: str
    model: str
    grader: str
    pass_rate: float | None
    mean_score: float | None
    question_count: int
    scored_count: int
    error_count: int
    status: str
    details: Mapping[str, Any]
    provenance: Mapping[str, str | None]
    label_digest: str | None = None
    benchmark_fingerprint: str | None = None
    variant_fingerprint: str | None = None
    privacy: str | None = None

    @property
    def complete(self) -> bool:
        return self.status == "complete"


_RUN_COLUMNS = (
    "id, created_at, set_id, model, grader, pass_rate, mean_score, question_count, "
    "scored_count, error_count, status, details, " + ", ".join(PROVENANCE_COLUMNS) + ", " + ", ".join(IDENTITY_COLUMNS)
)


def _row_to_run(row: Sequence[Any]) -> StoredRun:
    base = row[:12]
    return StoredRun(
        id=base[0],
        created_at=base[1].replace(tzinfo=UTC),
        set_id=base[2],
        model=base[3],
        grader=base[4],
        pass_rate=base[5],
        mean_score=base[6],
        question_count=base[7],
        scored_count=base[8],
        error_count=base[9],
        status=base[10],
        details=json.loads(base[11]),
        provenance=dict(zip(PROVENANCE_COLUMNS, row[12:17], strict=True)),
        label_digest=row[17],
        benchmark_fingerprint=row[18],
        variant_fingerprint=row[19],
        privacy=row[20],
    )


class ResultStore:
    """The DuckDB result log.  Opening it creates the file and applies pending migrations."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create its folder: {exc.strerror}") from None
        self._lock = FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S)
        with self._connection() as con:
            self._migrate(con)

    @contextmanager
    def _connection(self) -> Iterator[duckdb.DuckDBPyConnection]:
        try:
            with self._lock:
                con = duckdb.connect(str(self.path))
                try:
                    yield con
                finally:
                    con.close()
        except Timeout:
            raise StoreError(f"{self.path}: another process held the store for {LOCK_TIMEOUT_S:g} s") from None
        except duckdb.Error as exc:
            raise StoreError(f"{self.path}: {exc}") from None

    # ------------------------------------------------------------------ schema

    def _migrate(self, con: duckdb.DuckDBPyConnection) -> None:
        con.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
        )
        row = con.execute("SELECT max(version) FROM schema_version").fetchone()
        current = (row[0] if row else None) or 0
        if current > SCHEMA_VERSION:
            raise StoreError(
                f"{self.path}: schema version {current} is newer than this goldeneval "
                f"understands ({SCHEMA_VERSION}); upgrade goldeneval"
            )
        for version, description, statements in _MIGRATIONS:
            if version <= current:
                continue
            con.begin()
            try:
                for statement in statements:
                    con.execute(statement)
                con.execute(
                    "INSERT INTO schema_version VALUES (?, ?, ?)",
                    [version, description, datetime.now(UTC).replace(tzinfo=None)],
                )
                con.commit()
            except BaseException:
                con.rollback()
                raise

    def schema_version(self) -> int:
        with self._connection() as con:
            row = con.execute("SELECT max(version) FROM schema_version").fetchone()
            return int(row[0]) if row and row[0] is not None else 0

    # ------------------------------------------------------------------ writes

    def save_run(self, record: RunRecord, run_id: str | None = None) -> StoredRun:
        """Write the run and its slices in one transaction; returns the stored run.

        ``run_id`` lets a caller that writes files for the run first (the Dagster assets lay
        Parquet out by run id) choose the id up front; by default a new UUID is taken.
        """
        run_id = run_id or uuid.uuid4().hex
        created_at = (record.created_at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
        unknown = set(record.provenance) - set(PROVENANCE_COLUMNS)
        if unknown:
            raise StoreError(f"unknown provenance fields: {', '.join(sorted(unknown))}")
        provenance = [record.provenance.get(column) for column in PROVENANCE_COLUMNS]
        with self._connection() as con:
            con.begin()
            try:
                con.execute(
                    f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * 21)})",
                    [
                        run_id,
                        created_at,
                        record.set_id,
                        record.model,
                        record.grader,
                        record.pass_rate,
                        record.mean_score,
                        record.question_count,
                        record.scored_count,
                        record.error_count,
                        record.status,
                        json.dumps(record.details),
                        *provenance,
                        record.label_digest,
                        record.benchmark_fingerprint,
                        record.variant_fingerprint,
                        record.privacy,
                    ],
                )
                self._insert_slices(con, run_id, record.slices)
                con.commit()
            except BaseException:
                con.rollback()
                raise
        stored = self.get_run(run_id)
        if stored is None:
            raise StoreError(f"{self.path}: run {run_id} vanished right after its commit")
        return stored

    def _insert_slices(self, con: duckdb.DuckDBPyConnection, run_id: str, slices: Sequence[SliceRates]) -> None:
        if not slices:
            return
        con.executemany(
            "INSERT INTO run_slices VALUES (?, ?, ?, ?, ?, ?, ?)",
            [[run_id, s.kind, s.value, s.questions, s.scored, s.pass_rate, s.mean_score] for s in slices],
        )

    # ------------------------------------------------------------------ reads

    def get_run(self, run_id: str) -> StoredRun | None:
        with self._connection() as con:
            row = con.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", [run_id]).fetchone()
        return _row_to_run(row) if row else None

    def list_runs(
        self, *, set_id: str | None = None, model: str | None = None, limit: int | None = None
    ) -> list[StoredRun]:
        """Runs newest first, optionally filtered."""
        clauses, params = [], []
        for column, value in (("set_id", set_id), ("model", model)):
            if value is not None:
                clauses.append(f"{column} = ?")
                params.append(value)
        where = f"WHERE {' AND '.join(clauses)}" if clauses else ""
        sql = f"SELECT {_RUN_COLUMNS} FROM runs {where} ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self._connection() as con:
            rows = con.execute(sql, params).fetchall()
        return [_row_to_run(row) for row in rows]

    def purge(self, older_than: datetime, *, set_id: str | None = None, dry_run: bool = False) -> list[StoredRun]:
        """Delete whole runs (the row and its slices) created before ``older_than``.

        Retention never edits a run: a run is kept whole or deleted whole, in one
        transaction.  Returns the runs deleted (or, with ``dry_run``, that would be).
        """
        sql = f"SELECT {_RUN_COLUMNS} FROM runs WHERE created_at < ?"
        params: list[Any] = [older_than.astimezone(UTC).replace(tzinfo=None)]
        if set_id is not None:
            sql += " AND set_id = ?"
            params.append(set_id)
        with self._connection() as con:
            doomed = [_row_to_run(row) for row in con.execute(sql + " ORDER BY created_at", params).fetchall()]
            if dry_run or not doomed:
                return doomed
            ids = [[run.id] for run in doomed]
            con.begin()
            try:
                con.executemany("DELETE FROM run_slices WHERE run_id = ?", ids)
                con.executemany("DELETE FROM runs WHERE id = ?", ids)
                con.commit()
            except BaseException:
                con.rollback()
                raise
        return doomed

    def slices(self, run_id: str) -> list[SliceRates]:
        with self._connection() as con:
            rows = con.execute(
                "SELECT slice_kind, slice_value, question_count, scored_count, pass_rate, "
                "mean_score FROM run_slices WHERE run_id = ? ORDER BY slice_kind, slice_value",
                [run_id],
            ).fetchall()
        return [SliceRates(*row) for row in rows]
