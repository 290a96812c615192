"""The shared result store on PostgreSQL (issue 13): the CLI against a real server, privacy in
every table, errors that name the store without its password, concurrent writers and
readers, and ``goldeneval store copy`` between the backends.

The store's own behaviour (schema, migrations, saving, every query) is tested on both
backends by tests/test_store.py; this file holds what only a server store has."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import textwrap
import threading
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import StoreError
from goldeneval.store import STORE_ENV, RunRecord, SliceRates, Store, StoreLocation, open_store, store_exists
from goldeneval.store.sql import Sql
from tests.conftest import CliWorkspace
from tests.records import details, question
from tests.store_sql import raw_sql

T0 = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)


def record(pass_rate: float = 0.5, *, model: str = "r1", at: datetime = T0, **fields: object) -> RunRecord:
    return RunRecord(
        set_id="s",
        model=model,
        grader="retrieval_hit_rate",
        pass_rate=pass_rate,
        mean_score=0.75,
        question_count=2,
        scored_count=2,
        error_count=0,
        details=details([question("q1", documents=["d1"]), question("q2", top1=False, documents=["d2", "d1"])]),
        slices=[SliceRates("form", "MATCH", 1, 1, 1.0, 1.0), SliceRates("form", "GAP", 1, 1, 0.0, 0.5)],
        provenance={"corpus_revision": "rev-1", "model_revision": "not_applicable"},
        created_at=at,
        label_digest="ld1",
        benchmark_fingerprint="bf1",
        variant_fingerprint="vf1",
        **fields,  # type: ignore[arg-type]
    )


# --------------------------------------------------------------------------- the command line


def sample_args(store: str, cache: Path) -> list[str]:
    return [
        "retrieval",
        "--set",
        "transit-sample",
        "--retriever",
        "goldeneval.lexical",
        "--store",
        store,
        "--cache-dir",
        str(cache),
        "--no-progress",
    ]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_retrieval_stores_the_sample_in_postgres_and_a_second_run_compares_against_it(
    postgres_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = CliRunner().invoke(main, sample_args(postgres_url, tmp_path / "cache"))
    assert first.exit_code == ExitCode.OK, first.output
    assert f"stored in {postgres_url} (complete" in first.output
    second = CliRunner().invoke(main, [*sample_args(postgres_url, tmp_path / "cache"), "--fail-on-regression"])
    assert second.exit_code == ExitCode.OK, second.output
    assert "Regression verdict: pass" in second.output

    runs = open_store(postgres_url).list_runs()
    assert [(r.set_id, r.model, r.status) for r in runs] == [("transit-sample", "goldeneval.lexical", "complete")] * 2
    assert runs[0].pass_rate == runs[1].pass_rate and runs[0].benchmark_fingerprint is not None
    assert not (tmp_path / ".goldeneval").exists() and not list(tmp_path.glob("*.duckdb"))

    monkeypatch.setenv(STORE_ENV, postgres_url)  # the environment selects the same store
    listed = CliRunner().invoke(main, ["runs", "--format", "json"])
    assert listed.exit_code == ExitCode.OK, listed.output
    assert [entry["id"] for entry in json.loads(listed.output)] == [r.id for r in runs]


def test_reading_commands_on_an_empty_database_create_nothing(postgres_url: str) -> None:
    result = CliRunner().invoke(main, ["runs", "--store", postgres_url])
    assert result.exit_code == ExitCode.OK, result.output
    assert raw_sql(
        StoreLocation.parse(postgres_url),
        "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'",
    ) == [(0,)]


def test_an_unreachable_server_is_a_store_error_naming_the_url_without_its_password() -> None:
    url = "postgresql://ci:s3cret-pw@127.0.0.1:1/history"
    result = CliRunner().invoke(main, ["runs", "--store", url])
    assert result.exit_code == ExitCode.STORE
    assert result.stderr.startswith("goldeneval: error: postgresql://ci:***@127.0.0.1:1/history: cannot connect: ")
    assert len(result.stderr.splitlines()) == 1
    assert "s3cret-pw" not in result.output + result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize(
    "url",
    [
        "POSTGRESQL://ci:s3cret-pw@127.0.0.1:1/history",  # libpq reads no upper-case scheme: it quotes it whole
        "postgresql://ci:s3cret-pw%zz@127.0.0.1:1/history",  # a bad escape: libpq quotes the password
        "postgresql://ci:s3cret/pw@127.0.0.1:1/history",  # an unencoded '/'
        "postgresql://ci@127.0.0.1:1/history?pass%77ord=s3cret-pw&sslmode=bogus",
    ],
)
def test_a_url_the_driver_cannot_use_is_reported_without_its_password(url: str) -> None:
    result = CliRunner().invoke(main, ["runs", "--store", url])
    assert result.exit_code == ExitCode.STORE, result.output
    assert result.stderr.startswith("goldeneval: error: postgresql://ci")
    assert len(result.stderr.splitlines()) == 1
    assert "s3cret" not in result.output + result.stderr and "Traceback" not in result.stderr


def test_an_upper_case_scheme_selects_the_same_store(postgres_url: str) -> None:
    open_store(postgres_url).save_run(record(), run_id="run-a")
    result = CliRunner().invoke(main, ["runs", "--store", "POSTGRESQL" + postgres_url.removeprefix("postgresql")])
    assert result.exit_code == ExitCode.OK, result.output
    assert "run-a" in result.stdout


def test_an_unsupported_store_url_in_the_environment_is_invalid_input_on_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(STORE_ENV, "mysql://u:s3cret@h/db")
    for args in (["runs"], ["purge", "--older-than", "1d"], ["export-run", "abc", "--trec", "x.trec"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == ExitCode.INVALID_INPUT, result.output
        assert result.stderr == (
            "goldeneval: error: store mysql://u:***@h/db: unsupported URL scheme 'mysql'; "
            "give a DuckDB file path or a postgresql:// URL\n"
        )


def test_a_url_naming_a_missing_database_is_a_store_error(postgres_url: str) -> None:
    missing = postgres_url.rsplit("/", 1)[0] + "/no_such_database"
    with pytest.raises(StoreError, match=r"/no_such_database: cannot connect: .*does not exist"):
        open_store(missing)


def test_a_postgres_url_without_the_postgres_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # as if psycopg were not installed
    result = CliRunner().invoke(main, ["runs", "--store", "postgresql://ci:pw@db.example/history"])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == (
        "goldeneval: error: store postgresql://ci:***@db.example/history: a PostgreSQL store needs the "
        "'postgres' extra: pip install 'goldeneval[postgres]'\n"
    )


def test_an_unsupported_store_url_is_a_usage_error() -> None:
    result = CliRunner().invoke(main, ["runs", "--store", "mysql://u:pw@h/db"])
    assert result.exit_code == ExitCode.USAGE
    assert "unsupported URL scheme 'mysql'" in result.stderr and ":pw@" not in result.stderr


# --------------------------------------------------------------------------- privacy

QUESTION_MARKER = "QMARK5d2b"
DOCUMENT_MARKER = "DMARK4e81"


def tables_text(location: StoreLocation) -> str:
    """Every row of every table of the store's database, as text."""
    tables = raw_sql(
        location, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1"
    )
    assert {"runs", "run_slices", "schema_version"} <= {name for (name,) in tables}
    return "\n".join(str(row) for (name,) in tables for row in raw_sql(location, f'SELECT t::text FROM "{name}" t'))


