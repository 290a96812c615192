"""``goldeneval.command`` with real programs in other languages (tests/search_programs/): a PHP
search over the bundled transit-sample corpus, measured through the CLI, must find exactly what
the same ranking finds in Python; a POSIX shell program misbehaves on purpose, once, and the
run goes on with that one question as an error and a fresh program for the rest; no program
is left running when the run ends, however it ends."""

from __future__ import annotations

import gc
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.command import CommandRetriever
from goldeneval.retrieval.retrievers.command import build as build_command
from goldeneval.retrieval.retrievers.external import SearchError
from tests.search_programs import overlap

ROOT = Path(__file__).resolve().parents[1]
PROGRAMS = Path(__file__).resolve().parent / "search_programs"
TRANSIT_CORPUS = ROOT / "goldeneval" / "sample" / "transit" / "corpus"
ANSWER_SH = f"sh {PROGRAMS / 'answer.sh'}"
IDS = ["fares/day-ticket", "fares/fare-table-2026"]


@pytest.fixture(scope="session")
def php() -> str:
    """Debian's php-cli: required in CI (.ci/run installs it), optional elsewhere."""
    found = shutil.which("php")
    if found is None:
        reason = "php not found: install Debian's php-cli package"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must provide it (.ci/run installs it)")
        pytest.skip(reason)
    return found


