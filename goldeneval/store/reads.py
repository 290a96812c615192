"""The store interface's reads: what a backend supplies (:meth:`StoreReads._read` and the
other abstract methods) and every query of stored runs, their slices, manifests and
acceptances.  :class:`goldeneval.store.base.Store` adds the schema and the writes."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import UTC
from typing import Any, ClassVar

from goldeneval.core.errors import InputError
from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.records import SliceRates, StoredRun
from goldeneval.store.location import StoreLocation
from goldeneval.store.sql import (
    _ACCEPTANCE_COLUMNS,
    _RUN_COLUMNS,
    _SLICE_COLUMNS,
    DUCKDB,
    Acceptance,
    Dialect,
    Sql,
    _check_run_text,
    _filters,
    _like_prefix,
    _row_to_acceptance,
    _row_to_run,
    _select,
)


class StoreReads(ABC):
    """What a backend supplies (:meth:`_read`, :meth:`_write`, :meth:`_serialise`,
    :meth:`_frame` and its :class:`Dialect`) and every query both backends share."""

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

    def _tables_run(self) -> str:
        """Rows stored before schema 3 name their tables run inside details."""
        return f"coalesce(tables_run_id, {self.dialect.json_text('details', 'tables_run_id')})"

    # ------------------------------------------------------------------ reads

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
