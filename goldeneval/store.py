"""The result store (ADR-060 decision 4, ADR-072 decision 4): one DuckDB file of runs.

One row per run in ``runs``, keyed for comparison by (set, model, grader): for retrieval runs
``model`` is the retriever id, ``grader`` is ``retrieval_hit_rate``, ``pass_rate`` the top-1
and ``mean_score`` the top-3 hit rate.  ``details`` holds a JSON snapshot per question;
``run_slices`` holds the rates per form and per hard class.  Provenance columns are nullable:
absent means unknown, never zero.

Every run is written in one transaction, so a killed writer leaves no partial run.  DuckDB
allows one writing process per file; every writing connection is taken under a file lock
beside the database, so concurrent writers wait instead of failing.  Readers open the file
read-only without that lock: they wait only for the commit in progress, never for the
writers queued behind it.  The schema is versioned and
migrations are additive.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any

import duckdb
from filelock import FileLock, Timeout

from goldeneval.details import RetrievalDetails, RunDetails, parse_details
from goldeneval.errors import InputError, StoreError, one_line
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
    """The series name: the CLI's ``--name`` (default the retriever id) or the suite's name."""
    grader: str
    pass_rate: float | None
    mean_score: float | None
    question_count: int
    scored_count: int
    error_count: int
    details: RunDetails
    """Retrieval details, or prompt/answer details (``kind``) for prompt and answer runs."""
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
    """A stored run.  Its details are read on first use, and only when they were loaded
    (queries over many runs leave them out)."""

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
    details_json: str | None
    provenance: Mapping[str, str | None]
    label_digest: str | None = None
    benchmark_fingerprint: str | None = None
    variant_fingerprint: str | None = None
    privacy: str | None = None
    retriever_id: str | None = None
    tables_run_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @cached_property
    def details(self) -> RunDetails:
        if self.details_json is None:
            raise StoreError(f"run {self.id}: its details were not loaded (use get_run)")
        return parse_details(json.loads(self.details_json), f"run {self.id}")

    @property
    def retrieval_details(self) -> RetrievalDetails:
        """The details of a retrieval run; a prompt or answer run is invalid input here."""
        details = self.details
        if not isinstance(details, RetrievalDetails):
            raise InputError(f"run {self.id} is a {details.kind} run (grader {self.grader!r}), not a retrieval run")
        return details


_RUN_COLUMNS = (
    "id, created_at, set_id, model, grader, pass_rate, mean_score, question_count, "
    "scored_count, error_count, status, details, "
    + ", ".join(PROVENANCE_COLUMNS)
    + ", "
    + ", ".join(IDENTITY_COLUMNS)
    + ", retriever_id, tables_run_id"
)
_TABLES_RUN = "coalesce(tables_run_id, json_extract_string(details, '$.tables_run_id'))"
"""Rows stored before schema 3 name their tables run inside details."""


def _select(details: bool) -> str:
    return _RUN_COLUMNS if details else _RUN_COLUMNS.replace("details,", "NULL AS details,", 1)


def _row_to_run(row: Sequence[Any]) -> StoredRun:
    return StoredRun(
        id=row[0],
        created_at=row[1].replace(tzinfo=UTC),
        set_id=row[2],
        model=row[3],
        grader=row[4],
        pass_rate=row[5],
        mean_score=row[6],
        question_count=row[7],
        scored_count=row[8],
        error_count=row[9],
        status=row[10],
        details_json=row[11],
        provenance=dict(zip(PROVENANCE_COLUMNS, row[12:17], strict=True)),
        label_digest=row[17],
        benchmark_fingerprint=row[18],
        variant_fingerprint=row[19],
        privacy=row[20],
        retriever_id=row[21],
        tables_run_id=row[22],
    )


DUCKDB_MAGIC = b"DUCK"
_MAGIC_AT, _HEADER_END = 8, 12
"""DuckDB's file header: the magic bytes ``DUCK`` at offset 8."""
_OFFLINE: dict[str, str | bool | int | float | list[str]] = {
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
}
"""Every connection: the store never loads or downloads a DuckDB extension."""


