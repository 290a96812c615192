"""The opt-in LLM judge against a real chat-completions server: every failure mode is a
recorded grading failure with its cause — never a crash, never a silent pass — and
--judge-samples stores the spread and flags prompts that straddle the pass threshold."""

from __future__ import annotations

import pytest

from goldeneval.core.errors import InputError
from goldeneval.prompts.golden import Assertion, AssertionType
from goldeneval.prompts.graders import (
    DETERMINISTIC,
    LLM_JUDGE,
    DeterministicGrader,
    GradingItem,
    GradingService,
    LlmJudgeGrader,
    parse_judge_verdict,
)
from goldeneval.prompts.models import ModelContext, build_model
from goldeneval.prompts.openai_chat import OpenAIChatModel
from tests.chat_server import Reply, answer, chat_server, error, last_user_message, verdict

ITEM = GradingItem("p1", "What colour is the sky?", (Assertion(type=AssertionType.CONTAINS, value="blue"),), "Blue.")


def _judge(base_url: str, samples: int = 1, timeout: str = "5") -> LlmJudgeGrader:
    model = build_model(
        ModelContext(
            "goldeneval.openai",
            {"base_url": base_url, "model": "judge", "timeout_s": timeout, "max_retries": "0"},
        )
    )
    assert isinstance(model, OpenAIChatModel)
    return LlmJudgeGrader(model, model.provenance(), samples=samples, timeout_s=10)


def test_a_well_formed_verdict_is_the_score_and_the_reason() -> None:
    with chat_server(verdict(0.8, "mostly right")) as server:
        grading = _judge(server.base_url).grade(ITEM, "It is blue.")
    assert (grading.passed, grading.score, grading.reason, grading.error) == (True, 0.8, "mostly right", None)
    prompt = last_user_message(server.requests[0])
    assert "What colour is the sky?" in prompt and "Reference answer:\nBlue." in prompt
    assert "Answer to grade:\nIt is blue." in prompt


@pytest.mark.parametrize(
    ("reply", "cause"),
    [
        (answer("I think it is fine"), "no JSON object in the judge's answer"),
        (answer('{"score": 0.9, "reason": "ok"'), "no JSON object in the judge's answer"),
        (answer('{"score": 0.9 "reason": "ok"}'), "malformed JSON from the judge"),
        (answer('{"score": "high", "reason": "ok"}'), "the judge's 'score' is not a number"),
        (answer('{"score": true, "reason": "ok"}'), "the judge's 'score' is not a number"),
        (verdict(7), "the judge's score 7 is outside [0, 1]"),
        (verdict(-0.1), "the judge's score -0.1 is outside [0, 1]"),
        (answer('{"score": 1}'), "the judge's answer has no 'reason' string"),
        (error(500), "judge call failed: ModelError: HTTP 500 Internal Server Error"),
        (error(401, "no key"), "judge call failed: ModelError: HTTP 401 Unauthorized"),
        (Reply(200, b"<html>"), "judge call failed: ModelError: malformed chat-completions response"),
        (Reply(200, verdict(1.0).body, (), 2.0), "judge call failed: ModelError: timed out"),
    ],
    ids=[
        "prose",
        "truncated",
        "bad-json",
        "score-text",
        "score-bool",
        "score-high",
        "score-negative",
        "no-reason",
        "http-500",
        "http-401",
        "not-chat-completions",
        "timeout",
    ],
)
def test_a_failed_judgement_is_a_grading_failure_with_its_cause(reply: Reply, cause: str) -> None:
    with chat_server(reply) as server:
        grading = _judge(server.base_url, timeout="0.5").grade(ITEM, "It is blue.")
    assert grading.passed is None and grading.score is None
    assert grading.error is not None and cause in grading.error


def test_a_judge_in_a_fenced_block_after_some_words_is_read() -> None:
    assert parse_judge_verdict('Sure!\n```json\n{"score": 0.25, "reason": "vague"}\n```') == (0.25, "vague")


def test_samples_store_the_spread_and_a_straddling_prompt_is_unstable() -> None:
    with chat_server(verdict(0.9), verdict(0.3), verdict(0.6)) as server:
        grading = _judge(server.base_url, samples=3).grade(ITEM, "blue")
    assert grading.samples == (0.9, 0.3, 0.6)
    assert grading.spread == pytest.approx(0.6)
    assert grading.score == pytest.approx(0.6)
    # samples on both sides of the threshold: an unstable verdict, not a pass (issue 24)
    assert grading.passed is None
    assert grading.unstable is True and grading.outcome == "unstable"


def test_consistent_samples_are_stable() -> None:
    with chat_server(verdict(0.9), verdict(0.8)) as server:
        grading = _judge(server.base_url, samples=2).grade(ITEM, "blue")
    assert (grading.unstable, grading.passed) == (False, True)


def test_one_failed_sample_of_three_makes_the_prompt_a_grading_error_keeping_the_others() -> None:
    with chat_server(verdict(0.9), answer("no idea"), verdict(0.8)) as server:
        grading = _judge(server.base_url, samples=3).grade(ITEM, "blue")
    assert grading.passed is None
    assert grading.error is not None and grading.error.startswith("1 of 3 judge samples failed; first: no JSON object")
    assert grading.samples == (0.9, 0.8)


def test_an_unknown_grader_falls_back_to_the_deterministic_one_and_says_so() -> None:
    choice = GradingService().select("gpt-judge-9000")
    assert isinstance(choice.grader, DeterministicGrader)
    assert choice.grader.id == DETERMINISTIC
    known = GradingService.known()  # the built-in graders, then any registered plug-in (semantic)
    assert known[:2] == ("deterministic", "llm_judge")
    assert choice.notice == (
        f"unknown grader 'gpt-judge-9000' (known: {', '.join(known)}): graded with the deterministic "
        "grader instead (no model call)"
    )


def test_the_judge_without_a_judge_model_is_invalid_input_not_a_silent_fallback() -> None:
    with pytest.raises(InputError, match=r"^grader 'llm_judge' needs a judge model: pass --judge-model ID"):
        GradingService().select(LLM_JUDGE)


def test_the_judge_identity_names_the_model_the_samples_and_the_threshold() -> None:
    grader = _judge("http://127.0.0.1:9/v1", samples=3)
    identity = grader.identity
    assert identity.startswith("llm_judge/v2(judge-prompt-v1;rubric=none;rubrics:sha256:")
    assert identity.endswith(
        ";model=judge (mutable alias);"
        "pipeline=goldeneval.openai/chat-completions(http://127.0.0.1:9,temperature=0);samples=3;threshold=0.5;"
        "unstable=status;abstention/v12(default;max_words=50))"
    )