@pytest.fixture
def program_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The environment the test programs read; returns the file they list their process ids in."""
    pids = tmp_path / "pids"
    pids.touch()
    monkeypatch.setenv("SEARCH_PIDS", str(pids))
    monkeypatch.setenv("SEARCH_IDS", ", ".join(json.dumps(i) for i in IDS))
    monkeypatch.setenv("SEARCH_FAULT_MARKER", str(tmp_path / "fault-happened"))
    return pids


def fault(monkeypatch: pytest.MonkeyPatch, kind: str, at: int) -> None:
    monkeypatch.setenv("SEARCH_FAULT", kind)
    monkeypatch.setenv("SEARCH_FAULT_AT", str(at))


def command_retriever(command: str, **options: str) -> CommandRetriever:
    context = RetrieverContext(corpus=None, cache_dir=Path("unused"), options={"command": command, **options})
    return build_command(context)


def listed(pids_file: Path) -> list[int]:
    return [int(line) for line in pids_file.read_text().split()]


def still_there(pids: list[int]) -> list[str]:
    """Those of ``pids`` still running, or left as zombies of this process (never reaped).  A
    zombie whose parent is another (init, after its own parent was killed) is not ours to reap."""
    left = []
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except FileNotFoundError:
            continue
        state, parent = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z" or int(parent) == os.getpid():
            left.append(f"{pid} ({state}, parent {parent})")
    return left


def none_left(pids: list[int], wait_s: float = 5.0) -> list[str]:
    deadline = time.monotonic() + wait_s
    while (left := still_there(pids)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def retrieval(store: Path, program: str, *args: str) -> Result:
    command = f"command={program}"
    head = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.command", "--option", command]
    return CliRunner().invoke(main, [*head, "--store", str(store), "--no-progress", *args])


def as_json(result: Result) -> dict[str, Any]:
    assert result.exit_code in (ExitCode.OK, ExitCode.INCOMPLETE), result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def errors(document: dict[str, Any]) -> dict[str, str]:
    return {q["id"]: q["error"] for q in document["questions"] if q["error"] is not None}


def reference_documents() -> dict[str, list[str]]:
    """What search.php must find for each question of transit-sample: the Python ranking."""
    from goldeneval.retrieval.sets import resolve_golden_set

    questions = resolve_golden_set("transit-sample", ()).questions
    return {q.id: overlap.rank(TRANSIT_CORPUS, q.text, 100) for q in questions}


# ------------------------------------------------------------------ PHP, through the CLI


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_php_search_program_is_measured_and_finds_what_its_python_twin_finds(
    php: str, tmp_path: Path, program_env: Path
) -> None:
    result = retrieval(
        tmp_path / "r.duckdb", f"php {PROGRAMS / 'search.php'} {TRANSIT_CORPUS}", "--workers", "4", "--format", "json"
    )
    document = as_json(result)
    assert (document["run"]["status"], errors(document)) == ("complete", {})
    assert {q["id"]: q["documents"] for q in document["questions"]} == reference_documents()
    assert 1 <= len(listed(program_env)) <= 4
    assert none_left(listed(program_env)) == []


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
@pytest.mark.parametrize("how", ["exit", "kill"])
def test_a_php_program_that_dies_on_its_fifth_question_costs_that_question_only(
    php: str, tmp_path: Path, program_env: Path, monkeypatch: pytest.MonkeyPatch, how: str
) -> None:
    fault(monkeypatch, how, 5)
    document = as_json(
        retrieval(tmp_path / "r.duckdb", f"php {PROGRAMS / 'search.php'} {TRANSIT_CORPUS}", "--format", "json")
    )
    ended = "exited with status 3" if how == "exit" else "was killed by signal 9 (SIGKILL)"
    assert document["run"]["status"] == "incomplete"
    assert errors(document) == {
        "q-005": f"SearchError: the program {ended} before answering; a fresh program answers the next question"
    }
    expected = reference_documents()
    assert {q["id"]: q["documents"] for q in document["questions"] if q["id"] != "q-005"} == {
        qid: docs for qid, docs in expected.items() if qid != "q-005"
    }
    assert len(listed(program_env)) == 2  # the first, and the one started after it died
    assert none_left(listed(program_env)) == []


# ------------------------------------------------------------------ a shell program, through the CLI


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_program_killed_mid_run_is_restarted_and_the_run_completes_with_one_error(
    tmp_path: Path, program_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fault(monkeypatch, "kill", 5)
    result = retrieval(tmp_path / "r.duckdb", ANSWER_SH, "--format", "json")
    document = as_json(result)
    assert document["run"]["status"] == "incomplete"
    assert errors(document) == {
        "q-005": "SearchError: the program was killed by signal 9 (SIGKILL) before answering; "
        "a fresh program answers the next question"
    }
    answered = [q for q in document["questions"] if q["error"] is None]
    assert len(answered) == len(document["questions"]) - 1
    assert all(q["documents"] == IDS for q in answered)
    assert none_left(listed(program_env)) == []


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_hung_program_is_an_error_after_timeout_s_and_its_children_are_stopped_too(
    tmp_path: Path, program_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fault(monkeypatch, "hang", 2)
    document = as_json(retrieval(tmp_path / "r.duckdb", ANSWER_SH, "--option", "timeout_s=0.5", "--format", "json"))
    assert errors(document) == {
        "q-002": "SearchError: the program took longer than 0.5 s (option timeout_s) to answer; it was stopped, "
        "a fresh one answers the next question"
    }
    pids = listed(program_env)
    assert len(pids) == 3  # the first program, the sleep it started, the program after it
    assert none_left(pids) == []


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_workers_run_one_program_each(tmp_path: Path, program_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SEARCH_WAIT_FOR", "3")  # no program answers before three run at once
    document = as_json(
        retrieval(tmp_path / "r.duckdb", ANSWER_SH, "--workers", "3", "--option", "timeout_s=10", "--format", "json")
    )
    assert (document["run"]["status"], errors(document)) == ("complete", {})
    assert len(listed(program_env)) == 3


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_processes_1_serialises_the_workers_on_one_program(tmp_path: Path, program_env: Path) -> None:
    document = as_json(
        retrieval(tmp_path / "r.duckdb", ANSWER_SH, "--workers", "4", "--option", "processes=1", "--format", "json")
    )
    assert (document["run"]["status"], errors(document)) == ("complete", {})
    assert len(listed(program_env)) == 1


# ------------------------------------------------------------------ faults, question by question


@pytest.mark.parametrize(
    ("kind", "error", "restarted"),
    [
        pytest.param(
            "exit",
            "the program exited with status 3 before answering; a fresh program answers the next question",
            True,
            id="exit",
        ),
        pytest.param(
            "garbage",
            'the program wrote a line that is not JSON: \'Searching for: {"id": 2, "question": "second", '
            '"limit": 10}\'; a fresh program answers the next question',
            True,
            id="malformed-line",
        ),
        pytest.param(
            "wrong-id", "the program answered id 102, not 2; a fresh program answers the next question", True, id="id"
        ),
        pytest.param("error", "the program says: the index is not loaded", False, id="its-own-error"),
        pytest.param("numbers", "ids[1] is a number (2), not a string id", False, id="a-number-id"),
    ],
)
def test_a_fault_is_the_error_of_its_question_and_the_next_is_answered(
    program_env: Path, monkeypatch: pytest.MonkeyPatch, kind: str, error: str, restarted: bool
) -> None:
    fault(monkeypatch, kind, 2)
    with command_retriever(ANSWER_SH) as retriever:
        assert retriever.retrieve("first", 10) == IDS
        with pytest.raises(SearchError) as raised:
            retriever.retrieve("second", 10)
        assert str(raised.value) == error
        assert retriever.retrieve("third", 10) == IDS
    assert len(listed(program_env)) == (2 if restarted else 1)


def test_the_programs_standard_error_is_passed_through(
    program_env: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    fault(monkeypatch, "stderr", 1)
    with command_retriever(ANSWER_SH) as retriever:
        assert retriever.retrieve("first", 10) == IDS
    assert capfd.readouterr().err == "answer.sh: question 1\n"


# ------------------------------------------------------------------ no program left behind


def test_close_ends_every_program_and_reaps_it(program_env: Path) -> None:
    retriever = command_retriever(ANSWER_SH)
    retriever.retrieve("first", 10)
    retriever.close()
    assert still_there(listed(program_env)) == []
    with pytest.raises(SearchError, match=r"^the retriever was closed$"):
        retriever.retrieve("again", 10)


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_retriever_garbage_collected_ends_its_programs(program_env: Path) -> None:
    retriever = command_retriever(ANSWER_SH)
    retriever.retrieve("first", 10)
    del retriever
    gc.collect()
    assert still_there(listed(program_env)) == []


@pytest.mark.slow
def test_interpreter_exit_ends_the_programs_even_one_that_hangs(program_env: Path) -> None:
    script = (
        "import threading, time\n"
        "from pathlib import Path\n"
        "from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever\n"
        f"r = build_retriever('goldeneval.command', RetrieverContext(None, Path('.'), {{'command': {ANSWER_SH!r}}}))\n"
        "print(r.retrieve('first', 10))\n"
        "threading.Thread(target=r.retrieve, args=('second', 10), daemon=True).start()  # hangs\n"
        "time.sleep(0.5)\n"
    )
    env = {**os.environ, "SEARCH_FAULT": "hang", "SEARCH_FAULT_AT": "2"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT, env=env)
    assert done.returncode == 0, done.stderr
    pids = listed(program_env)
    assert len(pids) == 2  # the program and the sleep it started, which reads no input
    assert none_left(pids) == []


@pytest.mark.slow
def test_ctrl_c_during_a_run_ends_the_programs(tmp_path: Path, program_env: Path) -> None:
    env = {**os.environ, "SEARCH_FAULT": "hang", "SEARCH_FAULT_AT": "3"}
    goldeneval = Path(sys.executable).with_name("goldeneval")
    args = [str(goldeneval), "retrieval", "--set", "transit-sample", "--retriever", "goldeneval.command"]
    args += ["--option", f"command={ANSWER_SH}", "--store", str(tmp_path / "r.duckdb"), "--no-progress"]
    run = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while len(listed(program_env)) < 2 and time.monotonic() < deadline:  # the program and its sleep
            time.sleep(0.05)
        assert len(listed(program_env)) == 2
        run.send_signal(signal.SIGINT)
        _, stderr = run.communicate(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == ExitCode.INTERRUPTED, stderr
    assert "goldeneval: interrupted" in stderr
    assert none_left(listed(program_env)) == []


def test_a_run_that_fails_with_an_exception_leaves_no_program(tmp_path: Path, program_env: Path) -> None:
    store = tmp_path / "r.duckdb"
    store.write_text("not a database")  # refused when the evaluated run is recorded
    result = retrieval(store, ANSWER_SH)
    assert result.exit_code == ExitCode.STORE, result.output
    assert len(listed(program_env)) == 1  # the program was started and asked
    assert none_left(listed(program_env)) == []


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_run_that_ends_leaves_no_program(tmp_path: Path, program_env: Path) -> None:
    result = retrieval(tmp_path / "r.duckdb", ANSWER_SH, "--workers", "2")
    assert result.exit_code == ExitCode.OK, result.output
    assert listed(program_env)
    assert none_left(listed(program_env)) == []


# ------------------------------------------------------------------ options and provenance


def test_the_pipeline_identity_is_the_command_and_a_digest_of_the_files_it_names(
    tmp_path: Path, program_env: Path
) -> None:
    script = tmp_path / "search.sh"
    shutil.copy(PROGRAMS / "answer.sh", script)
    with command_retriever(f"sh {script}", corpus_revision="idx-4") as retriever:
        before = retriever.provenance()
    script.write_text(script.read_text() + "\n# edited\n")
    with command_retriever(f"sh {script}") as retriever:
        after = retriever.provenance()
    assert before.pipeline_identity is not None and after.pipeline_identity is not None
    assert before.pipeline_identity.startswith(f"goldeneval.command/sh {script} files:sha256:")
    assert before.pipeline_identity != after.pipeline_identity
    assert (before.corpus_revision, before.model_revision, after.corpus_revision) == ("idx-4", None, None)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        pytest.param(
            {},
            "retriever 'goldeneval.command' needs option command=..., e.g. --option command=\"php search.php\"",
            id="no-command",
        ),
        pytest.param(
            {"command": "no-such-program-here --index x"},
            "retriever 'goldeneval.command': option 'command': 'no-such-program-here' is not found on PATH",
            id="not-on-path",
        ),
        pytest.param(
            {"command": "./nowhere/search"},
            "retriever 'goldeneval.command': option 'command': ./nowhere/search is not an executable file",
            id="not-a-file",
        ),
        pytest.param(
            {"command": "php 'search.php"},
            "retriever 'goldeneval.command': option 'command': cannot split \"php 'search.php\": No closing quotation",
            id="unbalanced-quote",
        ),
        pytest.param(
            {"command": "sh search.sh --api-key=abc123"},
            "retriever 'goldeneval.command': option 'command': looks like a secret (a key=/token= pair); the "
            "program inherits goldeneval's environment: let it read the secret from an environment variable",
            id="secret",
        ),
        pytest.param(
            {"command": "sh x", "processes": "0"},
            "retriever 'goldeneval.command': option 'processes': must be at least 1, got 0",
            id="processes-0",
        ),
        pytest.param(
            {"command": "sh x", "workers": "2"},
            "retriever 'goldeneval.command': unknown option(s) workers "
            "(known: command, corpus_revision, model_revision, processes, timeout_s)",
            id="unknown",
        ),
    ],
)
def test_a_bad_option_is_refused_before_a_program_starts(options: dict[str, str], message: str) -> None:
    with pytest.raises(RetrieverError) as raised:
        build_retriever("goldeneval.command", RetrieverContext(corpus=None, cache_dir=Path("unused"), options=options))
    assert str(raised.value) == message
