"""The result store (ADR-060 decision 4, ADR-072 decision 4): one log of runs, on DuckDB or PostgreSQL.

One row per run in ``runs``, keyed for comparison by (set, model, grader): for retrieval runs
``model`` is the retriever id, ``grader`` is ``retrieval_hit_rate``, ``pass_rate`` the top-1
and ``mean_score`` the top-3 hit rate.  ``details`` holds a JSON snapshot per question;
``run_slices`` holds the rates per form and per hard class.  Provenance columns are nullable:
absent means unknown, never zero.

There is one store interface, :class:`Store`, and two implementations: :class:`ResultStore`,
the embedded default, one DuckDB file; and ``goldeneval.store_postgres.PostgresResultStore``,
a PostgreSQL database many machines can share, selected by a ``postgresql://`` URL
(:func:`open_store`).  Every query, the schema, its additive migrations and the rules of
saving (idempotency, validation) are written once, here, in :class:`Store`; a backend only
supplies connections, transactions and its SQL dialect (:class:`Dialect`).

Every run is written in one transaction, so a killed writer leaves no partial run.  DuckDB
allows one writing process per file; every writing connection is taken under a file lock
beside the database, so concurrent writers wait instead of failing.  Readers open the file
read-only without that lock: they wait only for the commit in progress, never for the
writers queued behind it.  On PostgreSQL the database's own transactions do both jobs (see
``goldeneval.store_postgres``).  The schema is versioned and migrations are additive.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext, suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol
from urllib.parse import unquote

import duckdb
import numpy as np
from filelock import FileLock, Timeout

from goldeneval.details import RetrievalDetails, RunDetails, parse_details_json, read_verdicts
from goldeneval.errors import InputError, StoreError, one_line
from goldeneval.provenance import PROVENANCE_FIELDS

__all__ = [
    "DEFAULT_STORE_PATH",
    "SCHEMA_VERSION",
    "STORE_ENV",
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
    "url_secrets",
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
_SCHEMA_TABLE = (
    "CREATE TABLE IF NOT EXISTS schema_version ("
    "version INTEGER PRIMARY KEY, description VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)"
)

# --------------------------------------------------------------------------- where a store lives

_URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
POSTGRES_SCHEMES = ("postgresql", "postgres")
_SECRET_PARAMETERS = frozenset({"password", "passfile", "sslpassword"})


def _secret_spans(url: str) -> list[tuple[int, int]]:
    """Where ``url`` holds secrets: the password of its user part and the values of its
    ``password``-like query parameters (keys percent-decoded, as libpq reads them)."""
    match = _URL_SCHEME.match(url)
    if match is None:
        return []
    start, rest = match.end(), url[match.end() :]
    # The user part ends at the last '@' before the path; an unencoded '/' in a password ends
    # the authority early (libpq cannot use that URL, but its message still must not show it).
    at = rest.partition("/")[0].rfind("@")
    if at < 0:
        at = rest.partition("?")[0].rfind("@")
    spans = []
    colon = rest.find(":", 0, at) if at >= 0 else -1
    if colon >= 0:
        spans.append((start + colon + 1, start + at))
    query = rest.find("?", max(at, 0))
    if query >= 0:
        position = start + query + 1
        for part in url[position:].split("&"):
            key, equals, value = part.partition("=")
            if equals and value and unquote(key).strip().lower() in _SECRET_PARAMETERS:
                spans.append((position + len(key) + 1, position + len(part)))
            position += len(part) + 1
    return spans


def url_secrets(url: str) -> list[str]:
    """The secrets written in ``url`` as they appear there and percent-decoded, longest first:
    what a driver's message must not quote."""
    found = {url[begin:end] for begin, end in _secret_spans(url)}
    found |= {unquote(secret) for secret in found}
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def redact_url(url: str) -> str:
    """``url`` with any password (in the user part or the query) replaced by ``***``: the form
    a store URL is shown in, in messages, reports and metadata."""
    shown, end = [], 0
    for begin, stop in _secret_spans(url):
        shown += [url[end:begin], "***"]
        end = stop
    return "".join(shown) + url[end:]


