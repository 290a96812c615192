"""A run the store cannot take is kept in the spool, and ``goldeneval store retry`` stores it
once (issue 25, item 5): against a DuckDB file that cannot be written, a PostgreSQL server
that is down at write time, and a run whose commit did succeed before the exit 5."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import StoreError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.history import door
from goldeneval.store import ResultStore, RunRecord, SliceRates, Store, StoreLocation, open_store
from goldeneval.store.spool import SPOOL_ENV, keep_run, new_run_id, read_spooled, spooled_files
from goldeneval.store.sql import SavedRun
from tests.conftest import CliWorkspace
from tests.postgres_cluster import PostgresCluster, _wait_until_accepting, find_server_binaries, start_cluster
from tests.records import details, question

RANKINGS = {"alpha": ["a"], "beta": ["x", "b"], "gamma": []}


def record(**fields: object) -> RunRecord:
    values: dict[str, object] = {
        "set_id": "s",
        "model": "r1",
        "grader": "retrieval_hit_rate",
        "pass_rate": 0.1 + 0.2,  # a float that only round-trips exactly
        "mean_score": 0.75,
        "question_count": 2,
        "scored_count": 2,
        "error_count": 0,
        "details": details([question("q1", documents=["d1"]), question("q2", top1=False, documents=["d2", "d1"])]),
        "slices": (SliceRates("form", "MATCH", 1, 1, 1.0, 1.0), SliceRates("form", "GAP", 1, 1, 0.0, None)),
        "provenance": {"corpus_revision": "rev-1", "model_revision": None},
        "created_at": datetime(2026, 11, 1, 2, 0, 0, 123456, tzinfo=UTC),
        "label_digest": "ld1",
        "benchmark_fingerprint": "bf1",
        "variant_fingerprint": None,
        "privacy": PrivacyMode.METADATA_ONLY.value,
    }
    values.update(fields)
    return RunRecord(**values)  # type: ignore[arg-type]


def retry(store: StoreLocation | Path | str, spool: Path) -> Result:
    return CliRunner().invoke(main, ["store", "retry", "--store", str(store), "--spool", str(spool)])


@pytest.fixture
def spool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "spool"
    monkeypatch.setenv(SPOOL_ENV, str(folder))
    return folder


# --------------------------------------------------------------------------- the spool file


def test_a_spool_file_reads_back_exactly_the_record_it_was_written_from(tmp_path: Path) -> None:
    original = record()
    path = keep_run(original, "abc123", StoreLocation(path=tmp_path / "r.duckdb"), tmp_path / "spool")
    assert path == tmp_path / "spool" / "abc123.json"
    assert [p.name for p in (tmp_path / "spool").iterdir()] == ["abc123.json"]  # no temporary left
    kept = read_spooled(path)
    assert (kept.run_id, kept.target) == ("abc123", str((tmp_path / "r.duckdb").resolve()))
    assert kept.record.details.to_json_text() == original.details.to_json_text()
    assert dataclasses.replace(kept.record, details=original.details) == original


def test_a_url_target_never_holds_the_password(tmp_path: Path) -> None:
    path = keep_run(record(), "p1", StoreLocation.parse("postgresql://u:s3cret@db/goldeneval"), tmp_path)
    assert "s3cret" not in path.read_text()


def test_the_retry_command_says_where_the_hidden_password_goes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The line a failed write prints cannot show the password, so the command in it cannot be
    pasted as is: it says so (a probe pasted it and it worked only on a server without one)."""
    monkeypatch.setenv(SPOOL_ENV, str(tmp_path / "spool"))
    url = "postgresql://u:s3cret@127.0.0.1:1/goldeneval?connect_timeout=2"
    failed = _sample(url, tmp_path / "cache")
    assert failed.exit_code == ExitCode.STORE, failed.output
    assert "s3cret" not in failed.output
    assert failed.stderr.rstrip().endswith(
        "store it with: goldeneval store retry --store "
        "'postgresql://u:***@127.0.0.1:1/goldeneval?connect_timeout=2' (with the store's password where *** stands, "
        "or that part left out and the password in PGPASSWORD)"
    )
    assert StoreLocation.parse(url).shown_without_secrets
    assert not StoreLocation.parse("postgresql://u@127.0.0.1:1/goldeneval").shown_without_secrets
    assert not StoreLocation.parse(tmp_path / "s.duckdb").shown_without_secrets


# --------------------------------------------------------------------------- DuckDB


