"""One call to a retriever: what it must return, how its failure reads, and where a round of
answers is kept (:class:`Answers`).

The rules every call is held to, whichever way :mod:`goldeneval.retrieval.asking` runs it
(inline, on a watched thread or on a pool, :mod:`goldeneval.retrieval.asking_threads`): a
ranking is an ordered iterable of string ids, cut at the limit (:func:`checked_ids`); an
error is its question's, worded as its class and first line (:func:`describe`).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from goldeneval.core.errors import one_line
from goldeneval.core.text_files import is_unicode_text
from goldeneval.retrieval.retrievers.base import Retriever

__all__ = ["UNORDERED", "Answers", "QuestionTimeout", "batch_method", "checked_ids", "describe"]


UNORDERED = (str, bytes, set, frozenset, Mapping)
"""What ``retrieve`` must not return: no ranking (a set's order changes from run to run)."""


@dataclass
class Answers:
    """What the retriever returned for each question, in question order (columns, not objects)."""

    returned: list[tuple[str, ...]]
    """The raw ranking of each question (empty for an errored question)."""
    errors: list[str | None]
    """The error of each question, or None."""
    latency_ms: list[float]


class QuestionTimeout(Exception):
    """A question's calls took longer than its timeout."""


def batch_method(retriever: Retriever) -> Callable[[Sequence[str], int], Any] | None:
    """The retriever's ``retrieve_batch`` method, when it has one."""
    method = getattr(retriever, "retrieve_batch", None)
    return method if callable(method) else None


def checked_ids(value: object, limit: int, method: str = "retrieve") -> tuple[str, ...]:
    """The first ``limit`` ids of a ranking, checked to be an ordered iterable of strings.

    Called once per question: a list or a tuple (what retrievers return) skips the abstract
    base class checks, a tuple no longer than ``limit`` is kept as it is, and the ids are
    checked to be strings by one C-level join (the loop below only names the culprit)."""
    exact = type(value) is tuple or type(value) is list
    if not exact and (isinstance(value, UNORDERED) or not isinstance(value, Iterable)):
        raise TypeError(f"{method}() must return ranked ids (a list, tuple or iterator), got {type(value).__name__}")
    cut = max(limit, 0)
    if isinstance(value, tuple) and exact and len(value) <= cut:
        ids: tuple[Any, ...] = value
    elif isinstance(value, (list, tuple)):
        ids = tuple(value[:cut])
    else:
        ids = tuple(itertools.islice(cast(Iterable[Any], value), cut))
    try:
        joined = "".join(ids)
    except TypeError:
        for item in ids:
            if not isinstance(item, str):
                raise TypeError(f"{method}() returned a non-string id {one_line(repr(item), 80)}") from None
        raise
    if not joined.isascii() and not is_unicode_text(joined):
        bad = next(item for item in ids if not is_unicode_text(item))
        raise ValueError(
            f"{method}() returned an id that is not Unicode text (a lone surrogate, which no store, "
            f"table or JSON output can hold): {one_line(repr(bad), 80)}"
        )
    return ids


def describe(exc: BaseException) -> str:
    """A question's error message: the exception's class and its first line, with any lone
    surrogate in what the plug-in said written as its escape (the message is stored)."""
    if isinstance(exc, QuestionTimeout):
        return str(exc)
    text = f"{type(exc).__name__}: {one_line(str(exc))}"
    return text if text.isascii() or is_unicode_text(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


# ---------------------------------------------------------------------------------- the pool
