"""Alert payloads and their delivery to a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import socket

import pytest

from goldeneval.core.alerts import Alert, AlertDeliveryError, post_json
from tests.dagster_support import webhook_server

ALERT = Alert(
    check="no_regression",
    asset="regression_check",
    set_id="s",
    retriever="bm25",
    top1_hit_rate=0.5,
    top3_hit_rate=None,
    verdict="regression",
    reason="top-1 hit rate fell 0.700 -> 0.500",
    run_id="abc",
    run_url="http://ui/runs/abc",
    state="comparable",
)


def test_the_payload_names_set_retriever_rates_verdict_and_link() -> None:
    payload = ALERT.to_dict()
    assert payload["format_version"] == 1
    assert (payload["set"], payload["retriever"], payload["run_url"]) == ("s", "bm25", "http://ui/runs/abc")
    assert payload["rates"] == {"top1_hit_rate": 0.5, "top3_hit_rate": None}
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
