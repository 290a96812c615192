"""People check the graders (issue 42): the judging page takes answer judgments.

``goldeneval judgments judge-answers RUN --out FILE`` shows a stored run's answers (question,
reference, answer, the passages it answered from) and appends each verdict to an answer
judgments file that ``goldeneval judgments answer-stats`` reads.  Driven here through a real
server in a child process and real HTTP requests, in-process for the details, and once in a
real browser."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from goldeneval.cli import main
from goldeneval.judgments.answer_judgments import read_answer_judgments
from goldeneval.judgments.page import answer_judging_app
from goldeneval.judgments.page_answers import load_answer_review
from goldeneval.store import open_store
from tests.chat_server import answer, chat_server
from tests.chromium import Page, headless_chromium, require_chromium
from tests.test_answers_judge_measures import ANSWERS, FARES, GISTS, _workspace
from tests.test_judgments_page import _free_port, _press


def _stored_run(tmp_path: Path, *extra: str) -> str:
    """An answer run of two questions, stored in ``tmp_path/s.duckdb``: its id."""
    question = {"What does a day ticket cost?": "fare", "When does the first Saturday ferry leave?": "ferry"}
    with chat_server(default=lambda body: answer(ANSWERS[body["messages"][-1]["content"].rsplit("Question: ", 1)[-1]]))\
            as server:  # fmt: skip
        args = ["answers", "--set", str(_workspace(tmp_path)), "--retriever", "goldeneval.lexical"]
        args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
        args += ["--model-option", "model=m", "--store", str(tmp_path / "s.duckdb"), "--format", "json"]
        result = CliRunner().invoke(main, [*args, "--cache-dir", str(tmp_path / "c"), "--no-progress", *extra])
    assert result.exit_code in (0, 1), result.output
    assert set(question.values()) == {p["id"] for p in json.loads(result.stdout)["answers"]["prompts"]}
    run_id: str = json.loads(result.stdout)["answers"]["run"]["id"]
    return run_id


@contextlib.contextmanager
def _serving(tmp_path: Path, run_id: str, out: Path) -> Iterator[str]:
    port = _free_port()
    command = [sys.executable, "-m", "goldeneval.cli", "judgments", "judge-answers", run_id[:10], "--out", str(out)]
    command += ["--set", str(tmp_path / "transit-mini.yaml"), "--store", str(tmp_path / "s.duckdb")]
    command += ["--assessor", "ann", "--port", str(port)]
    log = (tmp_path / "page.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url, timeout=5):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the page did not start: {(tmp_path / 'page.log').read_text()}") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)
        log.close()


def _get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as reply:
        return json.loads(reply.read())


def _post(url: str, body: dict[str, Any]) -> tuple[int, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


@pytest.mark.slow
def test_verdicts_given_through_the_page_are_read_by_answer_stats(tmp_path: Path) -> None:
    run_id = _stored_run(tmp_path)
    out = tmp_path / "answers.jsonl"
    with _serving(tmp_path, run_id, out) as url:
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert "goldeneval judge answers" in reply.read().decode()
        state = _get(url + "api/answers/state")
        assert (state["run"], state["withheld"], state["judged"]) == (run_id, None, 0)
        assert [a[0] for a in state["answers"]] == ["fare", "ferry"]
        shown = _get(url + "api/answers/item?index=0")
        assert shown["question"] == "What does a day ticket cost?" and shown["reference"] == GISTS["fare"]
        assert shown["answer"] == ANSWERS["What does a day ticket cost?"]
        assert FARES in [p["text"] for p in shown["passages"]] and "verdict" in shown
        assert _post(url + "api/answers/verdicts", {"question": "fare", "verdict": "maybe"})[0] == 400
        assert _post(url + "api/answers/verdicts", {"question": "nope", "verdict": "correct"})[0] == 400
        assert _post(url + "api/answers/verdicts", {"question": "fare", "verdict": "incorrect"})[0] == 200
        assert _post(url + "api/answers/verdicts", {"question": "fare", "verdict": "correct"})[0] == 200
        assert _post(url + "api/answers/verdicts", {"question": "ferry", "verdict": "correct"})[0] == 200
        assert _get(url + "api/answers/item?index=0")["verdict"] == "correct"
    # the file is exactly what answer_judgments reads: the later verdict on fare wins
    judged = read_answer_judgments(out)
    assert sorted((j.run, j.question, j.verdict, j.assessor) for j in judged) == [
        (run_id, "fare", "correct", "ann"),
        (run_id, "ferry", "correct", "ann"),
    ]
    assert all(j.judged_at for j in judged)
    stats = CliRunner().invoke(
        main, ["judgments", "answer-stats", str(out), "--store", str(tmp_path / "s.duckdb"), "--format", "json"]
    )
    assert stats.exit_code == 0, stats.output
    (agreement,) = json.loads(stats.stdout)["agreements"]
    assert (agreement["run"], agreement["assessor"], agreement["grader"]) == (run_id, "ann", "answer_deterministic")
    assert agreement["pairs"] == 2


def test_a_reopened_page_shows_this_assessors_verdicts_and_a_bad_file_is_refused(tmp_path: Path) -> None:
    run_id = _stored_run(tmp_path)
    run = open_store(tmp_path / "s.duckdb").get_run(run_id)
    assert run is not None
    review = load_answer_review(run, str(tmp_path / "transit-mini.yaml"))
    out = tmp_path / "answers.jsonl"
    client = TestClient(answer_judging_app(review, out, "ann"), base_url="http://127.0.0.1")
    assert client.post("/api/answers/verdicts", json={"question": "ferry", "verdict": "abstained"}).status_code == 200
    assert client.post("/api/answers/verdicts", content=b"{}").status_code == 415  # not sent as JSON
    other = TestClient(client.app, base_url="http://attacker.example")
    assert other.post("/api/answers/verdicts", json={"question": "fare", "verdict": "correct"}).status_code == 400
    again = TestClient(answer_judging_app(review, out, "ann"), base_url="http://127.0.0.1")
    assert again.get("/api/answers/state").json()["answers"] == [["fare", None], ["ferry", "abstained"]]
    bob = TestClient(answer_judging_app(review, out, "bob"), base_url="http://127.0.0.1")
    assert bob.get("/api/answers/state").json()["judged"] == 0
    out.write_text('{"run": "r"}\n')
    from goldeneval.core.errors import InputError

    with pytest.raises(InputError, match=r"answers.jsonl:1: field 'question'"):
        answer_judging_app(review, out, "ann")


def test_a_metadata_only_run_has_nothing_to_show_and_the_page_says_so(tmp_path: Path) -> None:
    run_id = _stored_run(tmp_path, "--privacy", "metadata_only")
    run = open_store(tmp_path / "s.duckdb").get_run(run_id)
    assert run is not None
    app = answer_judging_app(load_answer_review(run, None), tmp_path / "a.jsonl", "ann")
    client = TestClient(app, base_url="http://127.0.0.1")
    state = client.get("/api/answers/state").json()
    assert state["answers"] == [] and state["privacy"] == "metadata_only"
    assert state["withheld"].startswith(f"run {run_id} was stored with metadata_only privacy: it keeps no answer")
    assert client.get("/api/answers/item?index=0").status_code == 404
    refused = client.post("/api/answers/verdicts", json={"question": "fare", "verdict": "correct"})
    assert refused.status_code == 400 and "nothing to judge" in refused.json()["error"]
    assert not (tmp_path / "a.jsonl").exists()
    assert 'id="withheld"' in client.get("/").text


def test_a_set_that_is_not_the_runs_is_refused(tmp_path: Path) -> None:
    run_id = _stored_run(tmp_path)
    run = open_store(tmp_path / "s.duckdb").get_run(run_id)
    assert run is not None
    from goldeneval.core.errors import InputError

    with pytest.raises(InputError, match=r"but run .* is of set 'transit-mini'"):
        load_answer_review(run, "transit-sample")


@pytest.mark.e2e
@pytest.mark.slow
def test_verdicts_given_by_keyboard_in_a_browser(tmp_path: Path) -> None:
    require_chromium()
    run_id = _stored_run(tmp_path)
    out = tmp_path / "answers.jsonl"
    with _serving(tmp_path, run_id, out) as url, headless_chromium(tmp_path / "chromium") as page:
        browser: Page = page
        browser.open(url)
        browser.wait_for_text("0 of 2 judged", "What does a day ticket cost?", "passages the model answered from")
        _press(browser, "c")
        browser.wait_for_text("1 of 2 judged", "When does the first Saturday ferry leave?")
        _press(browser, "i")
        browser.wait_for_text("2 of 2 judged")
        for kind in ("keyDown", "keyUp"):  # back to the first answer, judged again: abstained
            browser.call("Input.dispatchKeyEvent", type=kind, key="ArrowLeft", code="ArrowLeft",
                         windowsVirtualKeyCode=37)  # fmt: skip
        browser.wait_for_text("What does a day ticket cost?")
        _press(browser, "a")
        deadline = time.monotonic() + 30
        while len(out.read_text().splitlines()) < 3 and time.monotonic() < deadline:
            time.sleep(0.1)
    assert sorted((j.question, j.verdict) for j in read_answer_judgments(out)) == [
        ("fare", "abstained"),
        ("ferry", "incorrect"),
    ]
