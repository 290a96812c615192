"""A plug-in grader (:mod:`goldeneval.prompts.grader_plugins`) run as :class:`PluginGrader`:
checked when built, its ``grade`` guarded, the abstention rule applied around it."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from goldeneval.core.errors import one_line
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.deterministic import grade_abstention
from goldeneval.prompts.grader_plugins import GraderError
from goldeneval.prompts.grades import (
    DETERMINISTIC,
    Grading,
    GradingItem,
    is_judge,
)

__all__ = ["PluginGrader"]


def _plugin_attribute(plugin_id: str, plugin: object, name: str) -> Any:
    try:
        return getattr(plugin, name)
    except AttributeError:
        raise GraderError(
            f"grader {plugin_id!r}: its factory returned {type(plugin).__name__}, which has no {name!r}"
        ) from None
    except (Exception, SystemExit) as exc:  # a property of plug-in code is plug-in code
        raise GraderError(
            f"grader {plugin_id!r}: reading its {name!r} raised {type(exc).__name__}: {one_line(str(exc), 200)}"
        ) from None


def _plugin_text(plugin_id: str, plugin: object, name: str) -> str:
    value = _plugin_attribute(plugin_id, plugin, name)
    if not isinstance(value, str) or not value.strip():
        raise GraderError(f"grader {plugin_id!r}: its {name!r} must be a non-empty string, got {value!r:.60}")
    return value


@dataclass(frozen=True)
class PluginGrader:
    """A plug-in grader as a run calls it (see :mod:`goldeneval.prompts.grader_plugins`).

    Built by :meth:`of`, which checks the plug-in once; ``id``, ``identity`` and
    ``pass_threshold`` are read then and kept, so what is stored is what was checked.  Each
    ``grade`` call is guarded: plug-in code that raises (or calls ``sys.exit()``), returns
    anything but a :class:`Grading` or a score outside [0, 1] makes that prompt's grading
    error, naming the grader, and the run goes on.  The abstention rule
    (:func:`grade_abstention`) is applied around the plug-in, and its rules are part of the
    identity, unless the plug-in declares ``grades_abstention = True`` (it calls
    :func:`grade_abstention` itself, as ``semantic`` does, with the rules of its context)."""

    inner: Any
    plugin_id: str
    id: str
    inner_identity: str
    pass_threshold: float
    abstention: AbstentionRules
    grades_abstention: bool = False

    @classmethod
    def of(cls, plugin_id: str, plugin: object, abstention: AbstentionRules) -> PluginGrader:
        """Check a factory's grader; anything missing or malformed is one line naming it."""
        grader_id = _plugin_text(plugin_id, plugin, "id")
        if grader_id == DETERMINISTIC or is_judge(grader_id):
            raise GraderError(f"grader {plugin_id!r}: its id {grader_id!r} is a built-in grader's")
        identity = _plugin_text(plugin_id, plugin, "identity")
        threshold = _plugin_attribute(plugin_id, plugin, "pass_threshold")
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float)
            or not math.isfinite(threshold)
            or not 0.0 <= threshold <= 1.0
        ):
            raise GraderError(
                f"grader {plugin_id!r}: its 'pass_threshold' must be a number from 0 to 1, got {threshold!r:.60}"
            )
        if not callable(_plugin_attribute(plugin_id, plugin, "grade")):
            raise GraderError(f"grader {plugin_id!r}: its 'grade' is not callable")
        own = getattr(plugin, "grades_abstention", False) is True
        return cls(plugin, plugin_id, grader_id, identity, float(threshold), abstention, own)

    @property
    def identity(self) -> str:
        if self.grades_abstention:
            return self.inner_identity
        return f"{self.inner_identity};{self.abstention.identity}"

    @property
    def thread_safe(self) -> bool:
        """The plug-in's declaration (``--workers`` asks one prompt at a time when it is False)."""
        return getattr(self.inner, "thread_safe", True) is not False

    def grade(self, item: GradingItem, answer: str) -> Grading:
        if self.grades_abstention:
            return self._guarded(item, answer)
        return grade_abstention(self.abstention, item, answer, lambda: self._guarded(item, answer), ask=False)

    def _guarded(self, item: GradingItem, answer: str) -> Grading:
        try:
            result = self.inner.grade(item, answer)
        except (Exception, SystemExit) as exc:  # a plug-in's failure is this prompt's grading error
            return Grading(
                passed=None,
                score=None,
                error=f"grader {self.id!r} raised {type(exc).__name__}: {one_line(str(exc), 200)}",
            )
        if not isinstance(result, Grading):
            return Grading(
                passed=None, score=None, error=f"grader {self.id!r} returned {type(result).__name__}, not a Grading"
            )
        score = result.score
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
            or not 0.0 <= score <= 1.0
        ):
            return Grading(passed=None, score=None, error=f"grader {self.id!r} gave a score outside [0, 1]: {score!r}")
        return result
