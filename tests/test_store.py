"""The result store on both backends (DuckDB and PostgreSQL): schema, transactions, series
lookups, where it lives."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from goldeneval.core.errors import InputError, StoreError
from goldeneval.retrieval.details import retrieval_details
from goldeneval.store import (
    DEFAULT_STORE_PATH,
    SCHEMA_VERSION,
    STORE_ENV,
    ResultStore,
    RunRecord,
    SliceRates,
    Store,
    StoreLocation,
    open_store,
    resolve_store,
    resolve_store_path,
)
from tests.records import details, question
from tests.store_sql import raw_sql

T0 = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)


def record(
    pass_rate: float = 0.5,
    mean_score: float = 0.75,
    *,
    errors: int = 0,
    model: str = "r1",
    at: datetime = T0,
) -> RunRecord:
    return RunRecord(
        set_id="s",
        model=model,
        grader="retrieval_hit_rate",
        pass_rate=pass_rate,
        mean_score=mean_score,
        question_count=4,
        scored_count=4 - errors,
        error_count=errors,
        details=details([question("q1", documents=["d1"])]),
        slices=[SliceRates("form", "MATCH", 2, 2, 1.0, 1.0), SliceRates("form", "GAP", 2, 2, 0.0, 0.5)],
        created_at=at,
    )


@pytest.fixture
def store(store_location: StoreLocation) -> Store:
    """A new store, once on DuckDB and once on PostgreSQL (``store_location``)."""
    return open_store(store_location)


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_new_store_is_at_the_latest_schema_version(store: Store) -> None:
    assert store.schema_version() == SCHEMA_VERSION


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_saved_run_reads_back_with_its_details_and_slices(store: Store) -> None:
    saved = store.save_run(record())
    assert store.get_run(saved.id) == saved
    assert (saved.pass_rate, saved.mean_score, saved.status, saved.created_at) == (0.5, 0.75, "complete", T0)
    assert saved.details == details([question("q1", documents=["d1"])])
    assert [(s.value, s.pass_rate) for s in store.slices(saved.id)] == [("GAP", 0.0), ("MATCH", 1.0)]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_runs_details_are_stored_as_written_and_read_by_the_database_as_json(
    store: Store, store_location: StoreLocation
) -> None:
    # What the database stores is the serialiser's document, which its own JSON functions read.
    saved = store.save_run(record())
    read = "json_extract_string(details, '$.protocol')" if store_location.path else "details ->> 'protocol'"
    mark = "?" if store_location.path else "%s"
    query = f"SELECT details::text, {read} FROM runs WHERE id = {mark}"
    [(text, protocol)] = raw_sql(store_location, query, [saved.id])
    assert json.loads(text) == json.loads(saved.details.to_json_text())
    assert protocol == saved.details.protocol


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_duckdb_store_runs_on_one_thread(tmp_path: Path) -> None:
    # Its checkpoint compresses a run's details on every thread DuckDB has: one keeps the
    # write's memory steady (see goldeneval.store.duckdb_store).
    store = ResultStore(tmp_path / "results.duckdb")
    with store.held(), store._read() as sql:
        assert sql.one("SELECT current_setting('threads')") == (1,)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_provenance_is_absent_not_zero_when_nothing_declares_it(store: Store) -> None:
    saved = store.save_run(record())
    assert set(saved.provenance.values()) == {None}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_with_errors_is_stored_as_incomplete(store: Store) -> None:
    assert store.save_run(record(errors=1)).status == "incomplete"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_list_runs_is_newest_first_and_filters(store: Store) -> None:
    a = store.save_run(record(at=T0))
    b = store.save_run(record(at=T0 + timedelta(minutes=1)))
    store.save_run(record(model="other", at=T0 + timedelta(minutes=2)))
    assert [r.id for r in store.list_runs(model="r1")] == [b.id, a.id]
    assert len(store.list_runs(limit=1)) == 1


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_reopening_a_store_does_not_reapply_migrations(store_location: StoreLocation) -> None:
    open_store(store_location).save_run(record())
    reopened = open_store(store_location)
    assert len(reopened.list_runs()) == 1
    assert raw_sql(store_location, "SELECT count(*) FROM schema_version") == [(SCHEMA_VERSION,)]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_store_from_a_newer_goldeneval_is_refused(store_location: StoreLocation) -> None:
    open_store(store_location)
    raw_sql(store_location, "INSERT INTO schema_version VALUES (999, 'future', now())")
    with pytest.raises(StoreError, match="schema version 999 is newer than this goldeneval understands") as error:
        open_store(store_location)
    assert str(error.value).startswith(f"{store_location}: ")


def test_store_path_comes_from_the_option_then_the_environment_then_the_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STORE_ENV, "/env/store.duckdb")
    assert resolve_store_path("/opt/store.duckdb") == Path("/opt/store.duckdb")
    assert resolve_store_path(None) == Path("/env/store.duckdb")
    monkeypatch.delenv(STORE_ENV)
    assert resolve_store_path(None) == DEFAULT_STORE_PATH


def test_a_postgresql_url_selects_the_postgres_store_from_the_option_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    url = "postgresql://ci:s3cret@db.example:5432/history"
    assert resolve_store(url) == StoreLocation(url=url)
    monkeypatch.setenv(STORE_ENV, url)
    assert resolve_store(None).url == url
    assert resolve_store("/opt/store.duckdb") == StoreLocation(path=Path("/opt/store.duckdb"))
    monkeypatch.delenv(STORE_ENV)
    assert resolve_store(None) == StoreLocation(path=DEFAULT_STORE_PATH)
    with pytest.raises(InputError, match="a PostgreSQL URL where a DuckDB file path is needed"):
        resolve_store_path(url)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_open_store_picks_the_backend_by_its_location(store_location: StoreLocation) -> None:
    store = open_store(store_location)
    assert store.location == store_location
    if store_location.is_postgres:
        assert type(store).__name__ == "PostgresResultStore" and store.dialect.name == "postgresql"
    else:
        assert isinstance(store, ResultStore) and store.path == store_location.path


def test_a_store_url_is_shown_without_its_password() -> None:
    location = StoreLocation.parse("postgresql://ci:s3cret@db.example:5432/history?sslmode=require&password=p2")
    assert str(location) == "postgresql://ci:***@db.example:5432/history?sslmode=require&password=***"
    assert "s3cret" not in repr(location) and "p2" not in repr(location)
    assert str(StoreLocation.parse("postgres://db.example/history")) == "postgres://db.example/history"


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u@h/db?pass%77ord=s3cret", "postgresql://u@h/db?pass%77ord=***"),  # libpq decodes keys
        ("postgresql://u@h/db?PASSWORD=s3cret;x", "postgresql://u@h/db?PASSWORD=***"),
        ("postgresql://u:pa/s3cret@h/db", "postgresql://u:***@h/db"),  # an unencoded '/' in the password
        ("postgresql://u:pa?s3cret@h/db?sslpassword=s3cret", "postgresql://u:***@h/db?sslpassword=***"),
        ("POSTGRESQL://u:s3cret@h/db", "postgresql://u:***@h/db"),  # the scheme is case-insensitive
        ("postgresql://h:5432/db?user=me@corp", "postgresql://h:5432/db?user=me@corp"),
    ],
)
def test_a_store_url_is_shown_without_its_password_however_it_is_written(url: str, shown: str) -> None:
    location = StoreLocation.parse(url)
    assert str(location) == shown and "s3cret" not in str(location)


def test_a_url_of_another_database_is_refused_not_taken_for_a_file_name() -> None:
    with pytest.raises(InputError, match=r"store mysql://u:\*\*\*@h/db: unsupported URL scheme 'mysql'"):
        StoreLocation.parse("mysql://u:pw@h/db")


WRITER = textwrap.dedent(
    """
    import sys, time
    from datetime import UTC, datetime
    from goldeneval.store import RunRecord, SliceRates, Store, open_store
    from tests.records import details

    original = Store._insert_slices

    def stall(self, con, run_id, slices):
        original(self, con, run_id, slices)  # the run row and its slices are written ...
        print("inside-transaction", flush=True)
        time.sleep(120)  # ... but the transaction never commits: the parent kills us here

    Store._insert_slices = stall
    open_store(sys.argv[1]).save_run(RunRecord(
        set_id="s", model="killed", grader="retrieval_hit_rate", pass_rate=1.0, mean_score=1.0,
        question_count=1, scored_count=1, error_count=0, details=details(),
        slices=[SliceRates("form", "MATCH", 1, 1, 1.0, 1.0)],
    ))
    """
)


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_writer_killed_mid_run_leaves_no_partial_run(store_location: StoreLocation) -> None:
    open_store(store_location).save_run(record())
    target = str(store_location.path or store_location.url)
    writer = subprocess.Popen(
        [sys.executable, "-c", WRITER, target], stdout=subprocess.PIPE, text=True, env=os.environ.copy()
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "inside-transaction"
    writer.send_signal(signal.SIGKILL)
    writer.wait(timeout=30)

    reopened = open_store(store_location)
    assert [r.model for r in reopened.list_runs()] == ["r1"]
    assert raw_sql(store_location, "SELECT count(*) FROM run_slices") == [(2,)]
    assert reopened.save_run(record(model="after")).model == "after"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_saving_with_a_taken_id_of_the_same_series_returns_the_stored_run_and_writes_nothing(
    store: Store,
) -> None:
    first = store.save_run(record(pass_rate=0.5), run_id="fixed-id")
    again = store.save_run(record(pass_rate=0.25), run_id="fixed-id")
    assert again == first
    assert [r.id for r in store.list_runs()] == ["fixed-id"]
    assert len(store.slices("fixed-id")) == 2


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_saving_with_an_id_another_series_holds_fails_and_keeps_the_stored_run(store: Store) -> None:
    store.save_run(record(model="r1"), run_id="fixed-id")
    with pytest.raises(StoreError, match="run id fixed-id is already taken by a run of set 's', series 'r1'"):
        store.save_run(record(model="r2"), run_id="fixed-id")
    assert [r.model for r in store.list_runs()] == ["r1"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("abc123", "abc123", id="full-id"),
        pytest.param("abd", "abd999", id="unique-prefix"),
        pytest.param("abc", "abc", id="full-id-that-is-also-a-prefix"),
    ],
)
def test_a_run_is_found_by_its_id_or_a_unique_prefix(store: Store, text: str, expected: str) -> None:
    for run_id in ("abc123", "abc", "abd999"):
        store.save_run(record(), run_id=run_id)
    assert store.resolve_run_id(text) == expected


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_ambiguous_prefix_lists_the_candidates(store: Store) -> None:
    for run_id in ("abc123", "abc456"):
        store.save_run(record(), run_id=run_id)
    with pytest.raises(InputError) as error:
        store.resolve_run_id("ab")
    assert str(error.value) == (
        f"run id prefix 'ab' is ambiguous in {store.location}: it matches abc123, abc456; give more of it"
    )


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_prefix_with_like_wildcards_matches_literally(store: Store) -> None:
    store.save_run(record(), run_id="abc123")
    with pytest.raises(InputError, match="run '_bc' not found"):
        store.resolve_run_id("_bc")
    with pytest.raises(InputError, match="run '%' not found"):
        store.resolve_run_id("%")


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_previous_complete_run_skips_incomplete_runs_and_other_series(store: Store) -> None:
    complete = store.save_run(record(at=T0))
    store.save_run(record(errors=1, at=T0 + timedelta(minutes=1)))
    store.save_run(record(model="other", at=T0 + timedelta(minutes=2)))
    current = store.save_run(record(at=T0 + timedelta(minutes=3)))
    later = store.save_run(record(at=T0 + timedelta(minutes=4)))
    previous = store.previous_complete_run(current)
    assert previous is not None and previous.id == complete.id
    assert later.id != previous.id


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_list_runs_leaves_details_out_unless_asked(store: Store) -> None:
    store.save_run(record())
    [light] = store.list_runs()
    [full] = store.list_runs(with_details=True)
    with pytest.raises(StoreError, match="its details were not loaded"):
        _ = light.details
    assert retrieval_details(full).question_rows()[0].id == "q1"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_runs_read_into_a_dataframe_without_details(store: Store) -> None:
    store.save_run(record(pass_rate=0.5, at=T0))
    store.save_run(record(pass_rate=0.25, at=T0 + timedelta(minutes=1)))
    frame = store.to_dataframe(set_id="s")
    assert list(frame["pass_rate"]) == [0.5, 0.25]
    assert "details" not in frame.columns


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_built_from_tables_a_legacy_row_holds_is_not_stored_twice(store: Store) -> None:
    legacy = store.save_run(record(), run_id="legacy-random-id")
    # as schema 2 left it: the tables run only inside details
    patch = '{"tables_run_id": "dg-1"}'
    if store.location.is_postgres:
        raw_sql(store.location, f"UPDATE runs SET tables_run_id = NULL, details = (details::jsonb || '{patch}')::json")
    else:
        raw_sql(store.location, f"UPDATE runs SET tables_run_id = NULL, details = json_merge_patch(details, '{patch}')")
    again = store.save_run(
        dataclasses.replace(record(), details=details([question("q1")], tables_run_id="dg-1")), "new"
    )
    assert again.id == legacy.id
    assert [r.id for r in store.list_runs()] == ["legacy-random-id"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_nul_in_a_runs_details_breaks_no_query_over_the_store(store: Store) -> None:
    """A retriever can return a document id (or raise a message) holding NUL: details then hold a
    \\u0000 escape, which PostgreSQL's ->> refuses (its text cannot hold NUL).  Saving from
    Dagster tables, purging and the tables-in-use check read every row's details; one such run
    must not break them, legacy rows included."""
    nul = dataclasses.replace(record(), details=details([question("q1", documents=["d\x00x"], error="e\x00")]))
    store.save_run(nul, run_id="nul")
    store.save_run(nul, run_id="legacy")
    # as schema 2 left it: the tables run only inside details
    raw_sql(
        store.location,
        "UPDATE runs SET tables_run_id = NULL, "
        """details = replace(details::text, '"tables_run_id":null', '"tables_run_id":"dg-1"')::json """
        "WHERE id = 'legacy'",
    )
    built = dataclasses.replace(
        record(at=T0 + timedelta(minutes=1)), details=details([question("q1")], tables_run_id="dg-2")
    )
    assert store.save_run(built, "new").id == "new"
    again = dataclasses.replace(record(), details=details([question("q1")], tables_run_id="dg-1"))
    assert store.save_run(again, "other").id == "legacy"
    assert store.tables_runs_in_use(["dg-1", "dg-2", "dg-3"]) == {"dg-1", "dg-2"}
    doomed = store.purge(T0 + timedelta(days=1), dry_run=True)
    assert {run.id: run.tables_run_id for run in doomed} == {"nul": None, "legacy": "dg-1", "new": "dg-2"}
    stored = store.get_run("nul")
    assert stored is not None and retrieval_details(stored).question_rows()[0].documents == ["d\x00x"]
