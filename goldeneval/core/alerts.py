"""Alerts: what a failed check tells people, as JSON for a webhook and as one line of text.

The payload names the set, the retriever, the rates, the verdict and a link to the run.
It never holds question text or document ids, in either privacy mode.  Posting uses the
standard library; a failed delivery raises :class:`AlertDeliveryError`, so the caller can
retry it later instead of losing it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from goldeneval.core.errors import GoldenEvalError

__all__ = ["ALERT_FORMAT_VERSION", "Alert", "AlertDeliveryError", "post_json"]

ALERT_FORMAT_VERSION = 1


class AlertDeliveryError(GoldenEvalError):
    """The alert could not be delivered (network error or a non-2xx answer)."""


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@dataclass(frozen=True)
class Alert:
    """One failed check of one (set, retriever) evaluation."""

    check: str
    asset: str
    set_id: str
    retriever: str
    top1_hit_rate: float | None
    top3_hit_rate: float | None
    verdict: str
    reason: str
    run_id: str
    run_url: str
    severity: str = "ERROR"
    stored_run_id: str | None = None
    state: str | None = None
    """The comparison state (baseline, comparable, mismatch, unknown) of a regression check."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format_version": ALERT_FORMAT_VERSION,
            "check": self.check,
            "asset": self.asset,
            "severity": self.severity,
            "set": self.set_id,
            "retriever": self.retriever,
            "rates": {"top1_hit_rate": self.top1_hit_rate, "top3_hit_rate": self.top3_hit_rate},
            "verdict": {"status": self.verdict, "state": self.state, "reason": self.reason},
            "stored_run_id": self.stored_run_id,
            "run_id": self.run_id,
            "run_url": self.run_url,
            **dict(self.extra),
        }

    def text(self) -> str:
        """One line for chat: what failed, where, the verdict (a mismatch or unknown state names
        itself), the rates, and the link."""
        return (
            f"goldeneval {self.severity}: check {self.check} failed for set {self.set_id!r} x "
            f"retriever {self.retriever!r}: {self.verdict}: {self.reason} "
            f"(top-1 {_rate(self.top1_hit_rate)}, top-3 {_rate(self.top3_hit_rate)}) {self.run_url}"
        )


def post_json(url: str, payload: Mapping[str, Any], timeout_s: float = 10.0) -> int:
    """POST ``payload`` as JSON; returns the HTTP status, raises on failure."""
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode("utf-8"),
        headers={"Content-Type": "application/json", "User-Agent": "goldeneval-alerts"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            status = int(response.status)
    except urllib.error.HTTPError as exc:
        raise AlertDeliveryError(f"alert webhook answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise AlertDeliveryError(f"alert webhook unreachable: {reason}") from None
    if not 200 <= status < 300:
        raise AlertDeliveryError(f"alert webhook answered HTTP {status}")
    return status
