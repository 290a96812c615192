"""The result store on PostgreSQL (issue 13): one history that writers on many machines share.

Selected by a ``postgresql://`` URL (``--store``, ``$GOLDENEVAL_STORE``, ``storage.store``);
psycopg 3 is the optional ``postgres`` extra and is imported only then.  The schema, its
additive migrations, saving and every query are :class:`goldeneval.store.Store`'s, the same
as on DuckDB; this module supplies connections, transactions and the SQL dialect.

Concurrency, by the database's own transactions (no file lock):

* **Writers.**  A save is one transaction at READ COMMITTED.  Before it looks for an existing
  run it takes transaction-scoped advisory locks (``pg_advisory_xact_lock``) on the run id
  and, for a run built from Dagster tables, on (series, tables run id).  Two writers saving
  the same run or the same tables therefore take turns: the second one's check runs after
  the first one's commit (a READ COMMITTED statement sees everything committed before it
  started) and returns the stored run, as on DuckDB; nothing is stored twice and neither
  writer gets a unique-violation error.  Writers of different runs never wait for each
  other.  This was chosen over SERIALIZABLE with retries (contention would abort and redo
  whole saves) and over a unique index on ``tables_run_id`` (rows stored before schema 3 keep
  it inside ``details``, which an index cannot express).  The locks are taken in one global
  order, so two writers cannot deadlock on them.  The primary key on ``runs.id`` stays the
  last line of defence.
* **Readers** run read-only REPEATABLE READ transactions, one snapshot per read (a run and
  its slices always agree): MVCC snapshots never wait for writers, and advisory locks block
  nobody but writers of the same key.
* **Migrations** run in transactions (PostgreSQL DDL is transactional) under an advisory
  lock, so processes opening a new or old database at once apply each migration once.

Connections come from a pool (psycopg_pool), one per process and URL, so the many
transactions of one command or Dagster step (record, then judge: a dozen) reuse one server
session instead of opening one each, and many pods keep few sessions open.  The first
connection of a process is opened directly, so a server that cannot be reached or refuses the
credentials is reported at once with the server's reason; the pool is created after it, and
an operation that gets no pooled connection within ``POOL_WAIT_S`` (the server went away, the
pool is exhausted) connects directly once more, so it fails with the reason too, or goes on.
The pool checks a connection before lending it, so one that died with a server restart is
replaced, not returned.  Every connection works through PgBouncer in transaction mode: no
server-side prepared statements (``prepare_threshold=None``), no session state across
transactions (isolation and read-only travel with each ``BEGIN``; advisory locks are
transaction-scoped; nothing is ``SET`` on the session).

Text columns are created ``COLLATE "C"`` so that ordering (ties broken by run id, slices by
name) is byte order, as in DuckDB, whatever the database's locale.  ``details`` is a ``json``
column: PostgreSQL keeps its text verbatim, so copies between backends are exact.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import re
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import ModuleType
from typing import Any, ClassVar

from goldeneval.core.errors import InputError, StoreError, one_line
from goldeneval.store.base import Store
from goldeneval.store.location import StoreLocation, url_secrets
from goldeneval.store.schema import SCHEMA_VERSION
from goldeneval.store.sql import Dialect, Sql

__all__ = ["POSTGRES", "PostgresDialect", "PostgresResultStore", "postgres_store_exists"]

CONNECT_TIMEOUT_S = 10
APPLICATION_NAME = "goldeneval"
POOL_MAX_SIZE = 8
"""Connections one process keeps at most (one suffices for a CLI command or a Dagster step;
the rest serve threads).  Past it an operation waits ``POOL_WAIT_S``, then connects directly."""
POOL_WAIT_S = 2.0
"""How long an operation waits for a pooled connection before it connects directly."""
POOL_MAX_IDLE_S = 300.0
"""A pooled connection unused this long is closed (above the pool's one kept connection)."""

_pools: dict[tuple[int, str], Any] = {}
_pools_lock = threading.Lock()
# The pool's workers log a failed reconnection as a warning; with no logging configured,
# Python would print it on stderr beside the one-line error the store error becomes.
logging.getLogger("psycopg.pool").addHandler(logging.NullHandler())


def _close_pools() -> None:
    """At exit, close this process's pools.  A pool inherited through ``fork`` is only
    dropped: its sockets are the parent's sessions, which closing here would end."""
    with _pools_lock:
        pools = [pool for (pid, _), pool in _pools.items() if pid == os.getpid()]
        _pools.clear()
    for pool in pools:
        pool.close(timeout=1.0)


atexit.register(_close_pools)


class PostgresDialect(Dialect):
    """PostgreSQL's SQL: ``%s`` placeholders, ``->>`` on JSON, ``= ANY`` for list parameters."""

    name: ClassVar[str] = "postgresql"

    def sql(self, text: str) -> str:
        return text.replace("%", "%%").replace("?", "%s")

    def ddl(self, statement: str) -> str:
        statement = re.sub(r"\bDOUBLE\b", "DOUBLE PRECISION", statement)
        return re.sub(r"\bVARCHAR\b", 'VARCHAR COLLATE "C"', statement)

    def json_text(self, column: str, key: str) -> str:
        # ->> de-escapes the whole value and fails on a \u0000 escape anywhere in it (text cannot
        # hold NUL), which a retriever's document id or error message can put into details: such
        # a value is read with a pattern instead, so one run never breaks the queries over all.
        return (
            f"(CASE WHEN strpos({column}::text, '\\u0000') = 0 THEN {column} ->> '{key}' "
            f'ELSE substring({column}::text FROM \'"{key}"\\s*:\\s*"([^"\\\\]*)"\') END)'
        )

    def in_list(self, expression: str) -> str:
        return f"({expression} = ANY(?::text[]))"


POSTGRES = PostgresDialect()


def _psycopg(location: StoreLocation) -> ModuleType:
    """psycopg, or invalid input naming the extra that provides it."""
    try:
        import psycopg
    except ImportError:
        raise InputError(
            f"store {location}: a PostgreSQL store needs the 'postgres' extra: pip install 'goldeneval[postgres]'"
        ) from None
    return psycopg


def _lock_id(key: str) -> int:
    """A 64-bit advisory lock id for ``key`` (a collision only makes two writers take turns)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big", signed=True)


class PostgresResultStore(Store):
    """The result log in a PostgreSQL database.  Opening it creates the schema in an empty
    database and applies pending migrations; the database itself must exist."""

    dialect: ClassVar[Dialect] = POSTGRES

    def __init__(self, location: StoreLocation | str, *, migrate: bool = True) -> None:
        """``migrate=False`` only connects: for asking whether a store is there."""
        self.location = StoreLocation.parse(location)
        if self.location.url is None:
            raise InputError(f"store {self.location}: not a postgresql:// URL")
        self._url = self.location.url
        self._driver = _psycopg(self.location)
        self._password = self._url_password()
        if migrate and self._stored_version() != SCHEMA_VERSION:
            self._migrate()

    def _url_password(self) -> str | None:
        try:
            password = self._driver.conninfo.conninfo_to_dict(self._url).get("password")
        except self._driver.Error as exc:
            raise StoreError(f"{self.name}: not a usable PostgreSQL URL: {self._scrub(str(exc))}") from None
        return str(password) if password else None

    def _scrub(self, message: str) -> str:
        """A driver message on one line, without the password (should one ever be quoted): as
        the driver read it, and as written in the URL (a URL it cannot read is quoted whole)."""
        password = getattr(self, "_password", None)  # None while the URL itself is being read
        for secret in sorted({*url_secrets(self._url), *([password] if password else [])}, key=len, reverse=True):
            message = message.replace(secret, "***")
        return one_line(message)

    def _connect_kwargs(self) -> dict[str, Any]:
        """Every connection's settings: autocommit (each block opens its own transaction), and
        no server-side prepared statements, which PgBouncer in transaction mode cannot keep."""
        return {
            "autocommit": True,
            "connect_timeout": CONNECT_TIMEOUT_S,
            "application_name": APPLICATION_NAME,
            "prepare_threshold": None,
        }

    @staticmethod
    def _configure(con: Any) -> None:
        from psycopg.types.string import TextLoader

        for type_name in ("json", "jsonb"):  # details come back as the text stored, not parsed
            con.adapters.register_loader(type_name, TextLoader)

    def _connect(self) -> Any:
        """A new connection outside the pool; a store error with the server's reason if none."""
        psycopg = self._driver
        try:
            con = psycopg.connect(self._url, **self._connect_kwargs())
        except psycopg.Error as exc:
            raise StoreError(f"{self.name}: cannot connect: {self._scrub(str(exc))}") from None
        self._configure(con)
        return con

    def _pool(self) -> Any | None:
        """This process's pool for the URL (None until a first direct connection succeeded)."""
        with _pools_lock:
            return _pools.get((os.getpid(), self._url))

    def _start_pool(self) -> None:
        try:
            from psycopg_pool import ConnectionPool
        except ImportError:  # psycopg without its pool (not the postgres extra): connect each time
            return
        key = (os.getpid(), self._url)
        with _pools_lock:
            if key in _pools:
                return
            pool: Any = ConnectionPool(
                self._url,
                kwargs=self._connect_kwargs(),
                min_size=1,
                max_size=POOL_MAX_SIZE,
                max_idle=POOL_MAX_IDLE_S,
                configure=self._configure,
                check=ConnectionPool.check_connection,
                name=f"goldeneval-{len(_pools) + 1}",
                open=False,
            )
            pool.open(wait=False)
            _pools[key] = pool

    @contextmanager
    def _lent(self) -> Iterator[Any]:
        """A pooled connection, or a direct one (the first of the process, or when the pool
        has none to lend within ``POOL_WAIT_S``), returned or closed afterwards."""
        pool = self._pool()
        con = None
        if pool is not None:
            from psycopg_pool import PoolTimeout

            try:
                con = pool.getconn(timeout=POOL_WAIT_S)
            except PoolTimeout:
                con = None
        if pool is not None and con is not None:
            try:
                yield con
            finally:
                pool.putconn(con)
            return
        con = self._connect()
        try:
            yield con
        finally:
            con.close()
            if pool is None:
                self._start_pool()

    @contextmanager
    def _connection(self) -> Iterator[Any]:
        """An autocommit connection (READ COMMITTED, read-write for the transactions opened
        on it, whatever its previous borrower set); every driver error becomes a store error
        naming the store, its URL without the password."""
        psycopg = self._driver
        with self._lent() as con:
            try:
                con.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
                con.read_only = False
                yield con
            except psycopg.Error as exc:
                raise StoreError(f"{self.name}: {self._scrub(str(exc))}") from None

    def _stored_version(self) -> int | None:
        """The schema version (None: no store in this database yet)."""
        with self._read() as sql:
            found = sql.one("SELECT to_regclass('schema_version') IS NOT NULL")
            if not found or not found[0]:
                return None
            row = sql.one("SELECT max(version) FROM schema_version")
        return int(row[0]) if row and row[0] is not None else None

    @contextmanager
    def _read(self) -> Iterator[Sql]:
        """One read-only REPEATABLE READ transaction: every query of the block sees the same
        snapshot (a run and its slices, read by two queries, are never torn apart by a purge
        committed in between), and, being MVCC, it never waits for writers."""
        with self._connection() as con:
            con.isolation_level = self._driver.IsolationLevel.REPEATABLE_READ
            con.read_only = True
            with con.transaction():
                yield Sql(con.cursor(), POSTGRES)

    @contextmanager
    def _write(self) -> Iterator[Sql]:
        with self._connection() as con, con.transaction():
            yield Sql(con.cursor(), POSTGRES)

    def _serialise(self, sql: Sql, keys: Sequence[str]) -> None:
        for lock_id in sorted({_lock_id(key) for key in keys}):
            sql.run("SELECT pg_advisory_xact_lock(?)", [lock_id])

    def _frame(self, sql: Sql, text: str, params: Sequence[Any]) -> Any:
        import pandas as pd  # type: ignore[import-untyped]

        cursor = sql.cursor.execute(POSTGRES.sql(text), list(params))
        return pd.DataFrame(cursor.fetchall(), columns=[column.name for column in cursor.description])


def postgres_store_exists(location: StoreLocation) -> bool:
    """Whether the database at ``location`` holds a goldeneval store (connects; creates nothing)."""
    return PostgresResultStore(location, migrate=False)._stored_version() is not None
