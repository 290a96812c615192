"""Token usage and cost (issue 24): the ``usage`` a server reports is added up per run and, with
prices declared per model, priced; the run output shows it.  A server that reports nothing
leaves usage unknown, never zero."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.prompts.calls import ManagedModel
from goldeneval.prompts.models import ChatMessage, ChatRequest, ModelContext, build_model
from goldeneval.prompts.openai_chat import OpenAIChatModel
from goldeneval.prompts.usage import Prices
from tests.chat_server import Reply, answer, chat_server
from tests.test_answers_calls_cache import reply_with_usage

PROMPTS = [
    {"id": f"p{n}", "prompt": f"Question {n}?", "assertions": [{"type": "contains", "value": "ok"}]} for n in range(3)
]
REQUEST = ChatRequest(messages=(ChatMessage("user", "hi"),), question="hi")


def _run(tmp_path: Path, base_url: str, *extra: str) -> Result:
    set_path = tmp_path / "three.yaml"
    set_path.write_text(yaml.safe_dump({"id": "three", "prompts": PROMPTS}))
    args = ["prompts", "--set", str(set_path), "--model", "goldeneval.openai"]
    args += ["--model-option", f"base_url={base_url}", "--model-option", "model=tiny"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    return CliRunner().invoke(main, [*args, *extra])


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_reported_usage_and_its_cost_are_shown_with_the_run(tmp_path: Path) -> None:
    replies = [reply_with_usage("ok", 1000, 200), reply_with_usage("ok", 2000, 300), reply_with_usage("ok", 500, 100)]
    with chat_server(*replies) as server:
        result = _run(tmp_path, server.base_url, "--model-option", "input_price=0.15",
                      "--model-option", "output_price=0.6")  # fmt: skip
    assert result.exit_code == 0, result.output
    # 3500 * 0.15 / 1e6 + 600 * 0.6 / 1e6 = 0.000525 + 0.00036
    assert (
        "goldeneval: notice: model calls: 3 calls sent; 3500 prompt + 600 completion tokens; cost 0.000885"
        in result.stderr
    )


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_server_without_usage_leaves_it_unknown(tmp_path: Path) -> None:
    with chat_server(default=lambda body: answer("ok")) as server:
        result = _run(tmp_path, server.base_url, "--model-option", "input_price=1", "--model-option", "output_price=1")
    assert result.exit_code == 0, result.output
    assert "goldeneval: notice: model calls: 3 calls sent; usage not reported by the server" in result.stderr
    assert "cost" not in result.stderr


def _managed(base_url: str, **options: str) -> ManagedModel:
    inner = build_model(ModelContext("goldeneval.openai", {"base_url": base_url, "model": "tiny", **options}))
    assert isinstance(inner, OpenAIChatModel)
    return ManagedModel(inner, inner.provenance(), model_id="goldeneval.openai", cache_dir=None,
                        max_consecutive_failures=5)  # fmt: skip


@pytest.mark.parametrize(
    "usage",
    [None, "lots", {"prompt_tokens": "3", "completion_tokens": 1}, {"prompt_tokens": -1, "completion_tokens": 1},
     {"prompt_tokens": True, "completion_tokens": 1}],
    ids=["absent", "not-an-object", "text", "negative", "boolean"],
)  # fmt: skip
def test_malformed_usage_never_fails_the_call_and_counts_as_unreported(usage: Any) -> None:
    document: dict[str, Any] = {"choices": [{"message": {"content": "ok"}}]}
    if usage is not None:
        document["usage"] = usage
    with chat_server(Reply(200, json.dumps(document).encode()), reply_with_usage("ok", 7, 2)) as server:
        model = _managed(server.base_url)
        assert model.complete(REQUEST) == "ok"
        assert model.complete(REQUEST) == "ok"
    totals = model.totals()
    assert (totals.calls, totals.reported, totals.prompt_tokens, totals.completion_tokens) == (2, 1, 7, 2)
    assert totals.to_json()["total_tokens"] == 9
    assert "7 prompt + 2 completion tokens (reported by 1 of 2 calls)" in totals.describe()


def test_prices_are_per_model_options_and_both_are_needed(tmp_path: Path) -> None:
    with chat_server() as server:
        model = _managed(server.base_url, input_price="2.5", output_price="10")
        assert model.meter.prices == Prices(2.5, 10.0)
    result = CliRunner().invoke(
        main,
        ["prompts", "--set", "goldeneval.smoke", "--model", "goldeneval.openai", "--model-option",
         "base_url=http://127.0.0.1:9/v1", "--model-option", "model=m", "--model-option", "input_price=1",
         "--store", str(tmp_path / "s.duckdb"), "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 3
    assert result.stderr.strip().endswith(
        "model 'goldeneval.openai': option 'input_price': needs 'output_price' too (prices per million tokens)"
    )
    assert "Traceback" not in result.output
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_usage_and_cost_are_stored_with_the_run_and_in_the_json(tmp_path: Path) -> None:
    """Shown is not enough (the hostile review): the details and ``--format json`` hold them."""
    replies = [reply_with_usage("ok", 1000, 200), reply_with_usage("ok", 2000, 300), reply_with_usage("ok", 500, 100)]
    with chat_server(*replies) as server:
        result = _run(tmp_path, server.base_url, "--model-option", "input_price=0.15",
                      "--model-option", "output_price=0.6", "--format", "json")  # fmt: skip
    assert result.exit_code == 0, result.output
    expected = {
        "calls": 3, "cached": 0, "reported": 3, "prompt_tokens": 3500, "completion_tokens": 600,
        "total_tokens": 4100, "cost": pytest.approx(0.000885),
    }  # fmt: skip
    assert json.loads(result.stdout)["usage"] == {"model": expected}
    from goldeneval.store import open_store
    from goldeneval.store.location import StoreLocation

    store = open_store(StoreLocation.parse(tmp_path / "s.duckdb"))
    (listed,) = store.list_runs()
    stored = store.get_run(listed.id)
    assert stored is not None
    details = json.loads(stored.details_json or "{}")
    assert details["usage"] == {"model": expected}
