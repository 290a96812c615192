"""The default grader asked one case at a time, shared by the grading-review tests."""

from __future__ import annotations

from goldeneval.prompts.graders import DeterministicGrader, GradingItem

GRADER = DeterministicGrader()
NO_ANSWER = "not covered by the corpus"
"""The reference of a question no document answers."""


def passes(question: str, reference: str, answer: str) -> bool:
    return GRADER.grade(GradingItem("q", question, (), reference), answer).passed is True


def outcome(question: str, answer: str, reference: str = NO_ANSWER) -> str | None:
    item = GradingItem("q", question, (), reference, answerable=reference != NO_ANSWER)
    return GRADER.grade(item, answer).outcome
