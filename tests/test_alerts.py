"""Alert payloads and their delivery to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket

import pytest

from goldeneval.core.alerts import ALERT_FORMAT_VERSION, Alert, AlertDeliveryError, AlertRate, post_json
from tests.dagster_support import webhook_server

ALERT = Alert(
    check="no_regression",
    asset="regression_check",
    kind="retrieval",
    set_id="s",
    series_dimension="retriever",
    series="bm25",
    rates=(AlertRate("top1_hit_rate", "top-1", 0.5), AlertRate("top3_hit_rate", "top-3", None)),
    verdict="regression",
    reason="top-1 hit rate fell 0.700 -> 0.500",
    run_id="abc",
    run_url="http://ui/runs/abc",
    state="comparable",
)


def test_the_payload_names_set_retriever_rates_verdict_and_link() -> None:
    payload = ALERT.to_dict()
    assert payload["format_version"] == ALERT_FORMAT_VERSION == 2
    assert (payload["kind"], payload["series"]) == ("retrieval", {"dimension": "retriever", "name": "bm25"})
    assert (payload["set"], payload["retriever"], payload["run_url"]) == ("s", "bm25", "http://ui/runs/abc")
    assert payload["rates"] == {"top1_hit_rate": 0.5, "top3_hit_rate": None}
    assert payload["rate_names"] == {"top1_hit_rate": "top-1", "top3_hit_rate": "top-3"}
    assert payload["verdict"] == {
        "status": "regression",
        "state": "comparable",
        "reason": "top-1 hit rate fell 0.700 -> 0.500",
    }


def test_the_chat_line_reads_as_one_sentence() -> None:
    assert ALERT.text() == (
        "goldeneval ERROR: check no_regression failed for set 's' x retriever 'bm25': regression: "
        "top-1 hit rate fell 0.700 -> 0.500 (top-1 0.500, top-3 n/a) http://ui/runs/abc"
    )


PROMPT_ALERT = Alert(
    check="no_regression",
    asset="prompt_regression_check",
    kind="prompts",
    set_id="tiny",
    set_dimension="prompt_set",
    series_dimension="model",
    series="scripted",
    rates=(AlertRate("pass_rate", "pass rate", 0.6), AlertRate("mean_score", "mean score", 0.71)),
    verdict="regression",
    reason="pass rate fell 0.800 -> 0.600",
    run_id="def",
    run_url="http://ui/runs/def",
    state="comparable",
)


def test_a_prompt_runs_alert_names_its_model_and_its_own_rates() -> None:
    assert PROMPT_ALERT.text() == (
        "goldeneval ERROR: check no_regression failed for prompt set 'tiny' x model 'scripted': regression: "
        "pass rate fell 0.800 -> 0.600 (pass rate 0.600, mean score 0.710) http://ui/runs/def"
    )
    payload = PROMPT_ALERT.to_dict()
    assert list(payload)[:8] == ["format_version", "kind", "check", "asset", "severity", "set", "model", "series"]
    assert (payload["kind"], payload["set"], payload["model"]) == ("prompts", "tiny", "scripted")
    assert payload["rates"] == {"pass_rate": 0.6, "mean_score": 0.71}
    assert payload["rate_names"] == {"pass_rate": "pass rate", "mean_score": "mean score"}
    assert "retriever" not in payload and "top1_hit_rate" not in payload["rates"]


def test_a_series_dimension_named_like_a_payload_key_is_under_series_only() -> None:
    odd = Alert(
        check="run_complete",
        asset="odd_summary",
        kind="odd",
        set_id="s",
        series_dimension="check",
        series="x",
        rates=(),
        verdict="incomplete",
        reason="1 of 2 items failed",
        run_id="r",
        run_url="http://ui/runs/r",
    )
    payload = odd.to_dict()
    assert (payload["check"], payload["series"]) == ("run_complete", {"dimension": "check", "name": "x"})
    assert odd.text() == (
        "goldeneval ERROR: check run_complete failed for set 's' x check 'x': incomplete: 1 of 2 items failed "
        "http://ui/runs/r"
    )


def test_a_delivered_alert_arrives_as_json() -> None:
    with webhook_server() as hook:
        assert post_json(hook.url, ALERT.to_dict()) == 200
        assert hook.received == [ALERT.to_dict()]


def test_an_error_answer_raises_with_the_status() -> None:
    with webhook_server() as hook:
        hook.fail_next = 1
        with pytest.raises(AlertDeliveryError, match="alert webhook answered HTTP 500"):
            post_json(hook.url, ALERT.to_dict())


def test_an_unreachable_webhook_raises() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(AlertDeliveryError, match="alert webhook unreachable"):
        post_json(f"http://127.0.0.1:{port}/hook", {}, timeout_s=5)
