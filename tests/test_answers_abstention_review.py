"""Abstention as found by a hostile review (issue 24): an answer that hedges and then answers is
an answer; a faithfulness or relevance judge never turns a non-answer to an unanswerable question
into an abstention (only the correctness judge, which sees the gist, may)."""

from __future__ import annotations

import pytest

from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.graders import GradingItem, GradingService, Judge
from goldeneval.prompts.models import ChatRequest


@pytest.mark.parametrize(
    "text",
    [
        "The context does not mention the 2025 price, but a day ticket for zones A and B costs 7.80.",
        "Yes, the F1 ferry does not answer to the harbour master; it departs at 08:00.",
        "I do not know the 2025 price. The 2026 day ticket costs 7.80 for zones A and B.",
    ],
)
def test_an_answer_that_hedges_and_then_answers_is_no_abstention(text: str) -> None:
    assert AbstentionRules().match(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "The context does not answer the question. Please check the timetable.",
        "Sorry. I don't know.",
        "No information about that, sorry!",
    ],
)
def test_an_abstention_with_filler_is_still_an_abstention(text: str) -> None:
    assert AbstentionRules().match(text) is not None


class _AlwaysOne:
    """A judge model that scores every answer 1 (whatever it is asked)."""

    def __init__(self) -> None:
        self.calls: list[ChatRequest] = []

    def complete(self, request: ChatRequest) -> str:
        self.calls.append(request)
        return '{"score": 1, "reason": "fine"}'


UNANSWERABLE = GradingItem(
    "q-077", "What is the Wi-Fi password on the night bus?", reference="not covered by the corpus", answerable=False
)


@pytest.mark.parametrize("rubric", ["faithfulness", "relevance"])
def test_a_faithfulness_or_relevance_pass_on_an_unanswerable_question_is_a_missed_abstention(rubric: str) -> None:
    judge = _AlwaysOne()
    grader = GradingService(judge=Judge(judge, rubric=rubric)).select("llm_judge").grader
    grading = grader.grade(UNANSWERABLE, "Your journey is between 22:00 and 05:00.")
    assert (grading.passed, grading.outcome) == (False, "missed_abstention")
    assert judge.calls == []  # nothing to ask a judge that does not see the gist


@pytest.mark.parametrize("grader_id", ["llm_judge", "llm_judge:correctness"])
def test_the_correctness_judge_still_decides_an_abstention_in_other_words(grader_id: str) -> None:
    judge = _AlwaysOne()
    grader = GradingService(judge=Judge(judge)).select(grader_id).grader
    grading = grader.grade(UNANSWERABLE, "Wi-Fi on buses is a mystery the passages leave unsolved.")
    assert (grading.passed, grading.outcome) == (True, "abstained")
    assert len(judge.calls) == 1