def _block_writes(store: Path) -> Path:
    lock = Path(f"{store}.lock")
    lock.unlink(missing_ok=True)
    lock.mkdir()  # the writer lock cannot be taken, even by root; reading still works
    return lock


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_duckdb_store_that_cannot_be_written_keeps_the_run_and_retry_stores_it_once(
    cli_workspace: CliWorkspace, spool: Path
) -> None:
    assert cli_workspace.evaluate(RANKINGS).exit_code == ExitCode.OK
    lock = _block_writes(cli_workspace.store)

    failed = cli_workspace.evaluate(RANKINGS)
    assert failed.exit_code == ExitCode.STORE, failed.output
    [kept] = spooled_files(spool)
    assert f"the run was kept in {kept}; store it with: goldeneval store retry --store " in failed.stderr
    assert len(failed.stderr.strip().splitlines()) == 1
    assert len(ResultStore(cli_workspace.store).list_runs()) == 1

    still_down = retry(cli_workspace.store, spool)
    assert still_down.exit_code == ExitCode.STORE
    assert f"the kept runs stay in {spool}" in still_down.stderr
    assert spooled_files(spool) == [kept]

    lock.rmdir()
    done = retry(cli_workspace.store, spool)
    assert done.exit_code == ExitCode.OK, done.output
    run_id = kept.stem
    assert done.output.startswith(f"Stored {run_id} (tiny, fixed_rankings_plugin:build, complete)")
    assert spooled_files(spool) == []
    runs = ResultStore(cli_workspace.store).list_runs()
    assert run_id in {run.id for run in runs} and len(runs) == 2

    again = retry(cli_workspace.store, spool)
    assert (again.exit_code, again.output) == (ExitCode.OK, "")
    assert len(ResultStore(cli_workspace.store).list_runs()) == 2


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_kept_run_the_store_holds_already_is_stored_once(tmp_path: Path) -> None:
    """The exit 5 after a commit that did succeed: the same run id stores nothing twice."""
    location = StoreLocation(path=tmp_path / "r.duckdb")
    store = open_store(location)
    run_id = new_run_id()
    store.save_run(record(), run_id)
    keep_run(record(), run_id, location, tmp_path / "spool")

    result = retry(location, tmp_path / "spool")
    assert result.exit_code == ExitCode.OK, result.output
    assert result.output == f"Already stored {run_id} (s, r1) in {location}.\n"
    assert [run.id for run in store.list_runs()] == [run_id]
    assert spooled_files(tmp_path / "spool") == []


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_metadata_only_run_is_kept_as_the_store_would_hold_it(cli_workspace: CliWorkspace, spool: Path) -> None:
    assert cli_workspace.evaluate(RANKINGS).exit_code == ExitCode.OK
    _block_writes(cli_workspace.store)
    failed = cli_workspace.evaluate({"alpha": ["secret-doc"], "beta": ["b"], "gamma": []}, "--privacy", "metadata_only")
    assert failed.exit_code == ExitCode.STORE, failed.output
    [kept] = spooled_files(spool)
    text = kept.read_text()
    assert "alpha" not in text and "secret-doc" not in text
    assert json.loads(text)["privacy"] == "metadata_only"