def _rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Roll back after a failure without hiding it: when the failed statement already ended
    the transaction (a full disk), the rollback's own error would replace the cause."""
    with suppress(duckdb.Error):
        con.rollback()


def _filters(set_id: str | None, model: str | None, retriever: str | None = None) -> tuple[str, list[Any]]:
    """The WHERE clause of a listing: a set, a series name, a series name or retriever id."""
    clauses, params = [], []
    for column, value in (("set_id", set_id), ("model", model)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(value)
    if retriever is not None:
        clauses.append("(model = ? OR retriever_id = ?)")
        params += [retriever, retriever]
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), params


def _like_prefix(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


class ResultStore:
    """The DuckDB result log.  Opening it creates the file and applies pending migrations."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create its folder: {exc.strerror}") from None
        self._check_header()
        self._lock = FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S)
        if self._stored_version() != SCHEMA_VERSION:
            with self._connection() as con:
                self._migrate(con)

    def _stored_version(self) -> int | None:
        """The schema version, read without the writer lock (None: no store there yet), so
        opening an up-to-date store to read it never queues behind writers."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return None
        with self._connection(write=False) as con:
            try:
                row = con.execute("SELECT max(version) FROM schema_version").fetchone()
            except duckdb.CatalogException:
                return None
        return int(row[0]) if row and row[0] is not None else None

    def _check_header(self) -> None:
        """Refuse a file that is not a DuckDB database before DuckDB sees it (given, say, a
        SQLite file, DuckDB would try to fetch an extension from the network to read it)."""
        try:
            with self.path.open("rb") as handle:
                header = handle.read(_HEADER_END)
        except FileNotFoundError:
            return
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot read: {exc.strerror}") from None
        if header and header[_MAGIC_AT:_HEADER_END] != DUCKDB_MAGIC:
            raise StoreError(f"{self.path}: not a DuckDB database (a goldeneval store is one); check --store")

    @contextmanager
    def _connection(self, *, write: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
        """Writers take the file lock, so they queue instead of failing; readers do not take
        it: a read-only connection waits only while a writer has the file open (one commit),
        never for the writers queued behind it."""
        try:
            with self._lock if write else nullcontext():
                con = self._connect(read_only=not write)
                try:
                    yield con
                finally:
                    con.close()
        except Timeout:
            raise StoreError(f"{self.path}: another process held the store for {LOCK_TIMEOUT_S:g} s") from None
        except duckdb.Error as exc:
            raise StoreError(f"{self.path}: {one_line(str(exc))}") from None
        except OSError as exc:  # the lock file cannot be created: a read-only folder, a full disk
            raise StoreError(f"{self.path}: cannot lock the store: {exc.strerror or exc}") from None

    def _connect(self, *, read_only: bool) -> duckdb.DuckDBPyConnection:
        """Connect, retrying while another process holds DuckDB's own lock on the file (a
        writer, for a reader; readers, for the writer holding the file lock)."""
        deadline = time.monotonic() + LOCK_TIMEOUT_S
        pause = 0.002
        while True:
            try:
                return duckdb.connect(str(self.path), read_only=read_only, config=_OFFLINE)
            except duckdb.IOException as exc:
                if "lock" not in str(exc).lower() or time.monotonic() > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

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
                _rollback(con)
                raise

    def schema_version(self) -> int:
        with self._connection(write=False) as con:
            row = con.execute("SELECT max(version) FROM schema_version").fetchone()
            return int(row[0]) if row and row[0] is not None else 0

    # ------------------------------------------------------------------ writes

    def save_run(self, record: RunRecord, run_id: str | None = None) -> StoredRun:
        """Write the run and its slices in one transaction; returns the stored run.

        ``run_id`` lets a caller choose the id up front (the Dagster assets derive it from the
        tables the run is built from).  Saving is idempotent: when a run of the same series
        already has that id, or was built from the same tables (``details.tables_run_id``,
        also for rows stored before schema 3), that run is returned and nothing is written,
        so a re-materialised summary never stores a second copy of one measurement.
        """
        run_id = run_id or uuid.uuid4().hex
        created_at = (record.created_at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
        unknown = set(record.provenance) - set(PROVENANCE_COLUMNS)
        if unknown:
            raise StoreError(f"unknown provenance fields: {', '.join(sorted(unknown))}")
        provenance = [record.provenance.get(column) for column in PROVENANCE_COLUMNS]
        details = record.details
        with self._connection() as con:
            con.begin()
            try:
                existing = con.execute("SELECT set_id, model, grader FROM runs WHERE id = ?", [run_id]).fetchone()
                if existing is None and details.tables_run_id is not None:
                    same_tables = con.execute(
                        "SELECT id FROM runs WHERE set_id = ? AND model = ? AND grader = ? AND (tables_run_id = ? "
                        "OR (tables_run_id IS NULL AND json_extract_string(details, '$.tables_run_id') = ?)) "
                        "ORDER BY created_at, id LIMIT 1",
                        [record.set_id, record.model, record.grader, details.tables_run_id, details.tables_run_id],
                    ).fetchone()
                    if same_tables is not None:
                        run_id = same_tables[0]
                        existing = (record.set_id, record.model, record.grader)
                if existing is None:
                    con.execute(
                        f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * 23)})",
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
                            json.dumps(details.to_json()),
                            *provenance,
                            record.label_digest,
                            record.benchmark_fingerprint,
                            record.variant_fingerprint,
                            record.privacy,
                            details.retriever_id,
                            details.tables_run_id,
                        ],
                    )
                    self._insert_slices(con, run_id, record.slices)
                con.commit()
            except BaseException:
                _rollback(con)
                raise
        if existing is not None and tuple(existing) != (record.set_id, record.model, record.grader):
            raise StoreError(
                f"{self.path}: run id {run_id} is already taken by a run of set {existing[0]!r}, "
                f"series {existing[1]!r}, grader {existing[2]!r}"
            )
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

    def _one(self, where: str, params: Sequence[Any], order: str = "") -> StoredRun | None:
        """The first run matching ``where``, with its details.  The id is chosen first, over
        the narrow columns only, so the (large) details column is read for one row."""
        with self._connection(write=False) as con:
            found = con.execute(f"SELECT id FROM runs WHERE {where} {order} LIMIT 1", list(params)).fetchone()
            if found is None:
                return None
            row = con.execute(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", [found[0]]).fetchone()
        return _row_to_run(row) if row else None

    def get_run(self, run_id: str) -> StoredRun | None:
        """The run with exactly this id, with its details."""
        return self._one("id = ?", [run_id])

    def resolve_run_id(self, text: str, *, excluding: str | None = None) -> str:
        """The id of the one run whose id is ``text`` or starts with it.

        ``goldeneval runs`` prints shortened ids; every command that takes a run id accepts any
        unique prefix.  ``excluding`` leaves one run out (a pinned baseline is never the run
        being judged).  Raises :class:`InputError` when none or several runs match.
        """
        if not text:
            raise InputError("run id: empty; list runs with: goldeneval runs")
        with self._connection(write=False) as con:
            rows = con.execute(
                "SELECT id FROM runs WHERE (id = ? OR id LIKE ? ESCAPE '\\') AND id IS DISTINCT FROM ? "
                "ORDER BY id LIMIT 6",
                [text, _like_prefix(text), excluding],
            ).fetchall()
        ids = [row[0] for row in rows]
        if text in ids:
            return text
        if not ids:
            raise InputError(f"run {text!r} not found in {self.path} (list runs with: goldeneval runs)")
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise InputError(f"run id prefix {text!r} is ambiguous in {self.path}: it matches {shown}; give more of it")
        return str(ids[0])

    def find_run(self, text: str, *, excluding: str | None = None) -> StoredRun:
        """The run a full id or a unique id prefix names (see :meth:`resolve_run_id`)."""
        run_id = self.resolve_run_id(text, excluding=excluding)
        stored = self.get_run(run_id)
        if stored is None:  # deleted between the two queries
            raise InputError(f"run {text!r} not found in {self.path} (list runs with: goldeneval runs)")
        return stored

    _EARLIER = (
        "set_id = ? AND model = ? AND grader = ? AND status = 'complete' AND id <> ? "
        "AND (created_at < ? OR (created_at = ? AND id < ?))"
    )

    def _earlier_params(self, current: StoredRun) -> list[Any]:
        at = current.created_at.astimezone(UTC).replace(tzinfo=None)
        return [current.set_id, current.model, current.grader, current.id, at, at, current.id]

    def previous_complete_run(self, current: StoredRun) -> StoredRun | None:
        """The latest complete run of ``current``'s series stored before it (one indexed query)."""
        return self._one(self._EARLIER, self._earlier_params(current), "ORDER BY created_at DESC, id DESC")

    def best_comparable_run(self, current: StoredRun) -> StoredRun | None:
        """The best earlier complete run of the series on the same known benchmark: highest
        top-1 rate, then top-3, then the latest."""
        if current.benchmark_fingerprint is None:
            return None
        return self._one(
            self._EARLIER + " AND benchmark_fingerprint = ?",
            [*self._earlier_params(current), current.benchmark_fingerprint],
            "ORDER BY pass_rate DESC NULLS LAST, mean_score DESC NULLS LAST, created_at DESC, id DESC",
        )

    def list_runs(
        self,
        *,
        set_id: str | None = None,
        model: str | None = None,
        retriever: str | None = None,
        limit: int | None = None,
        with_details: bool = False,
    ) -> list[StoredRun]:
        """Runs newest first, optionally filtered (``model``: the series name; ``retriever``: the
        series name or the retriever id behind it); details only when asked for."""
        where, params = _filters(set_id, model, retriever)
        sql = f"SELECT {_select(with_details)} FROM runs {where} ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self._connection(write=False) as con:
            rows = con.execute(sql, params).fetchall()
        return [_row_to_run(row) for row in rows]

    def to_dataframe(self, *, set_id: str | None = None, model: str | None = None) -> Any:
        """Every run's row without its details, as a pandas DataFrame (oldest first): for notebooks."""
        columns = _RUN_COLUMNS.replace("details, ", "")
        where, params = _filters(set_id, model)
        with self._connection(write=False) as con:
            return con.execute(f"SELECT {columns} FROM runs {where} ORDER BY created_at, id", params).df()

    def purge(self, older_than: datetime, *, set_id: str | None = None, dry_run: bool = False) -> list[StoredRun]:
        """Delete whole runs (the row and its slices) created before ``older_than``.

        Retention never edits a run: a run is kept whole or deleted whole, in one
        transaction.  Returns the runs deleted (or, with ``dry_run``, that would be), without
        their details; ``tables_run_id`` is filled in for older rows too.
        """
        columns = _select(False).replace("tables_run_id", f"{_TABLES_RUN} AS tables_run_id")
        sql = f"SELECT {columns} FROM runs WHERE created_at < ?"
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
                _rollback(con)
                raise
        return doomed

    def tables_runs_in_use(self, tables_run_ids: Sequence[str], *, excluding: Sequence[str] = ()) -> set[str]:
        """Which of ``tables_run_ids`` a stored run (other than ``excluding``) was built from."""
        if not tables_run_ids:
            return set()
        with self._connection(write=False) as con:
            rows = con.execute(
                f"SELECT DISTINCT {_TABLES_RUN} AS t FROM runs "
                f"WHERE list_contains(?, {_TABLES_RUN}) AND NOT list_contains(?, id)",
                [list(tables_run_ids), list(excluding)],
            ).fetchall()
        return {row[0] for row in rows}

    def slices(self, run_id: str) -> list[SliceRates]:
        with self._connection(write=False) as con:
            rows = con.execute(
                "SELECT slice_kind, slice_value, question_count, scored_count, pass_rate, "
                "mean_score FROM run_slices WHERE run_id = ? ORDER BY slice_kind, slice_value",
                [run_id],
            ).fetchall()
        return [SliceRates(*row) for row in rows]