@pytest.mark.parametrize("privacy", ["metadata_only", "full"])
def test_metadata_only_stores_no_question_text_and_no_document_id_in_any_postgres_table(
    cli_workspace: CliWorkspace, postgres_url: str, privacy: str
) -> None:
    cli_workspace.write_set(
        [
            {"id": "q1", "text": f"{QUESTION_MARKER} fares", "form": "MATCH", "expected": [f"{DOCUMENT_MARKER}-1"]},
            {"id": "q2", "text": f"{QUESTION_MARKER} bikes", "form": "GAP", "expected": [f"{DOCUMENT_MARKER}-2"]},
        ]
    )
    rankings = {
        f"{QUESTION_MARKER} fares": [f"{DOCUMENT_MARKER}-1#0", f"{DOCUMENT_MARKER}-3"],
        f"{QUESTION_MARKER} bikes": [f"{DOCUMENT_MARKER}-3"],
    }
    for _ in range(2):  # a baseline and a comparison: both write
        result = cli_workspace.evaluate(rankings, "--store", postgres_url, "--privacy", privacy)
        assert result.exit_code == ExitCode.OK, result.output
    text = tables_text(StoreLocation.parse(postgres_url))
    if privacy == "metadata_only":
        assert QUESTION_MARKER not in text and DOCUMENT_MARKER not in text
        assert text.count("fixed_rankings_plugin:build") >= 2  # the scan read both stored runs
    else:  # the control: the scan finds what a full run stores
        assert DOCUMENT_MARKER in text


