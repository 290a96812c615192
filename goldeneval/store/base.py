"""The one store interface: every query, the migrations and the rules of saving, written once.

A backend supplies connections, transactions and its SQL dialect
(:class:`~goldeneval.store.sql.Dialect`) only.  The queries are
:class:`~goldeneval.store.reads.StoreReads`'s, the SQL they share :mod:`goldeneval.store.sql`'s;
:class:`Store` adds the schema, its migrations and the writes."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from goldeneval.core.errors import InputError, StoreError
from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RunRecord, SliceRates, StoredRun
from goldeneval.store.reads import StoreReads
from goldeneval.store.schema import _MIGRATIONS, _SCHEMA_TABLE, PROVENANCE_COLUMNS, SCHEMA_VERSION
from goldeneval.store.sql import (
    _ACCEPTANCE_COLUMNS,
    _RUN_COLUMN_COUNT,
    _RUN_COLUMNS,
    _SLICE_COLUMNS,
    Acceptance,
    SavedRun,
    Sql,
    _row_to_run,
    _select,
)


class Store(StoreReads):
    """The result store interface and everything both backends share: the schema and its
    migrations, saving (one transaction, idempotent by run id and by tables run), and every
    query.  A backend supplies :meth:`_read` (a connection that sees committed runs),
    :meth:`_write` (one transaction), :meth:`_serialise` and its :class:`Dialect`."""

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

    def _insert_slices(self, con: Sql, run_id: str, slices: Sequence[SliceRates]) -> None:
        con.many(
            f"INSERT INTO run_slices (run_id, {_SLICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [[run_id, s.kind, s.value, s.questions, s.scored, s.pass_rate, s.mean_score] for s in slices],
        )

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
