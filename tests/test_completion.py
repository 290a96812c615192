"""The completeness rule is written once (core.records.Completion); each kind only words it."""

from __future__ import annotations

from goldeneval.prompts.details import PROMPTS_COMPLETION
from goldeneval.retrieval.details import QUESTIONS_COMPLETION


def test_a_run_with_no_failed_item_is_complete_in_each_kinds_words() -> None:
    assert QUESTIONS_COMPLETION.of(0, 81) == (True, "all 81 questions answered")
    assert PROMPTS_COMPLETION.of(0, 5) == (True, "all 5 prompts answered and graded")


def test_one_failed_item_makes_a_run_incomplete_and_the_reason_counts_it() -> None:
    assert QUESTIONS_COMPLETION.of(2, 81) == (False, "2 of 81 questions errored or timed out")
    assert PROMPTS_COMPLETION.of(1, 5) == (False, "1 of 5 prompts failed (model call or grading)")