# --------------------------------------------------------------------------- concurrency

CONCURRENT_WRITER = textwrap.dedent(
    """
    import sys
    from goldeneval.store import RunRecord, SliceRates, open_store
    from tests.records import details, question

    def record(model, pass_rate, tables_run_id=None):
        return RunRecord(
            set_id="s", model=model, grader="retrieval_hit_rate", pass_rate=pass_rate, mean_score=1.0,
            question_count=1, scored_count=1, error_count=0,
            details=details([question("q1")], tables_run_id=tables_run_id),
            slices=[SliceRates("form", "MATCH", 1, 1, 1.0, 1.0), SliceRates("form", "GAP", 0, 0, None, None)],
        )

    url, worker, count, shared = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    store = open_store(url)  # every worker migrates-or-checks the new database at once
    print("ready", flush=True)
    sys.stdin.readline()  # all start writing together
    for n in range(count):
        print(store.save_run(record(f"w{worker}", n / count)).id, flush=True)
    for n in range(shared):  # every worker saves the same Dagster tables: one run each must result
        print(store.save_run(record("shared", 1.0, tables_run_id=f"dg-{n}")).id, flush=True)
    """
)


@pytest.mark.slow
def test_eight_processes_writing_fifty_runs_each_lose_none(postgres_url: str) -> None:
    writers, count, shared = 8, 50, 5
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT_WRITER, postgres_url, str(worker), str(count), str(shared)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for worker in range(writers)
    ]
    for process in processes:
        assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    for process in processes:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    reported: list[list[str]] = []
    for process in processes:
        out, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
        reported.append(out.split())

    store = open_store(postgres_url)
    runs = store.list_runs()
    own = [run for run in runs if run.model != "shared"]
    assert len(own) == writers * count == 400
    assert {run.id for run in own} == {run_id for ids in reported for run_id in ids[:count]}
    shared_runs = [run for run in runs if run.model == "shared"]
    assert sorted(run.tables_run_id or "" for run in shared_runs) == [f"dg-{n}" for n in range(shared)]
    for n in range(shared):  # every worker got back the one stored run of those tables
        assert len({ids[count + n] for ids in reported}) == 1
    assert raw_sql(store.location, "SELECT count(*) FROM run_slices") == [(2 * len(runs),)]
    assert store.schema_version() == raw_sql(store.location, "SELECT count(*) FROM schema_version")[0][0]


