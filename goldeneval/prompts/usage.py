"""Token usage and cost of a run's model calls (issue 24).

A chat-completions server may report ``usage`` (``prompt_tokens``, ``completion_tokens``) with
each answer; :class:`UsageMeter` adds up what the calls of one run reported, and with
:class:`Prices` declared for the model (``--model-option input_price=... output_price=...``,
per million tokens, in whatever currency the operator reads them in) their cost.  Calls
answered from the response cache spend no tokens: they are counted apart and cost nothing.
A server that reports no usage leaves the totals unknown, never zero.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

__all__ = ["Prices", "Usage", "UsageMeter", "UsageTotals", "parse_usage"]


@dataclass(frozen=True)
class Usage:
    """What one call reported."""

    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def to_json(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens}


def parse_usage(value: Any) -> Usage | None:
    """The ``usage`` object of a chat-completions answer, or None when absent or malformed: a
    server's odd bookkeeping never fails a call."""
    if not isinstance(value, dict):
        return None
    prompt, completion = value.get("prompt_tokens"), value.get("completion_tokens")
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (prompt, completion)):
        return None
    return Usage(int(prompt), int(completion))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Prices:
    """Price per million prompt (input) and completion (output) tokens."""

    input_per_million: float
    output_per_million: float

    def cost(self, usage: Usage) -> float:
        return (
            usage.prompt_tokens * self.input_per_million + usage.completion_tokens * self.output_per_million
        ) / 1_000_000


@dataclass(frozen=True)
class UsageTotals:
    """A run's calls: sent, answered from the cache, the tokens reported and their cost."""

    calls: int = 0
    """Calls that reached the model (each may have made several HTTP attempts)."""
    cached: int = 0
    """Calls answered from the response cache: no request, no tokens."""
    reported: int = 0
    """Sent calls whose answer reported usage."""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float | None = None
    """The cost of the reported tokens; None without prices or without reported usage."""

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def describe(self) -> str:
        """One line for the run output, e.g. ``3 calls (2 from the response cache); 120 prompt +
        40 completion tokens; cost 0.000123``."""
        parts = [f"{self.calls} call{'s' if self.calls != 1 else ''} sent"]
        if self.cached:
            parts[0] += f", {self.cached} answered from the response cache"
        if self.calls and not self.reported:
            parts.append("usage not reported by the server")
        elif self.reported:
            partial = f" (reported by {self.reported} of {self.calls} calls)" if self.reported < self.calls else ""
            parts.append(f"{self.prompt_tokens} prompt + {self.completion_tokens} completion tokens{partial}")
            if self.cost is not None:
                parts.append(f"cost {self.cost:.6g}")
        return "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "calls": self.calls,
            "cached": self.cached,
            "reported": self.reported,
            "prompt_tokens": self.prompt_tokens if self.reported else None,
            "completion_tokens": self.completion_tokens if self.reported else None,
            "total_tokens": self.total_tokens if self.reported else None,
            "cost": self.cost,
        }


class UsageMeter:
    """Adds up the calls of one run (thread-safe: calls may run in parallel)."""

    def __init__(self, prices: Prices | None = None) -> None:
        self.prices = prices
        self._lock = threading.Lock()
        self._calls = 0
        self._cached = 0
        self._reported = 0
        self._prompt = 0
        self._completion = 0

    def sent(self, usage: Usage | None) -> None:
        with self._lock:
            self._calls += 1
            if usage is not None:
                self._reported += 1
                self._prompt += usage.prompt_tokens
                self._completion += usage.completion_tokens

    def cache_hit(self) -> None:
        with self._lock:
            self._cached += 1

    def totals(self) -> UsageTotals:
        with self._lock:
            cost = None
            if self.prices is not None and self._reported:
                cost = self.prices.cost(Usage(self._prompt, self._completion))
            return UsageTotals(self._calls, self._cached, self._reported, self._prompt, self._completion, cost)
