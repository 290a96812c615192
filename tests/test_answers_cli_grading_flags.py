"""The grading flags of ``prompts`` and ``answers`` reach the graders (issue 24): a rubric for
the judge, unstable verdicts as errors, the abstention phrases, and ``--workers`` on ``answers``."""

from __future__ import annotations

import itertools
import json
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from tests.chat_server import Reply, answer, chat_server, verdict

HANG_GUARD_S = 60
"""How long a request waits for its peers at most, so that a run that asks one prompt at a time
fails instead of hanging; never a measure of speed (docs/testing.md)."""
PROMPTS = {
    "id": "flags-check",
    "prompts": [
        {"id": "p1", "prompt": "What does a day ticket cost?", "reference": "7.80"},
        {"id": "p2", "prompt": "Which zone is the airport in?", "reference": "zone C"},
    ],
}


def _prompt_set(tmp_path: Path) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / "prompts.yaml"
    path.write_text(yaml.safe_dump(PROMPTS), encoding="utf-8")
    return path


def _invoke(tmp_path: Path, base_url: str, *extra: str, command: str = "prompts") -> Result:
    args = [command, "--set", str(_prompt_set(tmp_path)), "--model", "goldeneval.openai"]
    args += ["--model-option", f"base_url={base_url}", "--model-option", "model=m"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    return CliRunner().invoke(main, [*args, *extra])


def test_a_rubric_or_a_judge_option_without_a_judge_model_is_a_usage_error(tmp_path: Path) -> None:
    for flag in (["--judge-rubric", "faithfulness"], ["--judge-option", "model=j"]):
        result = _invoke(tmp_path, "http://127.0.0.1:9", *flag)
        assert result.exit_code == 2, result.output
        assert f"{flag[0]} needs --judge-model" in result.output


def test_an_unknown_rubric_is_refused_by_click(tmp_path: Path) -> None:
    result = _invoke(tmp_path, "http://127.0.0.1:9", "--judge-model", "goldeneval.openai", "--judge-rubric", "vibes")
    assert result.exit_code == 2
    assert "'vibes' is not one of 'correctness', 'faithfulness', 'relevance'" in result.output


def _judged(tmp_path: Path, *extra: str) -> tuple[Result, list[dict[str, Any]]]:
    """p1 and p2 answered; the judge gives 0.2 then 0.9 for every prompt (samples straddle 0.5)."""
    judged: list[dict[str, Any]] = []

    def reply(body: dict[str, Any]) -> Reply:
        system = body["messages"][0]["content"]
        if "grade" in system.lower() or "judge" in system.lower():
            judged.append(body)
            return verdict(0.2 if len(judged) % 2 else 0.9)
        return answer("An answer.")

    with chat_server(default=reply) as server:
        judge = ["--judge-model", "goldeneval.openai", "--judge-option", f"base_url={server.base_url}"]
        judge += ["--judge-option", "model=j", "--grader", "llm_judge", "--judge-samples", "2"]
        result = _invoke(tmp_path, server.base_url, *judge, "--format", "json", *extra)
    return result, judged


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_unstable_verdicts_are_their_own_status_and_fail_on_unstable_makes_them_errors(tmp_path: Path) -> None:
    result, judged = _judged(tmp_path / "a")
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    assert [p["status"] for p in run["prompts"]] == ["unstable", "unstable"]
    assert len(judged) == 4
    result, _ = _judged(tmp_path / "b", "--fail-on-unstable")
    document = json.loads(result.stdout)
    assert [p["status"] for p in document["prompts"]] == ["error", "error"]
    assert document["run"]["status"] == "incomplete"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_rubric_flag_reaches_the_judge_and_names_the_grader(tmp_path: Path) -> None:
    result, judged = _judged(tmp_path, "--judge-rubric", "correctness", "--judge-samples", "1")
    assert result.exit_code == 0, result.output
    assert judged and all("correct" in body["messages"][0]["content"].lower() for body in judged)
    assert json.loads(result.stdout)["run"]["grader"] == "llm_judge:correctness"


@pytest.mark.slow  # two answers runs over the transit sample
def test_abstention_phrases_replace_the_defaults(tmp_path: Path) -> None:
    """On an answers run the model says "beyond me" to everything: no abstention by default,
    an over-abstention on answerable questions with ``--abstention-phrase 'beyond me'``."""

    def run(root: Path, *extra: str) -> dict[str, Any]:
        with chat_server(default=lambda body: answer("That is beyond me.")) as server:
            args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical"]
            args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
            args += ["--model-option", "model=m", "--store", str(root / "s.duckdb"), "--cache-dir", str(root / "c")]
            result = CliRunner().invoke(main, [*args, "--no-progress", "--format", "json", *extra])
        assert result.exit_code == 0, result.output
        overall: dict[str, Any] = json.loads(result.stdout)["answers"]["aggregates"]["overall"]
        return overall

    assert run(tmp_path / "default")["over_abstentions"] == 0
    assert run(tmp_path / "custom", "--abstention-phrase", "beyond me")["over_abstentions"] == 76


@pytest.mark.slow
def test_answers_asks_the_model_with_workers(tmp_path: Path) -> None:
    """With ``--workers 4`` the model is asked four prompts at once: the first four requests are
    answered only when all four are being served together (a barrier), which one prompt at a
    time never reaches; all 81 prompts are answered."""
    first_four = threading.Barrier(4)
    served = itertools.count()

    def reply(body: dict[str, Any]) -> Reply:
        wait = (lambda: first_four.wait(HANG_GUARD_S)) if next(served) < 4 else None
        return answer("An answer.", wait=wait)

    with chat_server(default=reply) as server:
        args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--workers", "4"]
        args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
        args += ["--model-option", "model=m", "--store", str(tmp_path / "s.duckdb"), "--no-progress"]
        args += ["--timeout", str(HANG_GUARD_S * 2)]
        result = CliRunner().invoke(main, [*args, "--cache-dir", str(tmp_path / "c"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["answers"]["prompts"]) == 81
    assert len(server.requests) == 81
