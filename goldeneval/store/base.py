"""The one store interface: every query, the migrations and the rules of saving, written once.

A backend supplies connections, transactions and its SQL dialect (:class:`Dialect`) only."""

from __future__ import annotations

import dataclasses
import uuid
from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC, datetime
from typing import Any, ClassVar, NamedTuple, Protocol

from goldeneval.core.errors import InputError, StoreError
from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RunRecord, SliceRates, StoredRun
from goldeneval.store.location import StoreLocation
from goldeneval.store.schema import _MIGRATIONS, _SCHEMA_TABLE, IDENTITY_COLUMNS, PROVENANCE_COLUMNS, SCHEMA_VERSION

_RUN_COLUMNS = (
    "id, created_at, set_id, model, grader, pass_rate, mean_score, question_count, "
    "scored_count, error_count, status, details, "
    + ", ".join(PROVENANCE_COLUMNS)
    + ", "
    + ", ".join(IDENTITY_COLUMNS)
    + ", retriever_id, tables_run_id"
)
_RUN_COLUMN_NAMES = tuple(_RUN_COLUMNS.split(", "))
_RUN_COLUMN_COUNT = len(_RUN_COLUMN_NAMES)
_SLICE_COLUMNS = "slice_kind, slice_value, question_count, scored_count, pass_rate, mean_score"


def _select(details: bool) -> str:
    return _RUN_COLUMNS if details else _RUN_COLUMNS.replace("details,", "NULL AS details,", 1)


def _row_to_run(row: Sequence[Any]) -> StoredRun:
    """A row of :data:`_RUN_COLUMNS` as the run it holds: each column is the field of its name,
    but for ``created_at`` (stored as naive UTC), ``details`` (the text of ``details_json``) and
    the provenance columns (together, ``provenance``)."""
    columns = dict(zip(_RUN_COLUMN_NAMES, row, strict=True))
    created_at = columns.pop("created_at").replace(tzinfo=UTC)
    details_json = columns.pop("details")
    provenance = {name: columns.pop(name) for name in PROVENANCE_COLUMNS}
    return StoredRun(created_at=created_at, details_json=details_json, provenance=provenance, **columns)


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


class SavedRun(NamedTuple):
    """What :meth:`Store.save_run_in_turn` returns: the stored run, and whether another
    complete run of its series was already stored when it was committed."""

    stored: StoredRun
    preceded: bool | None
    """False: this run was the series' first complete one when committed; True: another
    complete run of the series was stored before it (even one measured after it); None:
    nothing was written (the run was there already), so only its history can say."""


class Acceptance(NamedTuple):
    """A person's acceptance of a stored run (``goldeneval accept``, the Dagster job
    ``accept_run``): from then on the run is its series' accepted level."""

    run_id: str
    accepted_at: datetime
    accepted_by: str
    reason: str

    @property
    def shown(self) -> str:
        """``accepted by <who>: <reason>``, as a verdict's reference and ``goldeneval runs`` say it."""
        return f"accepted by {self.accepted_by}: {self.reason}"


_ACCEPTANCE_COLUMNS = "run_id, accepted_at, accepted_by, reason"


def _row_to_acceptance(row: Sequence[Any]) -> Acceptance:
    return Acceptance(row[0], row[1].replace(tzinfo=UTC), row[2], row[3])


