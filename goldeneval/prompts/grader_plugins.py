"""Pluggable graders (issue 24): the Python equivalent of ADR-060's grader interface.

A grader plug-in is a factory ``factory(context: GraderContext) -> grader``, registered under
the entry-point group ``goldeneval.graders`` (built in: ``semantic``, in the ``dense`` extra)
or named by an import path ``package.module:factory``; :data:`GRADERS` is its
:class:`~goldeneval.core.plugins.PluginKind`, so ids, imports and factory failures follow the
rules every plug-in kind follows.  The grader it returns has ``id``, ``identity`` (part of
the run's benchmark fingerprint), ``pass_threshold`` and ``grade(item, answer) -> Grading``;
:class:`~goldeneval.prompts.graders.GradingService` checks all four when it builds one and
guards every ``grade`` call (:class:`~goldeneval.prompts.graders.PluginGrader`).

This module holds only what a factory sees, so a plug-in imports it without pulling in the
built-in graders.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from goldeneval.core.errors import InputError
from goldeneval.core.plugins import PluginKind
from goldeneval.prompts.abstention import AbstentionRules

__all__ = ["GRADERS", "GRADERS_ENTRY_POINT_GROUP", "GraderContext", "GraderError"]

GRADERS_ENTRY_POINT_GROUP = "goldeneval.graders"


class GraderError(InputError):
    """A grader cannot be found or built: invalid input, one line naming it."""


@dataclass(frozen=True)
class GraderContext:
    """What a grader factory is given."""

    grader_id: str
    """The id the run asked for (a registered id or ``package.module:factory``)."""
    pass_threshold: float | None = None
    """The run's pass threshold; None when the run left it at its default, so that a grader
    with a calibrated threshold of its own (``semantic``) uses that one."""
    abstention: AbstentionRules = field(default_factory=AbstentionRules)
    """The run's abstention rules, for a grader that declares ``grades_abstention = True`` and
    applies :func:`~goldeneval.prompts.graders.grade_abstention` itself; every other plug-in
    grader has them applied around it."""
    timeout_s: float | None = None
    """The run's per-prompt timeout (grading is bounded by it too)."""


GRADERS: PluginKind[GraderContext, object] = PluginKind(
    group=GRADERS_ENTRY_POINT_GROUP, noun="grader", method="grade(item, answer)", error=GraderError
)
"""Graders as a plug-in kind: registered ids, import paths, factory failures in one line."""
