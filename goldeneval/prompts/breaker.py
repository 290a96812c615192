"""The circuit breaker of model calls (issue 24): a dead endpoint is not called for every prompt.

Without it, a server that answers every request with HTTP 500 costs each remaining prompt its
full retry budget (``max_retries`` attempts with backoff) before it is recorded as an error,
and an hour-long run is an hour of calls that cannot succeed.  After ``threshold``
consecutive failed calls (each after its own retries; a timeout is a failure) the breaker
opens: the rest of the run's calls to that endpoint are not made, and each of those prompts is
an error that says why in one line.  A success resets the count.  It stays open for the rest
of the run (a run is a measurement, not a service that should recover mid-way); the next run
starts closed.  ``threshold`` 0 turns it off.
"""

from __future__ import annotations

import threading

from goldeneval.core.errors import one_line
from goldeneval.prompts.models import ModelError

__all__ = ["DEFAULT_MAX_CONSECUTIVE_FAILURES", "CircuitBreaker", "CircuitOpen"]

DEFAULT_MAX_CONSECUTIVE_FAILURES = 5


class CircuitOpen(ModelError):
    """The call was not made: the endpoint failed too often in a row."""


class CircuitBreaker:
    """Counts consecutive failures of one endpoint (thread-safe)."""

    def __init__(self, threshold: int, endpoint: str) -> None:
        self.threshold = threshold
        self.endpoint = endpoint
        self._lock = threading.Lock()
        self._consecutive = 0
        self._last: str | None = None
        self.refused = 0
        """Calls not made because the breaker was open."""

    @property
    def open(self) -> bool:
        with self._lock:
            return self._is_open()

    def _is_open(self) -> bool:
        return self.threshold > 0 and self._consecutive >= self.threshold

    def before_call(self) -> None:
        """Raise :class:`CircuitOpen` instead of calling an endpoint that keeps failing."""
        with self._lock:
            if not self._is_open():
                return
            self.refused += 1
            raise CircuitOpen(self._reason())

    def _reason(self) -> str:
        return (
            f"not called: {self.endpoint} failed {self._consecutive} times in a row (last: {self._last}); "
            f"the circuit breaker stops calling it for the rest of the run (--max-consecutive-failures)"
        )

    def failure(self, exc: BaseException) -> None:
        with self._lock:
            self._consecutive += 1
            self._last = one_line(str(exc), 120) or type(exc).__name__

    def success(self) -> None:
        with self._lock:
            self._consecutive = 0

    def describe(self) -> str | None:
        """One line for the run output when the breaker opened, else None."""
        with self._lock:
            if not self._is_open():
                return None
            return (
                f"circuit breaker: {self.endpoint} failed {self._consecutive} times in a row (last: {self._last}); "
                f"{self.refused} call{'s' if self.refused != 1 else ''} not made"
            )
