"""Regular expressions that cannot hang a run (issue 24): one engine, one time bound.

Python's ``re`` backtracks without limit and holds the GIL while it does, so one catastrophic
pattern in a prompt set (``(a|aa)+$`` on a long run of ``a``) stops the whole run — no
timeout can even fire.  Assertions therefore run on the ``regex`` package (``VERSION0``: the
syntax of ``re``), which avoids much of the backtracking ``re`` does (``(a+)+$`` ends at once)
and, for what remains, takes a ``timeout=`` that ends the match and releases the GIL while it
runs (``concurrent=True``), so the run's own timeout can fire too.

The bound comes from the run's per-prompt ``--timeout``: :func:`time_bound` sets it for the
grading of one prompt (``goldeneval.prompts.pipeline`` wraps every grader in it), and
:func:`search` uses what is left of it, or :data:`DEFAULT_BOUND_S` outside a run.  A pattern
that runs past it raises :class:`RegexTimeout`, which the evaluator records as that prompt's
grading error.  Patterns are validated at load time by :func:`check_pattern` with the same
engine, so what loads is what runs.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

import regex  # type: ignore[import-untyped]  # no stubs pinned (types-regex would do)

from goldeneval.core.errors import one_line

__all__ = ["DEFAULT_BOUND_S", "RegexTimeout", "check_pattern", "search", "time_bound"]

DEFAULT_BOUND_S = 10.0
"""The bound of a match outside a run with a timeout (a library call, ``--timeout`` unset)."""

_DEADLINE: ContextVar[tuple[float, float] | None] = ContextVar("goldeneval_regex_deadline", default=None)
"""``(monotonic deadline, the bound in seconds)`` of the grading under way in this context."""


class RegexTimeout(TimeoutError):
    """A regular expression ran past its time bound: the prompt's grading error, never a hang."""


def check_pattern(pattern: str) -> None:
    """Raise ``ValueError`` naming the problem when ``pattern`` does not compile."""
    try:
        regex.compile(pattern, regex.VERSION0)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise ValueError(one_line(str(exc), 160)) from None


@contextmanager
def time_bound(seconds: float | None) -> Iterator[None]:
    """Every :func:`search` in this context ends within ``seconds`` from now (None: the default)."""
    token = _DEADLINE.set(None if seconds is None else (time.monotonic() + seconds, seconds))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _remaining() -> tuple[float, float]:
    deadline = _DEADLINE.get()
    if deadline is None:
        return DEFAULT_BOUND_S, DEFAULT_BOUND_S
    at, bound = deadline
    return max(at - time.monotonic(), 0.0), bound


def search(pattern: str, text: str, *, case_sensitive: bool) -> Any:
    """The first match of ``pattern`` in ``text`` (``DOTALL``; ``IGNORECASE`` unless
    ``case_sensitive``) within the time bound; raises :class:`RegexTimeout` past it."""
    flags = regex.VERSION0 | regex.DOTALL | (0 if case_sensitive else regex.IGNORECASE)
    left, bound = _remaining()
    try:
        if left <= 0:
            raise TimeoutError
        return regex.search(pattern, text, flags, timeout=left, concurrent=True)
    except TimeoutError:
        raise RegexTimeout(
            f"timed out after {bound:g} s: regular expression {one_line(pattern, 60)!r} on an answer of "
            f"{len(text)} characters (catastrophic backtracking?)"
        ) from None
