"""A server's ``Retry-After`` header, and the error that carries it to a retry loop.

Both HTTP clients that retry (``goldeneval.openai`` and ``goldeneval.http``) read the header
here, so that they agree on what it means: delay-seconds or an HTTP date (RFC 9110, 10.2.3),
and anything else is no advice at all (the caller's own backoff applies).
"""

from __future__ import annotations

import email.utils
import math
from datetime import UTC, datetime

__all__ = ["RetryableError", "retry_after_s"]


class RetryableError(Exception):
    """A failure worth another attempt; ``retry_after_s`` is the wait the server asked for, if any."""

    def __init__(self, message: str, retry_after_s: float | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


def retry_after_s(value: str | None, cap: float = math.inf) -> float | None:
    """``Retry-After`` as seconds from now, clamped to ``[0, cap]``; None when the header is
    absent or unreadable.  A date in the past is 0 (retry now); a date without a zone is UTC,
    as HTTP dates are.  The default cap keeps a long wait visible, for a caller that refuses
    it rather than shortening it."""
    if value is None:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value.strip())
        except (TypeError, ValueError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - datetime.now(UTC)).total_seconds()
    return min(max(seconds, 0.0), cap) if math.isfinite(seconds) else None
