"""Issue 25: store connections through a pool where many pods write.

Against the throwaway PostgreSQL cluster: one process's store operations share one server
session (each Dagster step opens the store anew and runs a dozen transactions); no
server-side prepared statement is ever made, so PgBouncer in transaction mode can carry the
connections; a pooled connection that died with a server restart is replaced, not used; and
a server that cannot be reached is still one store error with its reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from goldeneval.core.errors import StoreError
from goldeneval.store import open_store
from goldeneval.store.postgres import APPLICATION_NAME, PostgresResultStore
from tests.postgres_cluster import PostgresCluster, find_server_binaries, start_cluster
from tests.test_store_postgres import record
from tests.test_store_retry import Restartable

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _backend(store: PostgresResultStore) -> int:
    """The server process of the connection the store's next operation gets."""
    with store._connection() as con:
        row = con.execute("SELECT pg_backend_pid()").fetchone()
    return int(row[0])


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_one_process_reuses_one_server_session_across_stores_and_operations(postgres_url: str) -> None:
    backends = set()
    for minute in range(12):
        store = open_store(postgres_url)  # as each Dagster step and each command does
        assert isinstance(store, PostgresResultStore)
        store.save_run(record(at=T0 + timedelta(minutes=minute)))
        assert store.list_runs()
        backends.add(_backend(store))
    # The first connection of the process is direct, every later one is the pool's.
    assert len(backends) == 1, backends
    with PostgresResultStore(postgres_url)._connection() as con:
        row = con.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND datname = current_database()",
            [APPLICATION_NAME],
        ).fetchone()
    assert row is not None and 1 <= row[0] <= 2  # the pool's one, and at most one more


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_repeated_queries_leave_no_server_side_prepared_statement(postgres_url: str) -> None:
    """psycopg prepares a query on the server from its fifth execution on a connection unless
    told not to; PgBouncer in transaction mode cannot follow such a statement across sessions."""
    store = open_store(postgres_url)
    store.save_run(record(at=T0), run_id="run-a")
    for _ in range(12):  # the same queries, on the same pooled connection
        assert store.get_run("run-a") is not None
        store.list_runs()
    assert isinstance(store, PostgresResultStore)
    with store._connection() as con:
        row = con.execute("SELECT count(*) FROM pg_prepared_statements").fetchone()
        threshold = con.prepare_threshold
    assert row == (0,)
    assert threshold is None


def test_a_read_only_transaction_does_not_leave_the_connection_read_only(postgres_url: str) -> None:
    store = open_store(postgres_url)
    assert store.list_runs() == []  # a REPEATABLE READ, READ ONLY transaction on the pooled connection
    store.save_run(record(at=T0), run_id="after-a-read")  # the same connection, read-write again
    assert [r.id for r in store.list_runs()] == ["after-a-read"]


@pytest.fixture(scope="module")
def server() -> Iterator[Restartable]:
    """A cluster of its own: the test below restarts its server."""
    bin_dir = find_server_binaries()
    if bin_dir is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL server binaries (initdb, pg_ctl) not found")
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql package")
    cluster: PostgresCluster = start_cluster(bin_dir)
    try:
        yield Restartable(cluster)
    finally:
        cluster.stop()


@pytest.mark.slow
def test_after_a_server_restart_the_next_write_gets_a_live_connection(server: Restartable) -> None:
    url = server.cluster.new_database()
    store = open_store(url)
    store.save_run(record(at=T0), run_id="before")
    assert isinstance(store, PostgresResultStore)
    before = _backend(store)
    server.halt()
    try:
        with pytest.raises(StoreError, match=r"cannot connect: "):
            open_store(url).list_runs()  # down: one store error with the server's reason
    finally:
        server.resume()
    store.save_run(record(at=T0 + timedelta(minutes=1)), run_id="after")  # the dead session is not lent
    assert [r.id for r in open_store(url).list_runs()] == ["after", "before"]
    assert _backend(store) != before