@dataclass(frozen=True)
class StoreLocation:
    """Where a result store lives: a DuckDB file (``path``) or a PostgreSQL database (``url``).

    ``str()`` gives the form to show: the path, or the URL with its password redacted.  The
    URL itself (password included) is only ever handed to the database driver.
    """

    path: Path | None = None
    url: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (self.path is None) == (self.url is None):
            raise ValueError("a store location is either a path or a URL")

    @classmethod
    def parse(cls, value: StoreLocation | str | os.PathLike[str]) -> StoreLocation:
        """A ``postgresql://`` (or ``postgres://``) URL, else a DuckDB file path.  Any other
        ``scheme://`` is refused rather than taken for a file name."""
        if isinstance(value, StoreLocation):
            return value
        if not isinstance(value, str):
            return cls(path=Path(value))
        match = _URL_SCHEME.match(value)
        if match is None:
            return cls(path=Path(value))
        if match.group(1).lower() not in POSTGRES_SCHEMES:
            raise InputError(
                f"store {redact_url(value)}: unsupported URL scheme {match.group(1)!r}; "
                "give a DuckDB file path or a postgresql:// URL"
            )
        return cls(url=match.group(1).lower() + value[len(match.group(1)) :])  # libpq knows only lower case

    @property
    def is_postgres(self) -> bool:
        return self.url is not None

    def __str__(self) -> str:
        return str(self.path) if self.path is not None else redact_url(self.url or "")

    def exists(self) -> bool:
        """Whether a store is there already: the DuckDB file exists, or the PostgreSQL database
        holds the store's schema.  Reading commands ask first, so they create nothing."""
        if self.path is not None:
            return self.path.exists()
        from goldeneval.store_postgres import postgres_store_exists

        return postgres_store_exists(self)


def resolve_store(option: StoreLocation | str | os.PathLike[str] | None = None) -> StoreLocation:
    """``--store`` if given, else ``$GOLDENEVAL_STORE``, else ``.goldeneval/results.duckdb``:
    a DuckDB path or a ``postgresql://`` URL."""
    if option:
        return StoreLocation.parse(option)
    env = os.environ.get(STORE_ENV)
    return StoreLocation.parse(env) if env else StoreLocation(path=DEFAULT_STORE_PATH)


def resolve_store_path(option: str | Path | None = None) -> Path:
    """The DuckDB file :func:`resolve_store` names; a PostgreSQL URL is invalid input here
    (callers that accept both use :func:`resolve_store` and :func:`open_store`)."""
    location = resolve_store(option)
    if location.path is None:
        raise InputError(f"store {location}: a PostgreSQL URL where a DuckDB file path is needed")
    return location.path


def open_store(location: StoreLocation | str | os.PathLike[str]) -> Store:
    """Open (creating or upgrading its schema) the store at ``location``: a DuckDB
    :class:`ResultStore` for a path, a ``PostgresResultStore`` for a ``postgresql://`` URL."""
    where = StoreLocation.parse(location)
    if where.path is not None:
        return ResultStore(where.path)
    from goldeneval.store_postgres import PostgresResultStore

    return PostgresResultStore(where)


# --------------------------------------------------------------------------- records


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
        return parse_details_json(self.details_json, f"run {self.id}")

    @cached_property
    def _stored_verdicts(self) -> dict[str, tuple[list[str], np.ndarray]] | None:
        if "details" in self.__dict__ or self.details_json is None:  # parsed already, or not loaded
            return None
        return read_verdicts(self.details_json, f"run {self.id}")

    def verdicts(self, column: Literal["top1_hit", "top3_hit"]) -> tuple[list[str], np.ndarray]:
        """The scored questions' ids and their top-1 or top-3 verdicts, what a comparison pairs:
        read from the stored columns alone unless the whole details were already read."""
        light = self._stored_verdicts
        if light is not None:
            return light[column]
        return self.retrieval_details.verdicts(column)

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
_RUN_COLUMN_COUNT = len(_RUN_COLUMNS.split(", "))
_SLICE_COLUMNS = "slice_kind, slice_value, question_count, scored_count, pass_rate, mean_score"


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


# --------------------------------------------------------------------------- the one interface


