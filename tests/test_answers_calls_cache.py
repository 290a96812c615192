"""The response cache of model calls (issue 24): a second run with a warm cache makes no request
(counted on a real chat-completions server on 127.0.0.1); ``--no-cache`` bypasses it; a
mutable alias, a temperature above 0 and ``metadata_only`` privacy are never cached; the cache
never holds the API key or the request."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.prompts.cache import ResponseCache
from tests.chat_server import ChatServer, Reply, chat_server, last_user_message

SECRET = "sk-test-0123456789abcdefghijklmnop"
PROMPTS = [
    {"id": "capital", "prompt": "Capital of France?", "assertions": [{"type": "contains", "value": "Paris"}]},
    {"id": "sum", "prompt": "2+2?", "assertions": [{"type": "regex", "value": r"\b4\b"}]},
    {"id": "river", "prompt": "River of Paris?", "assertions": [{"type": "contains-all", "values": ["Seine"]}]},
]
ANSWERS = {"Capital of France?": "It is Paris.", "2+2?": "4", "River of Paris?": "The Seine."}


def reply_with_usage(content: str, prompt_tokens: int = 10, completion_tokens: int = 3) -> Reply:
    document = {
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        },
    }
    return Reply(200, json.dumps(document).encode(), (("Content-Type", "application/json"),))


def _reply(body: dict[str, Any]) -> Reply:
    return reply_with_usage(ANSWERS.get(last_user_message(body), "I do not know."))


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache = root / "cache"
        self.set_path = root / "tiny.yaml"
        self.write(PROMPTS)

    def write(self, prompts: list[dict[str, Any]]) -> None:
        self.set_path.write_text(yaml.safe_dump({"id": "tiny", "prompts": prompts}))

    def run(self, server: ChatServer, *extra: str, revision: str | None = "2026-01-01") -> Result:
        args = ["prompts", "--set", str(self.set_path), "--model", "goldeneval.openai"]
        args += ["--model-option", f"base_url={server.base_url}", "--model-option", "model=tiny"]
        if revision is not None:
            args += ["--model-option", f"revision={revision}"]
        args += ["--store", str(self.root / "s.duckdb"), "--cache-dir", str(self.cache), "--no-progress"]
        return CliRunner().invoke(main, [*args, *extra])

    def cache_files(self) -> list[Path]:
        return sorted((self.cache / "responses").rglob("*.json")) if (self.cache / "responses").exists() else []


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_second_run_with_a_warm_cache_makes_no_request(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        first = workspace.run(server, "--format", "json")
        assert first.exit_code == 0, first.output
        assert len(server.requests) == 3
        second = workspace.run(server, "--format", "json", "--fail-on-regression")
        assert second.exit_code == 0, second.output
        assert len(server.requests) == 3  # not one more
    runs = [json.loads(r.stdout) for r in (first, second)]
    assert [p["answer"] for p in runs[0]["prompts"]] == [p["answer"] for p in runs[1]["prompts"]]
    assert [p["passed"] for p in runs[1]["prompts"]] == [True, True, True]
    assert "goldeneval: notice: model calls: 3 calls sent; 30 prompt + 9 completion tokens" in first.stderr
    assert "goldeneval: notice: model calls: 0 calls sent, 3 answered from the response cache" in second.stderr
    assert len(workspace.cache_files()) == 3


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_no_cache_calls_the_model_again(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        assert workspace.run(server).exit_code == 0
        result = workspace.run(server, "--no-cache")
        assert result.exit_code == 0, result.output
        assert len(server.requests) == 6
    assert "response cache off (--no-cache)" in result.stderr


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_changed_prompt_is_asked_and_the_unchanged_ones_are_not(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        assert workspace.run(server).exit_code == 0
        workspace.write([PROMPTS[0], PROMPTS[1], {**PROMPTS[2], "system": "Answer in one word."}])
        assert workspace.run(server).exit_code == 0
        assert len(server.requests) == 4
    assert server.requests[-1]["messages"][0] == {"role": "system", "content": "Answer in one word."}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_another_model_revision_is_another_key(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        assert workspace.run(server, revision="r1").exit_code == 0
        assert workspace.run(server, revision="r2").exit_code == 0
        assert len(server.requests) == 6


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_mutable_alias_is_never_cached(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        assert workspace.run(server, revision=None).exit_code == 0
        result = workspace.run(server, revision=None)
        assert len(server.requests) == 6
    assert "response cache off (the model name is a mutable alias; declare its revision to cache)" in result.stderr
    assert workspace.cache_files() == []


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_temperature_above_zero_is_not_cached_and_the_output_says_why(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        for _ in range(2):
            result = workspace.run(server, "--model-option", "temperature=0.7")
            assert result.exit_code == 0
        assert len(server.requests) == 6
    assert workspace.cache_files() == []
    assert "response cache off (temperature above 0: two calls may rightly differ)" in result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_writes_no_cache_entry(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        for _ in range(2):
            result = workspace.run(server, "--privacy", "metadata_only")
            assert result.exit_code == 0, result.output
        assert len(server.requests) == 6
    assert workspace.cache_files() == []
    assert "response cache off (metadata_only privacy persists no answer)" in result.stderr


def test_the_cache_holds_the_answer_never_the_api_key_nor_the_request(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with chat_server(default=_reply) as server:
        assert workspace.run(server).exit_code == 0
    assert server.headers[0]["Authorization"] == f"Bearer {SECRET}"
    stored = "\n".join(path.read_text() for path in workspace.cache_files())
    assert "It is Paris." in stored
    assert SECRET not in stored
    assert "Capital of France?" not in stored and "127.0.0.1" not in stored
    leftovers = [p for p in workspace.cache.rglob("*") if p.is_file() and p.name.startswith(".tmp-")]
    assert leftovers == []


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_unreadable_entry_is_asked_again_and_rewritten(workspace: Workspace) -> None:
    with chat_server(default=_reply) as server:
        assert workspace.run(server).exit_code == 0
        broken = workspace.cache_files()[0]
        broken.write_text("{not json")
        assert workspace.run(server).exit_code == 0
        assert len(server.requests) == 4
    assert json.loads(broken.read_text())["version"] == "responses-v1"
    assert ResponseCache(workspace.cache).get(broken.stem) is not None


def _judging(body: dict[str, Any]) -> Reply:
    if body["model"] == "judge":
        return reply_with_usage(json.dumps({"score": 0.9, "reason": "fine"}))
    return _reply(body)


def _judge_args(base_url: str, samples: int) -> list[str]:
    judge = ["--judge-option", f"base_url={base_url}", "--judge-option", "model=judge", "--judge-option", "revision=j1"]
    return ["--grader", "llm_judge", "--judge-model", "goldeneval.openai", *judge, "--judge-samples", str(samples)]


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_single_sample_judge_is_cached_and_several_samples_are_asked_anew(workspace: Workspace) -> None:
    with chat_server(default=_judging) as server:
        assert workspace.run(server, *_judge_args(server.base_url, 1)).exit_code == 0
        assert len(server.requests) == 6  # three answers, three verdicts
        second = workspace.run(server, *_judge_args(server.base_url, 1))
        assert second.exit_code == 0, second.output
        assert len(server.requests) == 6
        assert "goldeneval: notice: judge calls: 0 calls sent, 3 answered from the response cache" in second.stderr
        sampled = workspace.run(server, *_judge_args(server.base_url, 2))
        assert sampled.exit_code == 0, sampled.output
        assert len(server.requests) == 6 + 6  # answers cached, two verdicts per prompt asked
    assert "judge calls: 6 calls sent; " in sampled.stderr
    assert "response cache off (judge samples are asked anew)" in sampled.stderr