def test_readers_and_other_writers_do_not_wait_for_an_open_write(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = open_store(postgres_url)
    first = store.save_run(record(at=T0))
    inside, release = threading.Event(), threading.Event()
    original = Store._insert_slices

    def stall(self: Store, con: object, run_id: str, slices: object) -> None:
        original(self, con, run_id, slices)  # type: ignore[arg-type]
        if run_id == "slow":
            inside.set()
            release.wait(30)

    monkeypatch.setattr(Store, "_insert_slices", stall)
    slow = threading.Thread(target=lambda: store.save_run(record(at=T0 + timedelta(minutes=2)), run_id="slow"))
    slow.start()
    try:
        assert inside.wait(30)
        # the slow transaction is open, its row written but not committed
        assert [r.id for r in open_store(postgres_url).list_runs()] == [first.id]
        other = open_store(postgres_url).save_run(record(model="r2", at=T0 + timedelta(minutes=1)))
        assert store.previous_complete_run(store.get_run(other.id) or other) is None
        assert store.get_run("slow") is None
    finally:
        release.set()
        slow.join(30)
    assert [r.id for r in store.list_runs()] == ["slow", other.id, first.id]


# --------------------------------------------------------------------------- store copy


def history(store: Store) -> list[tuple[object, ...]]:
    """Everything stored, row by row: each run as stored (details included) and its slices."""
    return [(run, store.slices(run.id)) for run in store.list_runs(with_details=True)]


def fill(store: Store) -> None:
    store.save_run(record(0.5, at=T0), run_id="run-a")
    store.save_run(record(0.25, at=T0 + timedelta(minutes=1), privacy="metadata_only"), run_id="run-b")
    store.save_run(
        dataclasses.replace(record(at=T0 + timedelta(minutes=2), model="r2"), provenance={}, label_digest=None),
        run_id="run-c",
    )


def copy(source: str, target: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, ["store", "copy", "--from", source, "--to", target])
    return result.exit_code, result.stdout, result.stderr


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_store_copy_moves_history_both_ways_intact_and_twice_is_idempotent(tmp_path: Path, postgres_url: str) -> None:
    duck = str(tmp_path / "results.duckdb")
    fill(open_store(duck))
    expected = history(open_store(duck))

    code, out, err = copy(duck, postgres_url)
    assert (code, err) == (ExitCode.OK, "")
    assert out == f"Copied 3 run(s) from {duck} to {postgres_url}; 0 already there.\n"
    assert history(open_store(postgres_url)) == expected
    assert copy(duck, postgres_url)[:2] == (
        ExitCode.OK,
        f"Copied 0 run(s) from {duck} to {postgres_url}; 3 already there.\n",
    )
    assert history(open_store(postgres_url)) == expected

    back = str(tmp_path / "back" / "results.duckdb")
    assert copy(postgres_url, back)[0] == ExitCode.OK
    assert history(open_store(back)) == expected
    pg = open_store(postgres_url)
    current = pg.get_run("run-b")
    assert current is not None and current.privacy == "metadata_only"
    previous = pg.previous_complete_run(current)
    assert previous is not None and previous.id == "run-a"  # comparisons find what they found before


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_store_copy_reads_each_run_whole_while_the_source_is_purged(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = open_store(postgres_url)
    fill(source)
    expected = history(source)
    original = Sql.all
    purging: list[bool] = []

    def racing(self: Sql, text: str, params: Sequence[object] = ()) -> list[tuple[object, ...]]:
        rows = original(self, text, params)
        if "FROM runs WHERE (id = ANY(" in text and not purging:
            purging.append(True)  # another machine purges every run between the copy's two reads
            assert len(open_store(postgres_url).purge(T0 + timedelta(days=1))) == 3
        return rows

    monkeypatch.setattr(Sql, "all", racing)
    target = str(tmp_path / "copy.duckdb")
    assert copy(postgres_url, target)[0] == ExitCode.OK and purging
    monkeypatch.undo()
    assert history(open_store(target)) == expected  # each run copied with its slices, as it was read


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_store_copy_refuses_a_target_holding_a_run_id_with_other_content(tmp_path: Path, postgres_url: str) -> None:
    duck = str(tmp_path / "results.duckdb")
    fill(open_store(duck))
    open_store(postgres_url).save_run(record(0.99, at=T0 + timedelta(minutes=1)), run_id="run-b")

    code, out, err = copy(duck, postgres_url)
    assert code == ExitCode.STORE and out == ""
    assert err == (
        f"goldeneval: error: store copy: {postgres_url} already holds run run-b with different content "
        f"(pass_rate differs from {duck}); nothing was copied\n"
    )
    assert [run.id for run in open_store(postgres_url).list_runs()] == ["run-b"]


def test_store_copy_from_a_store_that_does_not_exist_creates_nothing(tmp_path: Path, postgres_url: str) -> None:
    code, _, err = copy(str(tmp_path / "missing.duckdb"), postgres_url)
    assert code == ExitCode.INVALID_INPUT
    assert err == f"goldeneval: error: store copy: the source store {tmp_path / 'missing.duckdb'} does not exist\n"
    assert not store_exists(StoreLocation.parse(postgres_url))


def test_the_suite_file_selects_a_postgres_store_for_dagster(tmp_path: Path, postgres_url: str) -> None:
    from resources.goldeneval import GoldenEvalResource

    config = tmp_path / "goldeneval.yaml"
    config.write_text(
        "sets: [transit-sample]\n"
        "retrievers: {lexical: {id: goldeneval.lexical}}\n"
        f"storage: {{store: '{postgres_url}'}}\n"
    )
    store = GoldenEvalResource(config_path=str(config)).open_store()
    assert store.location == StoreLocation(url=postgres_url)
    assert store.dialect.name == "postgresql" and store.list_runs() == []
    assert not (tmp_path / ".goldeneval").exists()
