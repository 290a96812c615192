"""goldeneval.openai against a real chat-completions server on 127.0.0.1: answers, retries on
429 and 5xx with backoff, errors that name their cause, the timeout, the API key, provenance."""

from __future__ import annotations

import pytest

from goldeneval.prompts.models import ChatMessage, ChatRequest, ModelConfigError, ModelContext, ModelError, build_model
from goldeneval.prompts.openai_chat import MUTABLE_ALIAS, OpenAIChatModel, build
from tests.chat_server import Reply, answer, chat_server, error

REQUEST = ChatRequest(messages=(ChatMessage("user", "Say hi"),), question="Say hi")


def _model(base_url: str, **options: str) -> OpenAIChatModel:
    return build(ModelContext("goldeneval.openai", {"base_url": base_url, "model": "tiny", **options}))


def test_a_scripted_answer_is_returned_and_the_request_speaks_chat_completions() -> None:
    with chat_server(answer("hello there")) as server:
        text = _model(server.base_url).complete(REQUEST)
    assert text == "hello there"
    assert server.paths == ["/v1/chat/completions"]
    assert server.requests[0] == {
        "model": "tiny",
        "messages": [{"role": "user", "content": "Say hi"}],
        "temperature": 0.0,
    }


def test_429_then_success_retries_after_the_servers_retry_after() -> None:
    waits: list[float] = []
    with chat_server(error(429, retry_after="0"), answer("ok")) as server:
        model = _model(server.base_url)
        model._sleep = waits.append
        assert model.complete(REQUEST) == "ok"
    assert len(server.requests) == 2
    assert waits == [0.0]


@pytest.mark.parametrize(
    ("retry_after", "wait"),
    [("Thu, 01 Jan 1970 00:00:00 GMT", 0.0), ("Fri, 31 Dec 9999 23:59:59 GMT", 30.0), ("soon", 0.5)],
    ids=["date-passed", "date-far-off-capped", "unreadable-backs-off"],
)
def test_a_retry_after_date_is_honoured_up_to_the_cap(retry_after: str, wait: float) -> None:
    waits: list[float] = []
    with chat_server(error(503, retry_after=retry_after), answer("ok")) as server:
        model = _model(server.base_url)
        model._sleep = waits.append
        assert model.complete(REQUEST) == "ok"
    assert waits == [wait]


def test_500s_are_retried_with_exponential_backoff_then_fail_naming_the_status() -> None:
    waits: list[float] = []
    with chat_server(error(500), error(502), error(503)) as server:
        model = _model(server.base_url, max_retries="2", backoff_s="0.25")
        model._sleep = waits.append
        with pytest.raises(
            ModelError, match=r"^HTTP 503 Service Unavailable: .*scripted failure.* \(after 3 attempts\)$"
        ):
            model.complete(REQUEST)
    assert waits == [0.25, 0.5]
    assert len(server.requests) == 3


def test_a_client_error_is_not_retried() -> None:
    with chat_server(error(400, "bad model")) as server, pytest.raises(ModelError, match=r"^HTTP 400 Bad Request"):
        _model(server.base_url).complete(REQUEST)
    assert len(server.requests) == 1


def test_a_slow_answer_past_the_timeout_is_an_error_and_is_not_retried() -> None:
    slow = (answer("late", delay_s=1.5), answer("late again", delay_s=1.5))
    with chat_server(*slow) as server, pytest.raises(ModelError, match=r"^timed out after 0.3 s$"):
        _model(server.base_url, timeout_s="0.3").complete(REQUEST)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"choices": []}', b'{"choices": [{"message": {"content": 7}}]}'],
    ids=["not-json", "no-choices", "content-not-text"],
)
def test_a_malformed_response_is_an_error_naming_it(body: bytes) -> None:
    with (
        chat_server(Reply(200, body)) as server,
        pytest.raises(ModelError, match="malformed chat-completions response"),
    ):
        _model(server.base_url).complete(REQUEST)


def test_the_api_key_comes_from_the_named_environment_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_LLM_KEY", "k-123")
    with chat_server(answer("a"), answer("b")) as server:
        _model(server.base_url, api_key_env="MY_LLM_KEY").complete(REQUEST)
        _model(server.base_url, api_key_env="UNSET_VARIABLE_FOR_TEST").complete(REQUEST)
    assert server.headers[0]["Authorization"] == "Bearer k-123"
    assert "Authorization" not in server.headers[1]


def test_without_a_declared_revision_the_model_is_recorded_as_a_mutable_alias() -> None:
    alias = _model("http://127.0.0.1:9/v1").provenance()
    pinned = _model("http://127.0.0.1:9/v1", revision="2024-06-01").provenance()
    assert alias.model_revision == "tiny" + MUTABLE_ALIAS
    assert pinned.model_revision == "tiny@2024-06-01"
    assert alias.pipeline_identity == "goldeneval.openai/chat-completions(http://127.0.0.1:9,temperature=0)"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "option 'base_url' and 'model' required"),
        ({"base_url": "ftp://x", "model": "m"}, "expected an http(s) URL"),
        ({"base_url": "http://u:p@host/v1", "model": "m"}, "holds credentials"),
        ({"base_url": "http://h/v1", "model": "m", "timeout_s": "nan"}, "must be a finite number"),
        ({"base_url": "http://h/v1", "model": "m", "colour": "red"}, "unknown option(s) 'colour'"),
    ],
    ids=["missing", "scheme", "credentials", "nan-timeout", "unknown-option"],
)
def test_bad_options_are_invalid_input(options: dict[str, str], message: str) -> None:
    with pytest.raises(ModelConfigError) as caught:
        build_model(ModelContext("goldeneval.openai", options))
    assert message in str(caught.value)
