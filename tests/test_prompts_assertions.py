"""Deterministic assertions and the deterministic grader, from a table of cases."""

from __future__ import annotations

from typing import Any

import pytest

from goldeneval.prompts.assertions import check_assertion, token_f1
from goldeneval.prompts.golden import Assertion
from goldeneval.prompts.graders import DeterministicGrader, GradingItem


@pytest.mark.parametrize(
    ("assertion", "answer", "passed"),
    [
        ({"type": "exact", "value": "Paris"}, "  paris ", True),
        ({"type": "exact", "value": "Paris", "case_sensitive": True}, "paris", False),
        ({"type": "exact", "value": "Paris"}, "Paris.", False),
        ({"type": "contains", "value": "new  york"}, "I live in New York City", True),
        ({"type": "contains", "value": "London"}, "Paris", False),
        ({"type": "contains", "value": "London", "negate": True}, "Paris", True),
        ({"type": "regex", "value": r"\b4\b"}, "It is 4.", True),
        ({"type": "regex", "value": r"^yes"}, "YES, it is", True),
        ({"type": "regex", "value": r"^yes", "case_sensitive": True}, "YES", False),
        ({"type": "json_schema", "required": ["a"]}, '{"a": 1}', True),
        ({"type": "json_schema", "required": ["a"]}, '```json\n{"a": 1}\n```', True),
        ({"type": "json_schema", "required": ["a", "b"]}, '{"a": 1}', False),
        ({"type": "json_schema", "properties": {"a": "integer"}}, '{"a": 1.5}', False),
        ({"type": "json_schema", "properties": {"a": "number"}}, '{"a": true}', False),
        ({"type": "json_schema", "properties": {"a": "number"}}, '{"a": 2}', True),
        ({"type": "json_schema", "properties": {"a": "array", "b": "null"}}, '{"a": [], "b": null}', True),
        ({"type": "json_schema", "required": ["a"]}, "[1, 2]", False),
        ({"type": "json_schema", "required": ["a"]}, "not json", False),
        ({"type": "json_schema", "required": ["a"], "negate": True}, "not json", True),
    ],
    ids=lambda v: str(v)[:40] if not isinstance(v, bool) else str(v),
)
def test_an_assertion_passes_or_fails(assertion: dict[str, Any], answer: str, passed: bool) -> None:
    assert check_assertion(Assertion.model_validate(assertion), answer).passed is passed


def test_a_failed_assertion_says_what_was_expected_and_found() -> None:
    outcome = check_assertion(Assertion.model_validate({"type": "json_schema", "required": ["a", "b"]}), '{"a": 1}')
    assert outcome.message == "json_schema(a, b): missing keys: b"


def test_the_score_is_the_weighted_share_and_the_prompt_passes_only_when_all_do() -> None:
    item = GradingItem(
        "p",
        "?",
        (
            Assertion.model_validate({"type": "contains", "value": "a", "weight": 3}),
            Assertion.model_validate({"type": "contains", "value": "zzz", "weight": 1}),
        ),
    )
    grading = DeterministicGrader().grade(item, "a")
    assert (grading.score, grading.passed) == (0.75, False)


@pytest.mark.parametrize(
    ("answer", "reference", "score", "passed"),
    [
        # issue 42: the reference's facts decide (before, token F1 failed this sentence at 2/8)
        ("The fare is 7.80 for zones A and B.", "7.80", 1.0, True),
        ("The fare is 7.20 for zones A and B.", "7.80", 0.0, False),
        # "ten minutes" is a fact of the reference (before: token F1 8/9)
        ("Buses run every ten minutes", "buses every ten minutes", 1.0, True),
        # no facts: token F1 of the best sentence
        ("Trams leave hourly", "buses run at night", 0.0, False),
        ("Hello there. Buses run at night.", "buses run at night", 1.0, True),
    ],
    ids=["contains", "wrong-number", "fact-in-words", "f1-none", "f1-best-sentence"],
)
def test_a_prompt_without_assertions_is_graded_against_its_reference(
    answer: str, reference: str, score: float, passed: bool
) -> None:
    grading = DeterministicGrader().grade(GradingItem("p", "?", (), reference), answer)
    assert grading.score == pytest.approx(score)
    assert grading.passed is passed


def test_token_f1_counts_shared_normalised_tokens() -> None:
    # SQuAD tokens: {latest, run, per, set} vs {latest, run, per, set, averaged} -> P = 1, R = 4/5
    assert token_f1("the latest run per set", "latest run per set averaged") == pytest.approx(2 * 0.8 / 1.8)
