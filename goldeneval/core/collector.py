"""Python's cyclic garbage collector, tuned for evaluating large runs.

A run of 100,000 questions allocates millions of objects that live until the run ends
(questions, rankings of 100 ids each, arrays, results).  With CPython's default thresholds
(700, 10, 10) the collector keeps scanning them, again and again, and finds nothing to free:
measured on a 100,000-question run with a zero-cost retriever, 8.5 s of 29 s went to it,
14 s of 38 s when the run was compared.  :func:`fewer_collections` lets the collector run
about a hundred times less often while goldeneval's own code works.

Plug-in code (a retriever answering, a factory building an index) runs under
:func:`plugin_collections` instead: the thresholds found before, so that reference cycles a
plug-in makes on every call (an exception kept with its frame) are freed as usual and memory
stays flat, with everything allocated before it frozen, so that those collections do not
rescan the run's own objects.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["BULK_THRESHOLDS", "fewer_collections", "plugin_collections"]

BULK_THRESHOLDS = (100_000, 20, 100)
"""``gc.set_threshold`` while evaluating: a young collection every 100,000 allocations (not
700), and older generations scanned correspondingly less often."""

_outer: list[tuple[int, int, int]] = []
"""The thresholds each active :func:`fewer_collections` found on entry (innermost last)."""


@contextmanager
def fewer_collections() -> Iterator[None]:
    """Collect less often inside the block, and restore the thresholds found on entry after it.

    Nests (an inner block finds the bulk thresholds and leaves them), and works as a decorator.
    A thread that changes the thresholds meanwhile has its change undone at the end.
    """
    previous = gc.get_threshold()
    if previous[0] >= BULK_THRESHOLDS[0]:
        yield
        return
    gc.set_threshold(*BULK_THRESHOLDS)
    _outer.append(previous)
    try:
        yield
    finally:
        _outer.pop()
        gc.set_threshold(*previous)


@contextmanager
def plugin_collections() -> Iterator[None]:
    """Inside :func:`fewer_collections`: collect as often as before it while plug-in code runs,
    over what is allocated from here on (what exists is frozen), and collect less often again
    after.  Outside it: nothing changes."""
    if not _outer or gc.get_threshold() != BULK_THRESHOLDS:
        yield
        return
    gc.freeze()
    gc.set_threshold(*_outer[-1])
    try:
        yield
    finally:
        gc.set_threshold(*BULK_THRESHOLDS)
        gc.unfreeze()
