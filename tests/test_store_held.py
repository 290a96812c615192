"""A DuckDB store held by one thread (``Store.held``): the door records and judges a run over one
connection instead of one per query, and nothing else about the store changes."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

from goldeneval.core.errors import StoreError
from goldeneval.store import open_store
from tests.conftest import CliWorkspace


@pytest.fixture
def connects(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """The ``read_only`` flag of every DuckDB connection the store opens."""
    opened: list[bool] = []
    real = duckdb.connect

    def counting(*args: object, **kwargs: object) -> duckdb.DuckDBPyConnection:
        opened.append(bool(kwargs.get("read_only")))
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(duckdb, "connect", counting)  # the module duckdb_store connects through
    return opened


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_reads_and_writes_inside_held_share_one_writer_connection(tmp_path: Path, connects: list[bool]) -> None:
    store = open_store(tmp_path / "r.duckdb")
    connects.clear()
    with store.held():
        assert store.schema_version() > 0
        assert store.schema_version() > 0
        with store.held():  # nested: nothing more is opened
            store.list_runs(limit=1)
    assert connects == [False]
    store.schema_version()
    assert connects == [False, True]  # outside the block, each read connects on its own again


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_another_process_reads_the_store_once_the_block_gives_it_back(tmp_path: Path) -> None:
    """Held, the store is one writer's, as for a commit: a reader elsewhere waits (DuckDB's own
    lock, retried) and then reads, never failing."""
    store = open_store(tmp_path / "r.duckdb")
    ready = tmp_path / "ready"
    script = (
        "import pathlib, sys\nfrom goldeneval.store import open_store\n"
        "pathlib.Path(sys.argv[2]).touch()\nprint(open_store(sys.argv[1]).schema_version())\n"
    )
    with store.held():
        reader = subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / "r.duckdb"), str(ready)], stdout=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while not ready.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert ready.exists()
        with pytest.raises(subprocess.TimeoutExpired):
            reader.wait(timeout=0.5)  # imported, and waiting for the file
    out, _ = reader.communicate(timeout=60)
    assert reader.returncode == 0 and int(out) == store.schema_version()


def test_an_error_of_the_block_passes_through_and_releases_the_store(tmp_path: Path) -> None:
    store = open_store(tmp_path / "r.duckdb")
    with pytest.raises(FileNotFoundError, match="not the store's"), store.held():
        raise FileNotFoundError("not the store's")  # never reworded as a store error
    assert store.schema_version() > 0  # lock and connection were given back


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_database_error_inside_held_is_the_store_error_naming_the_store(tmp_path: Path) -> None:
    store = open_store(tmp_path / "r.duckdb")
    with pytest.raises(StoreError, match=r"r\.duckdb: .*no_such_table"), store.held(), store._read() as sql:
        sql.one("SELECT * FROM no_such_table")
    assert store.schema_version() > 0


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_compared_with_the_one_before_connects_to_its_store_twice(
    cli_workspace: CliWorkspace, connects: list[bool]
) -> None:
    """Opening the store reads its schema version (read-only); recording the run and judging it
    against the previous one (a write and three reads) is one writer's connection."""
    rankings = {"alpha": ["a"], "beta": ["b"], "gamma": []}
    assert cli_workspace.evaluate(rankings).exit_code == 0
    connects.clear()
    result = cli_workspace.evaluate(rankings, "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["verdict"]["state"] == "comparable"
    assert connects == [True, False]
