"""The circuit breaker (issue 24): after N consecutive failed calls the endpoint is not called
again in the run, and each prompt left is an error saying why in one line (a real server on
127.0.0.1 that always answers HTTP 500)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.prompts.calls import ManagedModel
from goldeneval.prompts.models import ChatMessage, ChatRequest, ModelContext, ModelError, build_model
from tests.chat_server import ChatServer, answer, chat_server, error

PROMPTS = [
    {"id": f"p{n}", "prompt": f"Question {n}?", "assertions": [{"type": "contains", "value": "x"}]} for n in range(8)
]


def _run(tmp_path: Path, server: ChatServer, *extra: str) -> Result:
    set_path = tmp_path / "eight.yaml"
    set_path.write_text(yaml.safe_dump({"id": "eight", "prompts": PROMPTS}))
    args = ["prompts", "--set", str(set_path), "--model", "goldeneval.openai"]
    args += ["--model-option", f"base_url={server.base_url}", "--model-option", "model=tiny"]
    args += ["--model-option", "backoff_s=0", "--store", str(tmp_path / "s.duckdb")]
    args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", "--format", "json", "--fail-on-regression"]
    return CliRunner().invoke(main, [*args, *extra])


def _always_500(body: dict[str, Any]) -> Any:
    return error(500, "backend down")


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_after_n_consecutive_failures_the_endpoint_is_not_called_and_the_rest_say_why(tmp_path: Path) -> None:
    with chat_server(default=_always_500) as server:
        result = _run(tmp_path, server, "--model-option", "max_retries=0", "--max-consecutive-failures", "3")
    assert result.exit_code == 4, result.output  # incomplete
    assert len(server.requests) == 3
    prompts = json.loads(result.stdout)["prompts"]
    assert [p["status"] for p in prompts] == ["error"] * 8
    assert all(p["error"].startswith("ModelError: HTTP 500 Internal Server Error") for p in prompts[:3])
    endpoint = server.base_url.removesuffix("/v1")
    for prompt in prompts[3:]:
        assert prompt["error"] == (
            f"CircuitOpen: not called: {endpoint} failed 3 times in a row (last: HTTP 500 Internal Server Error: "
            '{"error": {"message": "backend down"}} (after 1 attempt)); the circuit breaker stops calling it for '
            "the rest of the run (--max-consecutive-failures)"
        )
        assert "\n" not in prompt["error"]
    assert f"goldeneval: notice: model circuit breaker: {endpoint} failed 3 times in a row" in result.stderr
    assert "5 calls not made" in result.stderr


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_the_default_stops_after_five_failed_calls_each_with_its_retries(tmp_path: Path) -> None:
    with chat_server(default=_always_500) as server:
        result = _run(tmp_path, server)
    assert result.exit_code == 4, result.output
    assert len(server.requests) == 5 * 3  # five calls of three attempts (max_retries 2)


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_zero_turns_the_breaker_off(tmp_path: Path) -> None:
    with chat_server(default=_always_500) as server:
        result = _run(tmp_path, server, "--model-option", "max_retries=0", "--max-consecutive-failures", "0")
    assert result.exit_code == 4, result.output
    assert len(server.requests) == 8


def test_a_success_resets_the_count() -> None:
    request = ChatRequest(messages=(ChatMessage("user", "hi"),), question="hi")
    replies = [error(500), error(500), answer("ok"), error(500), error(500), answer("ok"), error(500)]
    with chat_server(*replies) as server:
        inner = build_model(
            ModelContext("goldeneval.openai", {"base_url": server.base_url, "model": "tiny", "max_retries": "0"})
        )
        model = ManagedModel(inner, inner.provenance(), model_id="goldeneval.openai", cache_dir=None,  # type: ignore[attr-defined]
                             max_consecutive_failures=3)  # fmt: skip
        outcomes = []
        for _ in replies:
            try:
                outcomes.append(model.complete(request))
            except ModelError as exc:
                outcomes.append(type(exc).__name__)
    assert outcomes == ["ModelError", "ModelError", "ok", "ModelError", "ModelError", "ok", "ModelError"]
    assert len(server.requests) == 7
    assert not model.breaker.open


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_calls_past_the_timeout_trip_the_breaker_and_every_call_made_is_counted(tmp_path: Path) -> None:
    """A hostile review found ``--timeout`` expiries never counted by the breaker (the late answer
    was taken as a success) and ``0 calls sent`` against a server that got every failed call."""
    with chat_server(default=lambda body: answer("late", delay_s=2.0)) as server:
        result = _run(tmp_path, server, "--timeout", "0.3", "--max-consecutive-failures", "3")
    assert result.exit_code == 4, result.output
    prompts = json.loads(result.stdout)["prompts"]
    assert all("timed out after 0.3 s" in p["error"] for p in prompts[:3])
    assert all(p["error"].startswith("CircuitOpen: not called:") for p in prompts[3:])
    assert len(server.requests) == 3
    assert "model calls: 3 calls sent" in result.stderr
