"""What every kind's run specification validates alike: the series name and the timeout."""

from __future__ import annotations

import math

__all__ = ["MAX_SERIES_LENGTH", "MAX_TIMEOUT_S", "check_series_name", "check_timeout"]

MAX_SERIES_LENGTH = 200
MAX_TIMEOUT_S = 86400.0
"""A per-question timeout above a day is a typo, not a setting."""


def check_series_name(name: str) -> str:
    """A series name: 1 to 200 printable characters without whitespace (it keys the history)."""
    if not name or len(name) > MAX_SERIES_LENGTH or not name.isprintable() or any(c.isspace() for c in name):
        raise ValueError(f"series name {name!r}: use 1 to {MAX_SERIES_LENGTH} printable characters without whitespace")
    return name


def check_timeout(value: float | None) -> float | None:
    """A per-question timeout: None (no limit) or a finite number of seconds up to a day."""
    if value is not None and not (math.isfinite(value) and 0 < value <= MAX_TIMEOUT_S):
        raise ValueError(f"timeout must be a finite number of seconds in (0, {MAX_TIMEOUT_S:g}], got {value}")
    return value
