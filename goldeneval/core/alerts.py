"""Alerts: what a failed check tells people, as JSON for a webhook and as one line of text.

The payload names the kind of run, its set, its series (under the name of the kind's second
partition dimension: ``retriever``, ``model``, ...), its two rates under the names the kind
gives them, the verdict and a link to the run; it knows no kind.  It never holds question
text or document ids, in either privacy mode.  Posting uses the standard library; a failed
delivery raises :class:`AlertDeliveryError`, so the caller can retry it later instead of
losing it.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from goldeneval.core.errors import GoldenEvalError

__all__ = ["ALERT_FORMAT_VERSION", "Alert", "AlertDeliveryError", "AlertRate", "post_json"]

ALERT_FORMAT_VERSION = 2
"""2: the kind, the series as ``{"dimension", "name"}`` and the rates' names; format 1 named
retrieval's set, retriever and hit rates only."""


class AlertDeliveryError(GoldenEvalError):
    """The alert could not be delivered (network error or a non-2xx answer)."""


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


@dataclass(frozen=True)
class AlertRate:
    """One of the run's rates: its key (the check's metadata name, the JSON's ``rates`` key),
    what the kind calls it in a message, and its value (None: nothing was scored)."""

    key: str
    name: str
    value: float | None


@dataclass(frozen=True)
class Alert:
    """One failed check of one (set x series) evaluation of any kind of run."""

    check: str
    asset: str
    kind: str
    """The kind of run (``retrieval``, ``prompts``, a third kind's name)."""
    set_id: str
    series_dimension: str
    """The name of the kind's series dimension: ``retriever``, ``model``, ..."""
    series: str
    rates: tuple[AlertRate, ...]
    verdict: str
    reason: str
    run_id: str
    run_url: str
    severity: str = "ERROR"
    stored_run_id: str | None = None
    state: str | None = None
    """The comparison state (baseline, comparable, mismatch, unknown) of a regression check."""
    set_dimension: str = "set"
    """The name of the kind's set dimension (``set``, ``prompt_set``): words in :meth:`text`."""
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The JSON (:data:`ALERT_FORMAT_VERSION`).  The series is also under its dimension's
        name (``"retriever": "lexical"``, as format 1 had it), unless that name is one of the
        payload's own keys."""
        head = {
            "format_version": ALERT_FORMAT_VERSION,
            "kind": self.kind,
            "check": self.check,
            "asset": self.asset,
            "severity": self.severity,
            "set": self.set_id,
        }
        tail = {
            "series": {"dimension": self.series_dimension, "name": self.series},
            "rates": {rate.key: rate.value for rate in self.rates},
            "rate_names": {rate.key: rate.name for rate in self.rates},
            "verdict": {"status": self.verdict, "state": self.state, "reason": self.reason},
            "stored_run_id": self.stored_run_id,
            "run_id": self.run_id,
            "run_url": self.run_url,
            **dict(self.extra),
        }
        taken = self.series_dimension in head or self.series_dimension in tail
        return {**head, **({} if taken else {self.series_dimension: self.series}), **tail}

    def text(self) -> str:
        """One line for chat: what failed, where, the verdict (a mismatch or unknown state names
        itself), the kind's rates by its names for them, and the link."""
        rates = ", ".join(f"{rate.name} {_rate(rate.value)}" for rate in self.rates)
        return (
            f"goldeneval {self.severity}: check {self.check} failed for {_words(self.set_dimension)} {self.set_id!r} x "
            f"{_words(self.series_dimension)} {self.series!r}: {self.verdict}: {self.reason}"
            f"{f' ({rates})' if rates else ''} {self.run_url}"
        )


def _words(dimension: str) -> str:
    return dimension.replace("_", " ")


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
