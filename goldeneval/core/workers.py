"""How many calls a run may have in flight at once (``--workers``): one rule for every run kind.

Retrievers, models, judges and graders are asked concurrently only when every part that is
called declares nothing against it.  A part that says ``thread_safe = False`` (a client bound
to one connection, a model with per-call state) makes the run ask one thing at a time,
whatever ``--workers`` says, with a warning: asked concurrently it would not fail, it would
silently answer for the wrong question.  A part without the attribute is taken as thread-safe.
"""

from __future__ import annotations

__all__ = ["MAX_WORKERS", "usable_workers"]

MAX_WORKERS = 256
"""The most calls in flight at once that ``--workers`` accepts."""


def usable_workers(workers: int, asked: str, **parts: object) -> tuple[int, str | None]:
    """How many calls may be in flight at once, and the warning when fewer than asked.

    ``asked`` names what is asked (``questions``, ``prompts``); ``parts`` are the called
    objects by role (``retriever=``, ``model=``, ``judge=``, ``grader=``; None is skipped)."""
    unsafe = [name for name, part in parts.items() if part is not None and getattr(part, "thread_safe", True) is False]
    if workers > 1 and unsafe:
        return 1, (
            f"--workers {workers} ignored: the {unsafe[0]} declares thread_safe = False, so the {asked} are "
            "asked one at a time"
        )
    return workers, None