class Dialect:
    """What differs in SQL between the backends; every query is written once, in :class:`Store`,
    with ``?`` placeholders and these few hooks.  This one is DuckDB's."""

    name: ClassVar[str] = "duckdb"

    def sql(self, text: str) -> str:
        """The driver's form of a query written with ``?`` placeholders."""
        return text

    def ddl(self, statement: str) -> str:
        """A schema statement of :data:`_MIGRATIONS` in this dialect."""
        return statement

    def json_text(self, column: str, key: str) -> str:
        """The text value of a top-level key of a JSON column (NULL when absent)."""
        return f"json_extract_string({column}, '$.{key}')"

    def in_list(self, expression: str) -> str:
        """``expression`` is one of the values of a list parameter (``?``)."""
        return f"list_contains(?, {expression})"


DUCKDB = Dialect()


class _Cursor(Protocol):
    """What the shared queries need of a connection: a DuckDB connection or a psycopg cursor."""

    def execute(self, query: Any, parameters: Any = ..., /) -> Any: ...

    def executemany(self, query: Any, parameters: Any = ..., /) -> Any: ...


class Sql:
    """One open connection of a store, spoken to in the shared SQL (``?`` placeholders)."""

    def __init__(self, cursor: Any, dialect: Dialect) -> None:
        self.cursor: _Cursor = cursor
        self.dialect = dialect

    def run(self, text: str, params: Sequence[Any] = ()) -> None:
        self.cursor.execute(self.dialect.sql(text), list(params))

    def one(self, text: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        row = self.cursor.execute(self.dialect.sql(text), list(params)).fetchone()
        return tuple(row) if row is not None else None

    def all(self, text: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return [tuple(row) for row in self.cursor.execute(self.dialect.sql(text), list(params)).fetchall()]

    def many(self, text: str, rows: Sequence[Sequence[Any]]) -> None:
        if rows:
            self.cursor.executemany(self.dialect.sql(text), [list(row) for row in rows])


class Store(ABC):
    """The result store interface and everything both backends share: the schema and its
    migrations, saving (one transaction, idempotent by run id and by tables run), and every
    query.  A backend supplies :meth:`_read` (a connection that sees committed runs),
    :meth:`_write` (one transaction), :meth:`_serialise` and its :class:`Dialect`."""

    location: StoreLocation
    dialect: ClassVar[Dialect] = DUCKDB

    @property
    def name(self) -> str:
        """The store as messages name it: the path, or the URL without its password."""
        return str(self.location)

    # ------------------------------------------------------------------ what a backend supplies

    @abstractmethod
    def _read(self) -> AbstractContextManager[Sql]:
        """A connection for reading committed runs."""

    @abstractmethod
    def _write(self) -> AbstractContextManager[Sql]:
        """One transaction: committed when the block ends, rolled back whole when it raises."""

    @abstractmethod
    def _serialise(self, sql: Sql, keys: Sequence[str]) -> None:
        """Inside a write transaction: wait until no other transaction holds any of ``keys``,
        and hold them until this one ends."""

    @abstractmethod
    def _frame(self, sql: Sql, text: str, params: Sequence[Any]) -> Any:
        """The result of a query as a pandas DataFrame."""

    # ------------------------------------------------------------------ schema

    def _migrate(self) -> None:
        """Apply pending migrations, each in its own transaction; concurrent openers of a new
        or old store take turns (``_serialise``) and each migration is applied once."""
        with self._write() as sql:
            self._serialise(sql, ["schema"])
            sql.run(self.dialect.ddl(_SCHEMA_TABLE))
        while True:
            with self._write() as sql:
                self._serialise(sql, ["schema"])
                row = sql.one("SELECT max(version) FROM schema_version")
                current = (row[0] if row else None) or 0
                if current > SCHEMA_VERSION:
                    raise StoreError(
                        f"{self.name}: schema version {current} is newer than this goldeneval "
                        f"understands ({SCHEMA_VERSION}); upgrade goldeneval"
                    )
                pending = [migration for migration in _MIGRATIONS if migration[0] > current]
                if not pending:
                    return
                version, description, statements = pending[0]
                for statement in statements:
                    sql.run(self.dialect.ddl(statement))
                sql.run(
                    "INSERT INTO schema_version VALUES (?, ?, ?)",
                    [version, description, datetime.now(UTC).replace(tzinfo=None)],
                )

    def schema_version(self) -> int:
        with self._read() as sql:
            row = sql.one("SELECT max(version) FROM schema_version")
        return int(row[0]) if row and row[0] is not None else 0

    def _tables_run(self) -> str:
        """Rows stored before schema 3 name their tables run inside details."""
        return f"coalesce(tables_run_id, {self.dialect.json_text('details', 'tables_run_id')})"

    # ------------------------------------------------------------------ writes

    def save_run(self, record: RunRecord, run_id: str | None = None) -> StoredRun:
        """Write the run and its slices in one transaction; returns the stored run.

        ``run_id`` lets a caller choose the id up front (the Dagster assets derive it from the
        tables the run is built from).  Saving is idempotent: when a run of the same series
        already has that id, or was built from the same tables (``details.tables_run_id``,
        also for rows stored before schema 3), that run is returned and nothing is written,
        so a re-materialised summary never stores a second copy of one measurement.  Two
        writers saving the same id or the same tables at once take turns (``_serialise``):
        the second finds the first's run.
        """
        run_id = run_id or uuid.uuid4().hex
        created_at = (record.created_at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
        unknown = set(record.provenance) - set(PROVENANCE_COLUMNS)
        if unknown:
            raise StoreError(f"unknown provenance fields: {', '.join(sorted(unknown))}")
        provenance = [record.provenance.get(column) for column in PROVENANCE_COLUMNS]
        details = record.details
        series = (record.set_id, record.model, record.grader)
        keys = [f"run\0{run_id}"]
        if details.tables_run_id is not None:
            keys.append("tables\0" + "\0".join((*series, details.tables_run_id)))
        with self._write() as sql:
            self._serialise(sql, keys)
            existing = sql.one("SELECT set_id, model, grader FROM runs WHERE id = ?", [run_id])
            if existing is None and details.tables_run_id is not None:
                same_tables = sql.one(
                    "SELECT id FROM runs WHERE set_id = ? AND model = ? AND grader = ? AND (tables_run_id = ? "
                    f"OR (tables_run_id IS NULL AND {self.dialect.json_text('details', 'tables_run_id')} = ?)) "
                    "ORDER BY created_at, id LIMIT 1",
                    [*series, details.tables_run_id, details.tables_run_id],
                )
                if same_tables is not None:
                    run_id = same_tables[0]
                    existing = series
            text = ""
            if existing is None:
                text = details.to_json_text()  # one string, serialised without a dict per value
                sql.run(
                    f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * _RUN_COLUMN_COUNT)})",
                    [
                        run_id,
                        created_at,
                        *series,
                        record.pass_rate,
                        record.mean_score,
                        record.question_count,
                        record.scored_count,
                        record.error_count,
                        record.status,
                        text,
                        *provenance,
                        record.label_digest,
                        record.benchmark_fingerprint,
                        record.variant_fingerprint,
                        record.privacy,
                        details.retriever_id,
                        details.tables_run_id,
                    ],
                )
                self._insert_slices(sql, run_id, record.slices)
            elif tuple(existing) != series:
                raise StoreError(
                    f"{self.name}: run id {run_id} is already taken by a run of set {existing[0]!r}, "
                    f"series {existing[1]!r}, grader {existing[2]!r}"
                )
            # Read back on the same connection; a run just written keeps the details it was
            # given, so its (possibly 100 MB) JSON is neither fetched again nor parsed again.
            written = existing is None
            row = sql.one(f"SELECT {_select(details=not written)} FROM runs WHERE id = ?", [run_id])
        if row is None:
            raise StoreError(f"{self.name}: run {run_id} vanished right after its commit")
        if not written:
            return _row_to_run(row)
        stored = dataclasses.replace(_row_to_run(row), details_json=text)  # the one string written
        stored.__dict__["details"] = details  # fills the cached_property StoredRun.details
        return stored

    def _insert_slices(self, con: Sql, run_id: str, slices: Sequence[SliceRates]) -> None:
        con.many(
            f"INSERT INTO run_slices (run_id, {_SLICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [[run_id, s.kind, s.value, s.questions, s.scored, s.pass_rate, s.mean_score] for s in slices],
        )

    # ------------------------------------------------------------------ reads

    def _one(self, where: str, params: Sequence[Any], order: str = "") -> StoredRun | None:
        """The first run matching ``where``, with its details.  The id is chosen first, over
        the narrow columns only, so the (large) details column is read for one row."""
        with self._read() as sql:
            found = sql.one(f"SELECT id FROM runs WHERE {where} {order} LIMIT 1", params)
            if found is None:
                return None
            row = sql.one(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", [found[0]])
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
        with self._read() as sql:
            rows = sql.all(
                "SELECT id FROM runs WHERE (id = ? OR id LIKE ? ESCAPE '\\') AND id IS DISTINCT FROM ? "
                "ORDER BY id LIMIT 6",
                [text, _like_prefix(text), excluding],
            )
        ids = [row[0] for row in rows]
        if text in ids:
            return text
        if not ids:
            raise InputError(f"run {text!r} not found in {self.name} (list runs with: goldeneval runs)")
        if len(ids) > 1:
            shown = ", ".join(ids[:5]) + (", ..." if len(ids) > 5 else "")
            raise InputError(f"run id prefix {text!r} is ambiguous in {self.name}: it matches {shown}; give more of it")
        return str(ids[0])

    def find_run(self, text: str, *, excluding: str | None = None) -> StoredRun:
        """The run a full id or a unique id prefix names (see :meth:`resolve_run_id`)."""
        run_id = self.resolve_run_id(text, excluding=excluding)
        stored = self.get_run(run_id)
        if stored is None:  # deleted between the two queries
            raise InputError(f"run {text!r} not found in {self.name} (list runs with: goldeneval runs)")
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
        text = f"SELECT {_select(with_details)} FROM runs {where} ORDER BY created_at DESC, id DESC"
        if limit is not None:
            text += f" LIMIT {int(limit)}"
        with self._read() as sql:
            rows = sql.all(text, params)
        return [_row_to_run(row) for row in rows]

    def to_dataframe(self, *, set_id: str | None = None, model: str | None = None) -> Any:
        """Every run's row without its details, as a pandas DataFrame (oldest first): for notebooks."""
        columns = _RUN_COLUMNS.replace("details, ", "")
        where, params = _filters(set_id, model)
        with self._read() as sql:
            return self._frame(sql, f"SELECT {columns} FROM runs {where} ORDER BY created_at, id", params)

    def purge(self, older_than: datetime, *, set_id: str | None = None, dry_run: bool = False) -> list[StoredRun]:
        """Delete whole runs (the row and its slices) created before ``older_than``.

        Retention never edits a run: a run is kept whole or deleted whole, in one
        transaction.  Returns the runs deleted (or, with ``dry_run``, that would be), without
        their details; ``tables_run_id`` is filled in for older rows too.
        """
        columns = _select(False).replace("tables_run_id", f"{self._tables_run()} AS tables_run_id")
        text = f"SELECT {columns} FROM runs WHERE created_at < ?"
        params: list[Any] = [older_than.astimezone(UTC).replace(tzinfo=None)]
        if set_id is not None:
            text += " AND set_id = ?"
            params.append(set_id)
        with self._write() as sql:
            doomed = [_row_to_run(row) for row in sql.all(text + " ORDER BY created_at, id", params)]
            if not dry_run:
                ids = [[run.id] for run in doomed]
                sql.many("DELETE FROM run_slices WHERE run_id = ?", ids)
                sql.many("DELETE FROM runs WHERE id = ?", ids)
        return doomed

    def tables_runs_in_use(self, tables_run_ids: Sequence[str], *, excluding: Sequence[str] = ()) -> set[str]:
        """Which of ``tables_run_ids`` a stored run (other than ``excluding``) was built from."""
        if not tables_run_ids:
            return set()
        tables_run = self._tables_run()
        with self._read() as sql:
            rows = sql.all(
                f"SELECT DISTINCT {tables_run} AS t FROM runs "
                f"WHERE {self.dialect.in_list(tables_run)} AND NOT {self.dialect.in_list('id')}",
                [list(tables_run_ids), list(excluding)],
            )
        return {row[0] for row in rows}

    def slices(self, run_id: str) -> list[SliceRates]:
        with self._read() as sql:
            rows = sql.all(
                f"SELECT {_SLICE_COLUMNS} FROM run_slices WHERE run_id = ? ORDER BY slice_kind, slice_value", [run_id]
            )
        return [SliceRates(*row) for row in rows]


# --------------------------------------------------------------------------- moving history


@dataclass(frozen=True)
class CopyReport:
    """What :func:`copy_runs` did: runs written to the target, runs it already held."""

    copied: int
    already_there: int


_COPY_BATCH = 200


def _same_content(a: Sequence[Any], b: Sequence[Any]) -> str | None:
    """The first column in which two stored rows differ (details compared as JSON), or None."""
    for index, column in enumerate(_RUN_COLUMNS.split(", ")):
        left, right = a[index], b[index]
        if column == "details":
            left, right = json.loads(left), json.loads(right)
        if left != right:
            return column
    return None


def copy_runs(source: Store, target: Store) -> CopyReport:
    """Copy every run of ``source`` into ``target`` as stored: the same ids, timestamps,
    provenance, fingerprints, privacy mode, details (verbatim) and slices.

    Nothing is re-derived, so a ``metadata_only`` run stays free of question text and
    document ids, and the comparisons in the target find what they found in the source.
    All runs are written in one transaction of the target.  A run the target already holds
    with the same content is left as it is (copying twice copies nothing the second time);
    a run id the target holds with different content refuses the whole copy, naming it.
    """
    if source.location == target.location or (
        source.location.path is not None
        and target.location.path is not None
        and source.location.path.resolve() == target.location.path.resolve()
    ):
        raise InputError(f"store copy: the source and the target are the same store ({source.name})")
    with source._read() as src:
        ids = [row[0] for row in src.all("SELECT id FROM runs ORDER BY created_at, id")]
    copied = already = 0
    with target._write() as dst:
        target._serialise(dst, ["copy"])
        for start in range(0, len(ids), _COPY_BATCH):
            batch = ids[start : start + _COPY_BATCH]
            with source._read() as src:
                rows = src.all(
                    f"SELECT {_RUN_COLUMNS} FROM runs WHERE {source.dialect.in_list('id')} ORDER BY created_at, id",
                    [batch],
                )
                slices: dict[str, list[tuple[Any, ...]]] = {}
                for found in src.all(
                    f"SELECT run_id, {_SLICE_COLUMNS} FROM run_slices WHERE {source.dialect.in_list('run_id')} "
                    "ORDER BY run_id, slice_kind, slice_value",
                    [batch],
                ):
                    slices.setdefault(found[0], []).append(found[1:])
            for row in rows:
                run_id = row[0]
                held = dst.one(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", [run_id])
                if held is None:
                    dst.run(f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * _RUN_COLUMN_COUNT)})", row)
                    dst.many(
                        f"INSERT INTO run_slices (run_id, {_SLICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(run_id, *values) for values in slices.get(run_id, [])],
                    )
                    copied += 1
                    continue
                held_slices = dst.all(
                    f"SELECT {_SLICE_COLUMNS} FROM run_slices WHERE run_id = ? ORDER BY slice_kind, slice_value",
                    [run_id],
                )
                differs = _same_content(held, row) or (None if held_slices == slices.get(run_id, []) else "slices")
                if differs is not None:
                    raise StoreError(
                        f"store copy: {target.name} already holds run {run_id} with different content "
                        f"({differs} differs from {source.name}); nothing was copied"
                    )
                already += 1
    return CopyReport(copied=copied, already_there=already)


# --------------------------------------------------------------------------- DuckDB

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


class ResultStore(Store):
    """The DuckDB result log, the embedded default.  Opening it creates the file and applies
    pending migrations."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.location = StoreLocation(path=self.path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(f"{self.path}: cannot create its folder: {exc.strerror}") from None
        self._check_header()
        self._lock = FileLock(str(self.path) + ".lock", timeout=LOCK_TIMEOUT_S)
        if self._stored_version() != SCHEMA_VERSION:
            self._migrate()

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

    @contextmanager
    def _read(self) -> Iterator[Sql]:
        with self._connection(write=False) as con:
            yield Sql(con, DUCKDB)

    @contextmanager
    def _write(self) -> Iterator[Sql]:
        with self._connection() as con:
            con.begin()
            try:
                yield Sql(con, DUCKDB)
                con.commit()
            except BaseException:
                _rollback(con)
                raise

    def _serialise(self, sql: Sql, keys: Sequence[str]) -> None:
        """Nothing to do: DuckDB's writers are already one at a time (the file lock)."""

    def _frame(self, sql: Sql, text: str, params: Sequence[Any]) -> Any:
        return sql.cursor.execute(text, list(params)).df()