def _check_run_text(text: str) -> None:
    if not text:
        raise InputError("run id: empty; list runs with: goldeneval runs")


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

    def held(self) -> AbstractContextManager[None]:
        """Within the block, this thread's reads and writes of the store share what the
        backend would otherwise open for each (the door records and judges a run in one);
        by default nothing is shared."""
        return nullcontext()

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
        """Write the run and its slices in one transaction; returns the stored run (see
        :meth:`save_run_in_turn`)."""
        return self.save_run_in_turn(record, run_id).stored

    def save_run_in_turn(self, record: RunRecord, run_id: str | None = None) -> SavedRun:
        """Write the run and its slices in one transaction; returns the stored run and
        whether a complete run of its series was stored before it (:class:`SavedRun`).

        ``run_id`` lets a caller choose the id up front (the Dagster assets derive it from the
        tables the run is built from).  Saving is idempotent: when a run of the same series
        already has that id, or was built from the same tables (``details.tables_run_id``,
        also for rows stored before schema 3), that run is returned and nothing is written,
        so a re-materialised summary never stores a second copy of one measurement.  Two
        writers saving the same id or the same tables at once take turns (``_serialise``):
        the second finds the first's run.

        Writers of one series take turns too, and whether the series already had a complete
        run is decided in the same transaction, after the insert: of runs saved at the same
        moment exactly one finds none, so exactly one can be the series' baseline
        (:func:`goldeneval.history.comparison.compare_with_history`), whichever was measured first.
        """
        run_id = run_id or uuid.uuid4().hex
        created_at = (record.created_at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
        unknown = set(record.provenance) - set(PROVENANCE_COLUMNS)
        if unknown:
            raise StoreError(f"unknown provenance fields: {', '.join(sorted(unknown))}")
        provenance = [record.provenance.get(column) for column in PROVENANCE_COLUMNS]
        details = record.details
        series = (record.set_id, record.model, record.grader)
        keys = [f"run\0{run_id}", "series\0" + "\0".join(series)]
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
            preceded: bool | None = None
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
                if record.manifest is not None:
                    self._put_manifest(sql, record.manifest)
                preceded = sql.one(f"SELECT id FROM runs WHERE {self._SERIES} LIMIT 1", [*series, run_id]) is not None
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
            return SavedRun(_row_to_run(row), None)
        stored = dataclasses.replace(_row_to_run(row), details_json=text)  # the one string written
        stored.__dict__["details"] = details  # fills the cached_property StoredRun.details
        return SavedRun(stored, preceded)

    def save_manifest(self, manifest: BenchmarkManifest) -> None:
        """Keep a benchmark's manifest (:mod:`goldeneval.core.manifest`), once per fingerprint:
        a manifest already kept stays, unless it withheld document ids and this one holds them
        (a ``full`` run may keep what a ``metadata_only`` run could not).  Saving a run keeps
        the manifest its record carries in the same transaction."""
        with self._write() as sql:
            self._put_manifest(sql, manifest)

    def _put_manifest(self, sql: Sql, manifest: BenchmarkManifest) -> None:
        """Inside a write: the manifest's turn is taken last, after a run's own (a writer that
        holds it waits for no other key), so writers of one benchmark cannot deadlock."""
        fingerprint = manifest.benchmark_fingerprint
        self._serialise(sql, ["manifest\0" + fingerprint])
        held = sql.one("SELECT privacy FROM benchmark_manifests WHERE benchmark_fingerprint = ?", [fingerprint])
        richer = manifest.privacy is PrivacyMode.FULL and manifest.documents is not None
        if held is not None and not (held[0] == PrivacyMode.METADATA_ONLY.value and richer):
            return
        values = [
            datetime.now(UTC).replace(tzinfo=None),
            manifest.privacy.value,
            manifest.document_count,
            len(manifest.questions),
            manifest.to_json_text(),
        ]
        if held is not None:
            sql.run(
                "UPDATE benchmark_manifests SET created_at = ?, privacy = ?, document_count = ?, question_count = ?, "
                "manifest = ? WHERE benchmark_fingerprint = ?",
                [*values, fingerprint],
            )
            return
        sql.run(
            "INSERT INTO benchmark_manifests (created_at, privacy, document_count, question_count, manifest, "
            "benchmark_fingerprint) VALUES (?, ?, ?, ?, ?, ?)",
            [*values, fingerprint],
        )

    def manifest(self, benchmark_fingerprint: str | None) -> BenchmarkManifest | None:
        """The manifest kept for a benchmark; None when none was (runs stored before manifests
        were kept, or a benchmark whose fingerprint is unknown)."""
        if benchmark_fingerprint is None:
            return None
        with self._read() as sql:
            row = sql.one(
                "SELECT manifest FROM benchmark_manifests WHERE benchmark_fingerprint = ?", [benchmark_fingerprint]
            )
        return None if row is None else BenchmarkManifest.from_json_text(benchmark_fingerprint, row[0], self.name)

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
        _check_run_text(text)
        with self._read() as sql:
            return self._resolve_run_id(sql, text, excluding)

    def _resolve_run_id(self, sql: Sql, text: str, excluding: str | None) -> str:
        rows = sql.all(
            "SELECT id FROM runs WHERE (id = ? OR id LIKE ? ESCAPE '\\') AND id IS DISTINCT FROM ? ORDER BY id LIMIT 6",
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
        """The run a full id or a unique id prefix names (see :meth:`resolve_run_id`): its id
        and its row read over one connection."""
        _check_run_text(text)
        with self._read() as sql:
            run_id = self._resolve_run_id(sql, text, excluding)
            row = sql.one(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", [run_id])
        if row is None:  # deleted between the two queries
            raise InputError(f"run {text!r} not found in {self.name} (list runs with: goldeneval runs)")
        return _row_to_run(row)

    _SERIES = "set_id = ? AND model = ? AND grader = ? AND status = 'complete' AND id <> ?"
    """The other complete runs of a series (the comparisons' candidates)."""
    _EARLIER = _SERIES + " AND (created_at < ? OR (created_at = ? AND id < ?))"
    _LATER = _SERIES + " AND (created_at > ? OR (created_at = ? AND id > ?))"

    def _earlier_params(self, current: StoredRun) -> list[Any]:
        at = current.created_at.astimezone(UTC).replace(tzinfo=None)
        return [current.set_id, current.model, current.grader, current.id, at, at, current.id]

    def previous_complete_run(self, current: StoredRun) -> StoredRun | None:
        """The latest complete run of ``current``'s series stored before it (one indexed query)."""
        return self._one(self._EARLIER, self._earlier_params(current), "ORDER BY created_at DESC, id DESC")

    def next_complete_run(self, current: StoredRun) -> StoredRun | None:
        """The first complete run of ``current``'s series measured after it: the run to compare
        with when one measured later was stored first (:attr:`SavedRun.preceded`)."""
        return self._one(self._LATER, self._earlier_params(current), "ORDER BY created_at, id")

    def latest_complete_run(self, run: StoredRun) -> StoredRun | None:
        """The latest complete run of ``run``'s series (``run`` itself, when it is that)."""
        return self._one(
            "set_id = ? AND model = ? AND grader = ? AND status = 'complete'",
            [run.set_id, run.model, run.grader],
            "ORDER BY created_at DESC, id DESC",
        )

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

    def purge(
        self,
        older_than: datetime,
        *,
        set_id: str | None = None,
        dry_run: bool = False,
        keeping: Sequence[str] = (),
    ) -> list[StoredRun]:
        """Delete whole runs (the row and its slices) created before ``older_than``.

        Retention never edits a run: a run is kept whole or deleted whole (with the
        acceptances of it), in one transaction.  Returns the runs deleted (or, with ``dry_run``, that would be), without
        their details; ``tables_run_id`` is filled in for older rows too.  ``keeping`` names
        runs that stay whatever their age (retention keeps the series' accepted levels).
        """
        columns = _select(False).replace("tables_run_id", f"{self._tables_run()} AS tables_run_id")
        text = f"SELECT {columns} FROM runs WHERE created_at < ?"
        params: list[Any] = [older_than.astimezone(UTC).replace(tzinfo=None)]
        if set_id is not None:
            text += " AND set_id = ?"
            params.append(set_id)
        if keeping:
            text += f" AND NOT {self.dialect.in_list('id')}"
            params.append(list(keeping))
        with self._write() as sql:
            doomed = [_row_to_run(row) for row in sql.all(text + " ORDER BY created_at, id", params)]
            if not dry_run:
                ids = [[run.id] for run in doomed]
                sql.many("DELETE FROM run_slices WHERE run_id = ?", ids)
                sql.many("DELETE FROM acceptances WHERE run_id = ?", ids)
                sql.many("DELETE FROM runs WHERE id = ?", ids)
                # a manifest goes with the last run of its benchmark: retention keeps no document id
                sql.run(
                    "DELETE FROM benchmark_manifests WHERE benchmark_fingerprint NOT IN "
                    "(SELECT benchmark_fingerprint FROM runs WHERE benchmark_fingerprint IS NOT NULL)"
                )
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

    # ------------------------------------------------------------------ acceptances

    def accept_run(self, run_id: str, accepted_by: str, reason: str, accepted_at: datetime | None = None) -> Acceptance:
        """Record that a person accepted the run ``run_id`` (an exact id; the checks are
        :func:`goldeneval.history.accepted.accept`'s).  Raises :class:`InputError` when the
        run is not stored (any more)."""
        at = (accepted_at or datetime.now(UTC)).astimezone(UTC).replace(tzinfo=None)
        with self._write() as sql:
            self._serialise(sql, [f"run\0{run_id}"])
            if sql.one("SELECT id FROM runs WHERE id = ?", [run_id]) is None:
                raise InputError(f"run {run_id!r} not found in {self.name} (list runs with: goldeneval runs)")
            sql.run(
                f"INSERT INTO acceptances ({_ACCEPTANCE_COLUMNS}) VALUES (?, ?, ?, ?)",
                [run_id, at, accepted_by, reason],
            )
        return Acceptance(run_id, at.replace(tzinfo=UTC), accepted_by, reason)

    def acceptances(self, run_ids: Sequence[str]) -> dict[str, Acceptance]:
        """The latest acceptance of each of ``run_ids`` that a person accepted (one query)."""
        if not run_ids:
            return {}
        with self._read() as sql:
            rows = sql.all(
                f"SELECT {_ACCEPTANCE_COLUMNS} FROM acceptances WHERE {self.dialect.in_list('run_id')} "
                "ORDER BY accepted_at, run_id",
                [list(run_ids)],
            )
        return {row[0]: _row_to_acceptance(row) for row in rows}  # the latest wins

    _UP_TO = (
        "set_id = ? AND model = ? AND grader = ? AND status = 'complete' "
        "AND (created_at < ? OR (created_at = ? AND id <= ?))"
    )
    """The complete runs of a series up to and including one run (the level the next run gets)."""

    def _series_where(self, current: StoredRun, including: bool, leaving: Sequence[str]) -> tuple[str, list[Any]]:
        """The complete runs of ``current``'s series before it (``including``: and it), less ``leaving``."""
        if including:
            at = current.created_at.astimezone(UTC).replace(tzinfo=None)
            where, params = self._UP_TO, [current.set_id, current.model, current.grader, at, at, current.id]
        else:
            where, params = self._EARLIER, self._earlier_params(current)
        if leaving:
            where += f" AND NOT {self.dialect.in_list('id')}"
            params.append(list(leaving))
        return where, params

    def latest_accepted_run(
        self, current: StoredRun, *, including: bool = False, leaving: Sequence[str] = ()
    ) -> tuple[StoredRun, Acceptance] | None:
        """The complete run of ``current``'s series stored before it (``including``: or ``current``
        itself) whose acceptance is the latest *recorded* (by ``accepted_at``), whichever run it
        names, with that acceptance: a later acceptance of an older run undoes a newer run's.
        ``leaving`` leaves runs out (what retention is about to delete)."""
        where, params = self._series_where(current, including, leaving)
        with self._read() as sql:
            row = sql.one(
                f"SELECT {_ACCEPTANCE_COLUMNS} FROM acceptances WHERE run_id IN (SELECT id FROM runs WHERE {where}) "
                "ORDER BY accepted_at DESC, run_id DESC LIMIT 1",
                params,
            )
        if row is None:
            return None
        acceptance = _row_to_acceptance(row)
        found = self.get_run(acceptance.run_id)
        return None if found is None else (found, acceptance)

    def complete_runs_before(
        self,
        current: StoredRun,
        *,
        after: StoredRun | None = None,
        including: bool = False,
        leaving: Sequence[str] = (),
    ) -> list[StoredRun]:
        """The complete runs of ``current``'s series stored before it (``including``: and it; and
        after ``after``; less ``leaving``), oldest first, without their details: the nights the
        accepted level walks through."""
        where, params = self._series_where(current, including, leaving)
        if after is not None:
            at = after.created_at.astimezone(UTC).replace(tzinfo=None)
            where += " AND (created_at > ? OR (created_at = ? AND id > ?))"
            params += [at, at, after.id]
        with self._read() as sql:
            rows = sql.all(f"SELECT {_select(False)} FROM runs WHERE {where} ORDER BY created_at, id", params)
        return [_row_to_run(row) for row in rows]
