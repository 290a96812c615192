"""Hostile plug-ins and broken surroundings: every failure is an exit code and one line,
nothing hangs, nothing partial is stored (issue 10)."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import duckdb
import pytest
from click.testing import CliRunner
from filelock import FileLock

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import StoreError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval.evaluation import evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.store import ResultStore, RunRecord
from goldeneval.store.duckdb_store import _rollback
from tests.conftest import CliWorkspace

ONE = GoldenQuestionSet(
    id="one",
    questions=(GoldenQuestion(id="q1", text="alpha", form=QuestionForm.MATCH, expected=frozenset({"a"})),),
)


class _Returns:
    def __init__(self, make: object) -> None:
        self.make = make

    def retrieve(self, question: str, limit: int) -> object:
        return self.make() if callable(self.make) else self.make


def _slow_ids() -> Iterator[str]:
    yield "a"
    time.sleep(0.6)
    yield "b"


def _question_error(retriever: object, timeout_s: float | None = 5.0) -> str | None:
    run = evaluate_retrieval(ONE, retriever, "test", timeout_s=timeout_s)  # type: ignore[arg-type]
    [result] = run.results
    return result.error


def test_a_generator_slower_than_the_timeout_is_a_timeout_not_an_answer() -> None:
    assert _question_error(_Returns(_slow_ids), timeout_s=0.3) == "timed out after 0.3 s"


@pytest.mark.parametrize("timeout_s", [5.0, None], ids=["with-timeout", "without-timeout"])
def test_an_endless_generator_is_cut_at_the_measurement_depth(timeout_s: float | None) -> None:
    endless = _Returns(lambda: (str(i) for i in itertools.count()))
    run = evaluate_retrieval(ONE, endless, "t", timeout_s=timeout_s)  # type: ignore[arg-type]
    [result] = run.results
    assert (result.error, len(result.returned_ids), run.depth) == (None, 100, 100)


def test_an_endless_generator_of_one_document_is_cut_at_ten_times_the_depth() -> None:
    endless = _Returns(lambda: itertools.repeat("a#0"))
    [result] = evaluate_retrieval(ONE, endless, "t", timeout_s=5.0).results  # type: ignore[arg-type]
    assert (result.error, len(result.returned_ids), result.depth) == (None, 1000, 1)


@pytest.mark.parametrize(
    ("value", "kind"),
    [({"a", "b"}, "set"), (frozenset({"a"}), "frozenset"), ({"a": 1}, "dict"), ("a", "str")],
    ids=["set", "frozenset", "dict", "str"],
)
def test_an_unordered_answer_is_an_error_not_a_ranking(value: object, kind: str) -> None:
    assert _question_error(_Returns(value)) == (
        f"TypeError: retrieve() must return ranked ids (a list, tuple or iterator), got {kind}"
    )


@pytest.mark.parametrize("timeout_s", [5.0, None], ids=["with-timeout", "without-timeout"])
def test_sys_exit_inside_a_retriever_is_that_questions_error(timeout_s: float | None) -> None:
    def leave() -> None:
        sys.exit(0)

    assert _question_error(_Returns(leave), timeout_s) == "SystemExit: 0"


EXITING_PLUGIN = """
import sys


class Exits:
    def retrieve(self, question, limit):
        sys.exit(0)


def build(context):
    return Exits()


def build_exits(context):
    sys.exit(0)