class _CommitsThenFails(ResultStore):
    """The connection drops after the commit: the run is stored, the writer sees a store error."""

    def save_run_in_turn(self, record: RunRecord, run_id: str | None = None) -> SavedRun:
        super().save_run_in_turn(record, run_id)
        raise StoreError(f"{self.name}: server closed the connection unexpectedly")


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_exit_5_after_a_commit_that_did_succeed_stores_the_run_once(
    cli_workspace: CliWorkspace, spool: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(door, "open_store", lambda _location: _CommitsThenFails(cli_workspace.store))
    failed = cli_workspace.evaluate(RANKINGS)
    assert failed.exit_code == ExitCode.STORE, failed.output
    [kept] = spooled_files(spool)
    assert [run.id for run in ResultStore(cli_workspace.store).list_runs()] == [kept.stem]

    result = retry(cli_workspace.store, spool)
    assert result.exit_code == ExitCode.OK, result.output
    assert result.output.startswith(f"Already stored {kept.stem} ")
    assert [run.id for run in ResultStore(cli_workspace.store).list_runs()] == [kept.stem]
    assert spooled_files(spool) == []


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_kept_run_is_stored_only_into_the_store_it_was_meant_for(tmp_path: Path) -> None:
    meant = StoreLocation(path=tmp_path / "meant.duckdb")
    kept = keep_run(record(), "r1id", meant, tmp_path / "spool")
    other = tmp_path / "other.duckdb"
    result = retry(other, tmp_path / "spool")
    assert result.exit_code == ExitCode.OK, result.output
    assert result.output.startswith(f"Left r1id: kept for {(tmp_path / 'meant.duckdb').resolve()}")
    assert kept.exists() and not other.exists()
    assert retry(meant, tmp_path / "spool").output.startswith("Stored r1id (s, r1, complete)")
    assert [run.id for run in open_store(meant).list_runs()] == ["r1id"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_default_spool_is_beside_the_default_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(SPOOL_ENV, raising=False)
    keep_run(record(), "d1", StoreLocation(path=Path(".goldeneval/results.duckdb")), Path(".goldeneval/spool"))
    result = CliRunner().invoke(main, ["store", "retry"], env={"GOLDENEVAL_STORE": None, "GOLDENEVAL_CONFIG": None})
    assert result.exit_code == ExitCode.OK, result.output
    assert [run.id for run in open_store(Path(".goldeneval/results.duckdb")).list_runs()] == ["d1"]


def test_an_unreadable_spool_file_is_invalid_input_and_kept(tmp_path: Path) -> None:
    (tmp_path / "spool").mkdir()
    (tmp_path / "spool" / "bad.json").write_text("{")
    result = retry(tmp_path / "r.duckdb", tmp_path / "spool")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "bad.json: cannot be read" in result.stderr
    assert (tmp_path / "spool" / "bad.json").exists()


# --------------------------------------------------------------------------- PostgreSQL, stopped


@dataclasses.dataclass
class Restartable:
    cluster: PostgresCluster

    def _options(self) -> str:
        return (
            f"-c listen_addresses=127.0.0.1 -c port={self.cluster.port} "
            f"-c unix_socket_directories={self.cluster.root} -c fsync=off -c synchronous_commit=off"
        )

    def halt(self) -> None:
        self.cluster._run("pg_ctl", "-D", str(self.cluster.data_dir), "-m", "fast", "-w", "stop")

    def resume(self) -> None:
        log = str(self.cluster.root / "server.log")
        self.cluster._run("pg_ctl", "-D", str(self.cluster.data_dir), "-o", self._options(), "-l", log, "-w", "start")
        _wait_until_accepting(self.cluster)


@pytest.fixture(scope="module")
def server() -> Iterator[Restartable]:
    """A throwaway cluster of its own: these tests stop and start its server."""
    bin_dir = find_server_binaries()
    if bin_dir is None:
        if os.environ.get("CI"):
            pytest.fail("PostgreSQL server binaries (initdb, pg_ctl) not found")
        pytest.skip("PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql package")
    cluster = start_cluster(bin_dir)
    try:
        yield Restartable(cluster)
    finally:
        cluster.stop()


@pytest.fixture
def down_at_write_time(server: Restartable) -> Iterator[tuple[Restartable, str]]:
    url = server.cluster.new_database("retry")
    open_store(url)  # the store is there, with its schema
    yield server, url
    with contextlib.suppress(subprocess.CalledProcessError):  # running already
        server.resume()


def _sample(url: str, cache: Path) -> Result:
    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--store", url]
    return CliRunner().invoke(main, [*args, "--cache-dir", str(cache), "--no-progress"])


def _stored_after_retry(server: Restartable, url: str, spool: Path, failed: Result) -> None:
    assert failed.exit_code == ExitCode.STORE, failed.output
    [kept] = spooled_files(spool)
    assert f"the run was kept in {kept}; store it with: goldeneval store retry --store {url}" in failed.stderr

    server.resume()
    done = retry(url, spool)
    assert done.exit_code == ExitCode.OK, done.output
    assert done.output.startswith(f"Stored {kept.stem} (transit-sample, goldeneval.lexical, complete)")
    again = retry(url, spool)
    assert (again.exit_code, again.output) == (ExitCode.OK, "")
    assert [run.id for run in open_store(url).list_runs()] == [kept.stem]


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_server_that_goes_down_before_the_write_keeps_the_run_and_retry_stores_it_once(
    down_at_write_time: tuple[Restartable, str], spool: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store was opened while the server was up; the server is down when the run is written."""
    server, url = down_at_write_time
    opened: Store = open_store(url)
    monkeypatch.setattr(door, "open_store", lambda _location: opened)
    server.halt()
    _stored_after_retry(server, url, spool, _sample(url, tmp_path / "cache"))


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_server_down_for_the_whole_run_keeps_the_run_and_retry_stores_it_once(
    down_at_write_time: tuple[Restartable, str], spool: Path, tmp_path: Path
) -> None:
    server, url = down_at_write_time
    server.halt()
    _stored_after_retry(server, url, spool, _sample(url, tmp_path / "cache"))


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_retry_against_a_server_still_down_exits_5_and_keeps_the_files(
    down_at_write_time: tuple[Restartable, str], tmp_path: Path
) -> None:
    server, url = down_at_write_time
    kept = keep_run(record(), new_run_id(), StoreLocation.parse(url), tmp_path / "spool")
    server.halt()
    result = retry(url, tmp_path / "spool")
    assert result.exit_code == ExitCode.STORE
    assert kept.exists()
    assert json.loads(kept.read_text())["run_id"] == kept.stem
