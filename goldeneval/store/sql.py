"""The store's SQL, written once for both backends: the run and slice columns and how a row
becomes a run, the dialect a backend speaks (:class:`Dialect`), the cursor wrapper every query
goes through (:class:`Sql`), and the small records a query returns (:class:`SavedRun`,
:class:`Acceptance`)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, NamedTuple, Protocol

from goldeneval.core.errors import InputError
from goldeneval.core.records import StoredRun
from goldeneval.store.schema import IDENTITY_COLUMNS, PROVENANCE_COLUMNS

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
