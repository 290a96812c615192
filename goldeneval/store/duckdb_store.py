"""The embedded default store: one DuckDB file, writers serialised by a file lock beside it."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager, nullcontext, suppress
from pathlib import Path
from typing import Any

import duckdb
from filelock import FileLock, Timeout

from goldeneval.core.errors import StoreError, one_line
from goldeneval.store.base import Store
from goldeneval.store.location import StoreLocation
from goldeneval.store.schema import LOCK_TIMEOUT_S, SCHEMA_VERSION
from goldeneval.store.sql import DUCKDB, Sql

DUCKDB_MAGIC = b"DUCK"
_MAGIC_AT, _HEADER_END = 8, 12
"""DuckDB's file header: the magic bytes ``DUCK`` at offset 8."""
_OFFLINE: dict[str, str | bool | int | float | list[str]] = {
    "autoload_known_extensions": False,
    "autoinstall_known_extensions": False,
    "threads": 1,
}
"""Every connection: the store never loads or downloads a DuckDB extension, and runs on one
thread.  Its statements are small (a run is one row, its history an indexed query), but the
checkpoint that writes a run's details at close compresses them on every thread: with two,
a 100,000-question run's write peaked 18 MiB higher in one process of three, at random, and
the run's peak with it (``benchmarks.run --only memory``)."""


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
        self._held: tuple[int, duckdb.DuckDBPyConnection] | None = None
        """(thread, connection) while :meth:`held`: that thread's reads and writes use it."""
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
    def _translated(self) -> Iterator[None]:
        """What locking and DuckDB raise, as the store error that names this store."""
        try:
            yield
        except Timeout:
            raise StoreError(f"{self.path}: another process held the store for {LOCK_TIMEOUT_S:g} s") from None
        except duckdb.Error as exc:
            raise StoreError(f"{self.path}: {one_line(str(exc))}") from None
        except OSError as exc:  # the lock file cannot be created: a read-only folder, a full disk
            raise StoreError(f"{self.path}: cannot lock the store: {exc.strerror or exc}") from None

    @contextmanager
    def _connection(self, *, write: bool = True) -> Iterator[duckdb.DuckDBPyConnection]:
        """Writers take the file lock, so they queue instead of failing; readers do not take
        it: a read-only connection waits only while a writer has the file open (one commit),
        never for the writers queued behind it.  Inside :meth:`held`, this thread's held
        connection, whatever ``write`` says."""
        held = self._held
        if held is not None and held[0] == threading.get_ident():
            with self._translated():
                yield held[1]
            return
        with self._translated():
            if write:
                self._check_lock_file()
            with self._lock if write else nullcontext():
                con = self._connect(read_only=not write)
                try:
                    yield con
                finally:
                    con.close()

    @contextmanager
    def held(self) -> Iterator[None]:
        """One writer's connection for this thread's reads and writes within the block, under
        the writers' file lock: recording a run and judging it (a write and three reads)
        connect once instead of four times, 10 ms each.  Other processes' writers queue on
        the file lock as for any write; their readers wait for the block, as for a commit.
        Within this process, another store object of the same file cannot connect meanwhile
        (DuckDB refuses a second configuration of an open file), as during any write.
        The block's own errors pass through untouched; a nested call holds nothing more."""
        if self._held is not None and self._held[0] == threading.get_ident():
            yield
            return
        stack = ExitStack()
        with self._translated():
            self._check_lock_file()
            stack.enter_context(self._lock)
            try:
                con = self._connect(read_only=False)
            except BaseException:
                stack.close()
                raise
        stack.callback(con.close)
        with stack:
            self._held = (threading.get_ident(), con)
            try:
                yield
            finally:
                self._held = None

    def _check_lock_file(self) -> None:
        """filelock takes a lock file it cannot create (``/proc/...``, a folder that vanished)
        for one another process holds and would wait LOCK_TIMEOUT_S for it.  When there is no
        lock file yet, create and remove a file of our own beside it first, so such a store
        fails at once, naming why.  The lock file itself is never touched here: filelock gives
        it its own mode, and on a file system without ``flock`` its mere existence is the lock."""
        lock_file = self._lock.lock_file
        if os.path.lexists(lock_file):
            return  # filelock reports what is wrong with an existing one itself
        probe = f"{lock_file}.probe-{os.getpid()}-{uuid.uuid4().hex}"
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(descriptor)
        os.unlink(probe)

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
