"""Question forms (ADR-072): the slices every run is also rated by, and a slice threshold names.

Shared because thresholds (``form:GAP``) are validated where they are declared, before any
set is read; golden sets (:mod:`goldeneval.retrieval.golden`) type their questions with it.
"""

from enum import StrEnum

__all__ = ["NO_HARD_CLASS", "QuestionForm"]

NO_HARD_CLASS = "(none)"
"""The hard-class slice of the questions that have no hard class, in every kind's slices."""


class QuestionForm(StrEnum):
    """How a question relates to the wording of its target documents."""

    MATCH = "MATCH"
    """Shares vocabulary with the target document."""
    GAP = "GAP"
    """An everyday rewording with little vocabulary overlap: where retrieval problems live."""
