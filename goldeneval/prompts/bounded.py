"""Grading within the run's per-prompt timeout (issue 24): ``--timeout`` covers grading too.

Before, only the model call was bounded; a grader that ran long (a catastrophic regular
expression, a plug-in grader stuck on I/O) hung the whole run with no result.
:class:`TimeBoundGrader` wraps a grader so that the grading of one prompt ends within the
same ``timeout_s`` as its model call: it sets the regular-expression time bound
(:func:`goldeneval.prompts.safe_regex.time_bound`), so an assertion's pattern stops itself,
and runs the grader under :func:`goldeneval.prompts.models.call_with_timeout`, so any other
grader does too.  Past the bound the grading raises, and the evaluator records that prompt
as a grading error (``timed out after N s``); the run goes on.

The judge is not wrapped: each of its calls is already bounded by ``timeout_s`` (a run with
``--judge-samples N`` may take N of them per prompt), and it runs no regular expression.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goldeneval.prompts.graders import Grader, Grading, GradingItem
from goldeneval.prompts.models import CallTimeout, call_with_timeout
from goldeneval.prompts.safe_regex import time_bound

__all__ = ["GRACE_S", "TimeBoundGrader"]

GRACE_S = 1.0
"""How much longer the thread bound waits than the regular-expression bound, so that a pattern
past the bound ends itself and names itself in the error, rather than a bare timeout (the
``regex`` engine checks its clock every so many steps: it overshoots by a fraction of a second
on a busy machine)."""


@dataclass(frozen=True)
class TimeBoundGrader:
    """``inner``, with the grading of each answer bounded by ``timeout_s`` (None: unbounded
    but for the regular expressions' default bound)."""

    inner: Grader
    timeout_s: float | None

    @property
    def id(self) -> str:
        return self.inner.id

    @property
    def identity(self) -> str:
        """The inner grader's: a time bound changes no score that is given, so it is not part of
        what the run measured."""
        return self.inner.identity

    @property
    def pass_threshold(self) -> float:
        return self.inner.pass_threshold

    def grade(self, item: GradingItem, answer: str) -> Grading:
        def bounded() -> Grading:
            with time_bound(self.timeout_s):
                return self.inner.grade(item, answer)

        if self.timeout_s is None:
            return bounded()
        try:
            return call_with_timeout(bounded, self.timeout_s + GRACE_S)
        except CallTimeout:
            raise CallTimeout(f"timed out after {self.timeout_s:g} s") from None

    def __getattr__(self, name: str) -> Any:
        """Anything else a door reads of the grader (a judge's samples) is the inner grader's."""
        return getattr(self.inner, name)