"""


@pytest.fixture
def exiting_plugin(cli_workspace: CliWorkspace) -> CliWorkspace:
    (cli_workspace.root / "exiting_plugin.py").write_text(EXITING_PLUGIN)
    return cli_workspace


def _cli(workspace: CliWorkspace, retriever: str, *extra: str) -> tuple[int, str]:
    args = ["retrieval", "--set", str(workspace.set_path), "--retriever", retriever]
    result = CliRunner().invoke(main, [*args, "--store", str(workspace.store), "--no-progress", *extra])
    return result.exit_code, result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_sys_exit_in_every_question_stores_an_incomplete_run_that_fails_the_gate(exiting_plugin: CliWorkspace) -> None:
    code, _ = _cli(exiting_plugin, "exiting_plugin:build", "--fail-on-regression")
    assert code == ExitCode.INCOMPLETE
    [stored] = ResultStore(exiting_plugin.store).list_runs()
    assert (stored.status, stored.error_count) == ("incomplete", 3)


def test_sys_exit_in_a_factory_is_invalid_input_and_stores_nothing(exiting_plugin: CliWorkspace) -> None:
    code, stderr = _cli(exiting_plugin, "exiting_plugin:build_exits")
    assert code == ExitCode.INVALID_INPUT
    assert stderr == "goldeneval: error: retriever 'exiting_plugin:build_exits': its factory raised SystemExit: 0\n"
    assert not exiting_plugin.store.exists()


SLEEPING_PLUGIN = textwrap.dedent(
    """
    import os, time
    from pathlib import Path


    class Sleeps:
        def retrieve(self, question, limit):
            Path(os.environ["STARTED"]).touch()
            time.sleep(60)
            return []


    def build(context):
        return Sleeps()
    """
)


@pytest.mark.slow  # a real goldeneval process
@pytest.mark.parametrize("to_group", [False, True], ids=["kill-the-process", "ctrl-c-in-a-terminal"])
def test_ctrl_c_exits_130_and_stores_nothing(cli_workspace: CliWorkspace, to_group: bool) -> None:
    """A terminal's Ctrl-C reaches the whole process group (the supervisor and the command);
    ``kill -INT`` reaches the supervisor only, which forwards it."""
    (cli_workspace.root / "sleeping_plugin.py").write_text(SLEEPING_PLUGIN)
    started = cli_workspace.root / "started"
    env = {**os.environ, "PYTHONPATH": str(cli_workspace.root), "STARTED": str(started)}
    command = [sys.executable, "-m", "goldeneval.cli", "retrieval", "--set", str(cli_workspace.set_path)]
    command += ["--retriever", "sleeping_plugin:build", "--store", str(cli_workspace.store), "--no-progress"]
    process = subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True
    )
    deadline = time.monotonic() + 60
    while not started.exists() and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert started.exists(), process.communicate()
    if to_group:
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130
    assert stderr.strip().splitlines()[-1] == "goldeneval: interrupted"
    assert not cli_workspace.store.exists()


def test_a_file_that_is_not_a_duckdb_database_is_refused_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "results.duckdb"
    with sqlite3.connect(path) as con:
        con.execute("CREATE TABLE t (x)")
    before = path.read_bytes()
    result = CliRunner().invoke(main, ["runs", "--store", str(path)])
    assert result.exit_code == ExitCode.STORE
    assert (
        result.stderr
        == f"goldeneval: error: {path}: not a DuckDB database (a goldeneval store is one); check --store\n"
    )
    assert path.read_bytes() == before


def test_a_lock_that_cannot_be_created_is_a_store_error(tmp_path: Path) -> None:
    store = tmp_path / "results.duckdb"
    (tmp_path / "results.duckdb.lock").mkdir()  # as unusable as a read-only folder, even for root
    with pytest.raises(StoreError, match=r"results\.duckdb: cannot lock the store: Is a directory"):
        ResultStore(store)


def test_a_lock_file_the_system_refuses_to_create_fails_at_once_not_after_the_lock_timeout(tmp_path: Path) -> None:
    """/proc takes no new files: filelock alone would wait LOCK_TIMEOUT_S (600 s) for a lock
    it can never take, as if another process held it, then say so."""
    if not Path("/proc/self").is_dir():
        pytest.skip("needs Linux's /proc")
    with pytest.raises(StoreError, match=r"^/proc/goldeneval-results\.duckdb: cannot lock the store: No such file"):
        ResultStore("/proc/goldeneval-results.duckdb")


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_the_lock_file_is_filelocks_own_and_no_probe_file_is_left(tmp_path: Path) -> None:
    """The up-front check never creates the lock file itself: filelock's mode (0666 less the
    umask) stays, so a group sharing a store folder with umask 002 can still write it."""
    previous = os.umask(0o002)
    try:
        ResultStore(tmp_path / "results.duckdb")
    finally:
        os.umask(previous)
    assert stat.S_IMODE((tmp_path / "results.duckdb.lock").stat().st_mode) == 0o664
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.duckdb", "results.duckdb.lock"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_connections_never_autoload_or_install_extensions(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "results.duckdb")
    with store._connection() as con:
        settings = dict(
            con.execute(
                "SELECT name, value FROM duckdb_settings() "
                "WHERE name IN ('autoload_known_extensions', 'autoinstall_known_extensions')"
            ).fetchall()
        )
    assert settings == {"autoload_known_extensions": "false", "autoinstall_known_extensions": "false"}


def test_a_failed_rollback_does_not_hide_the_cause() -> None:
    con = duckdb.connect()
    _rollback(con)  # no transaction is active: the original error must stay the one raised
    con.close()


@pytest.mark.parametrize(
    ("duration", "problem"),
    [
        ("200000w", "duration '200000w': longer than 1000 years; nothing is that old"),
        ("5x", "duration '5x': expected a whole number and a unit m, h, d or w (e.g. 30d)"),
    ],
)
def test_a_malformed_or_absurd_purge_duration_is_bad_usage(tmp_path: Path, duration: str, problem: str) -> None:
    """README's exit codes: a malformed flag value is 2, as click's own checks of a value are."""
    store = tmp_path / "s.duckdb"
    result = CliRunner().invoke(main, ["purge", "--older-than", duration, "--store", str(store)])
    assert result.exit_code == ExitCode.USAGE
    assert result.stderr.endswith(f"Error: Invalid value for '--older-than': {problem}\n")
    assert not store.exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_control_characters_from_a_set_file_are_escaped_on_the_terminal(cli_workspace: CliWorkspace) -> None:
    cli_workspace.write_set([{"id": "q\x1b[2J1", "text": "alpha", "form": "MATCH", "expected": ["a"]}])
    result = cli_workspace.evaluate({"alpha": ["a"]})
    assert result.exit_code == ExitCode.OK, result.output
    assert "\x1b" not in result.output
    assert "q\\x1b[2J1" in result.output


@pytest.fixture
def half_corpus(cli_workspace: CliWorkspace) -> Path:
    corpus = cli_workspace.root / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\nalpha")
    return corpus


ALL_HIT = {"alpha": ["a"], "beta": ["b"], "gamma": []}


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_expected_ids_missing_from_the_corpus_are_a_warning(cli_workspace: CliWorkspace, half_corpus: Path) -> None:
    result = cli_workspace.evaluate(ALL_HIT, "--corpus", str(half_corpus), "--format", "json")
    assert result.exit_code == ExitCode.OK
    warning = "1 of 2 expected document ids of set 'tiny' are not in the corpus: b"
    assert result.stderr == f"goldeneval: warning: {warning}\n"
    assert json.loads(result.stdout)["warnings"] == [warning]


def test_strict_makes_missing_expected_ids_invalid_input(cli_workspace: CliWorkspace, half_corpus: Path) -> None:
    result = cli_workspace.evaluate(ALL_HIT, "--corpus", str(half_corpus), "--strict")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == (
        "goldeneval: error: 1 of 2 expected document ids of set 'tiny' are not in the corpus: b (--strict)\n"
    )
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_in_metadata_only_the_warning_counts_the_ids_without_naming_them(
    cli_workspace: CliWorkspace, half_corpus: Path
) -> None:
    result = cli_workspace.evaluate(ALL_HIT, "--corpus", str(half_corpus), "--privacy", "metadata_only")
    assert result.stderr == "goldeneval: warning: 1 of 2 expected document ids of set 'tiny' are not in the corpus\n"


HARD_EXITING_PLUGIN = textwrap.dedent(
    """
    import os


    class HardExits:
        def retrieve(self, question, limit):
            os._exit(int(os.environ.get("EXIT_WITH", "0")))


    def build(context):
        return HardExits()


    def build_hard_exits(context):
        os._exit(0)


    class KillsItself:
        def retrieve(self, question, limit):
            os.kill(os.getpid(), 9)


    def build_killer(context):
        return KillsItself()


    class CleansUp:
        # Registers an atexit clean-up, as plug-ins holding temporary files do.

        def __init__(self):
            import atexit

            atexit.register(self.clean_up)

        def clean_up(self):
            with open(os.environ["CLEANED_UP"], "w") as marker:
                marker.write("cleaned up")

        def retrieve(self, question, limit):
            return ["platform-screen-doors"]


    def build_cleans_up(context):
        return CleansUp()
    """
)


def _console(workspace: CliWorkspace, retriever: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The real console command (the supervisor only runs outside click's test runner)."""
    (workspace.root / "hard_exiting_plugin.py").write_text(HARD_EXITING_PLUGIN)
    command = [sys.executable, "-m", "goldeneval.cli", "retrieval", "--set", str(workspace.set_path)]
    command += ["--retriever", f"hard_exiting_plugin:{retriever}", "--store", str(workspace.store), "--no-progress"]
    environment = {**os.environ, "PYTHONPATH": str(workspace.root), **env}
    return subprocess.run(command, env=environment, capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.slow  # a real goldeneval process
@pytest.mark.parametrize(("retriever", "exit_with"), [("build", "0"), ("build", "1"), ("build_hard_exits", "0")])
def test_os_exit_inside_a_plugin_never_exits_zero_or_with_the_regression_code(
    cli_workspace: CliWorkspace, retriever: str, exit_with: str
) -> None:
    result = _console(cli_workspace, retriever, EXIT_WITH=exit_with)
    assert result.returncode == ExitCode.INVALID_INPUT
    assert result.stderr.splitlines()[-1].startswith(
        f"goldeneval: error: goldeneval ended inside a plug-in (os._exit({exit_with}) or a native crash)"
    )
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # a real goldeneval process
def test_a_plugin_that_kills_its_process_exits_128_plus_the_signal(cli_workspace: CliWorkspace) -> None:
    result = _console(cli_workspace, "build_killer")
    assert result.returncode == 128 + signal.SIGKILL
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # a real goldeneval process
def test_a_plugins_atexit_clean_up_runs_in_the_supervised_child_and_output_is_whole(
    cli_workspace: CliWorkspace,
) -> None:
    """The child ends as the interpreter does: a plug-in's clean-up runs, the report is whole."""
    marker = cli_workspace.root / "cleaned-up.txt"
    result = _console(cli_workspace, "build_cleans_up", CLEANED_UP=str(marker))
    assert result.returncode == ExitCode.OK, result.stderr
    assert marker.read_text() == "cleaned up"
    assert result.stdout.rstrip().splitlines()[-1].startswith(("Regression verdict:", "  "))
    assert "Regression verdict: " in result.stdout


@pytest.mark.slow  # a real goldeneval process
def test_the_supervised_command_keeps_its_own_exit_codes_and_output(cli_workspace: CliWorkspace) -> None:
    command = [sys.executable, "-m", "goldeneval.cli", "retrieval", "--set", "transit-sample", "--no-progress"]
    command += ["--retriever", "goldeneval.lexical", "--store", str(cli_workspace.store)]
    command += ["--cache-dir", str(cli_workspace.root / "cache")]
    first = subprocess.run([*command, "--format", "json"], capture_output=True, text=True, timeout=120, check=False)
    assert first.returncode == ExitCode.OK, first.stderr
    assert json.loads(first.stdout)["run"]["status"] == "complete"
    usage = subprocess.run([*command, "--no-such-option"], capture_output=True, text=True, timeout=60, check=False)
    assert usage.returncode == ExitCode.USAGE
    assert "No such option '--no-such-option'" in usage.stderr


def _finishes_within(seconds: float, action: Callable[[], object]) -> bool:
    worker = threading.Thread(target=action, daemon=True)
    worker.start()
    worker.join(seconds)
    return not worker.is_alive()


def _one_run() -> RunRecord:
    class Answers:
        def retrieve(self, question: str, limit: int) -> list[str]:
            return ["a"]

    return evaluate_retrieval(ONE, Answers(), "test").to_record(PrivacyMode.FULL)


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_readers_do_not_queue_behind_the_writer_lock(tmp_path: Path) -> None:
    """A writer waiting for (or holding) the writer lock does not hold DuckDB's file: reads
    go ahead at once; a write queues until the lock is free."""
    store = ResultStore(tmp_path / "results.duckdb")
    store.save_run(_one_run())
    held = FileLock(f"{store.path}.lock")
    with held:
        assert _finishes_within(10, lambda: ResultStore(store.path).list_runs())
        assert _finishes_within(10, lambda: ResultStore(store.path).find_run(store.list_runs()[0].id[:6]))
        writing = threading.Thread(
            target=lambda: store.save_run(_one_run()),
            daemon=True,
        )
        writing.start()
        writing.join(0.5)
        assert writing.is_alive()
    writing.join(30)
    assert not writing.is_alive()
    assert len(store.list_runs()) == 2


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_reader_waits_for_a_commit_in_progress_then_reads(tmp_path: Path) -> None:
    """A reader that finds another process holding the store waits for it to let go instead of
    failing: its read returns only after the holder has started to let go (it writes a marker
    just before it closes), with the run it stored.  No time is measured."""
    path = tmp_path / "results.duckdb"
    letting_go = tmp_path / "letting-go"
    ResultStore(path).save_run(_one_run())
    script = textwrap.dedent(
        f"""
        import duckdb, pathlib, sys, time
        con = duckdb.connect({str(path)!r})
        print("open", flush=True)
        time.sleep(3)
        pathlib.Path({str(letting_go)!r}).touch()
        con.close()
        """
    )
    holder = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    assert holder.stdout is not None and holder.stdout.readline().strip() == "open"
    runs = ResultStore(path).list_runs()
    assert letting_go.exists()  # the read waited for the holder
    holder.wait(timeout=30)
    assert len(runs) == 1
