"""Context-aware judging, opt-in (issue 24): versioned rubrics whose text is part of the
judge's identity, a per-prompt rubric in the prompt-set file, and ``answers`` handing the
judge the passages the model answered from.

The judge here is a real chat-completions server that really reads what it is sent: it
scores 1 when the answer appears in the context block of the judge's prompt and 0
otherwise, so a faithfulness rubric can only pass an answer that quotes its context if the
context reached the judge."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from goldeneval.answers.answers import AnswerRunSpec, evaluate_answers
from goldeneval.core.errors import InputError
from goldeneval.prompts.graders import (
    CONTEXT_HEADING,
    LLM_JUDGE,
    GradingItem,
    GradingService,
    Judge,
    LlmJudgeGrader,
    judge_messages,
)
from goldeneval.prompts.models import Model, ModelContext, build_model
from goldeneval.prompts.pipeline import evaluate
from goldeneval.prompts.rubrics import CORRECTNESS, FAITHFULNESS, RELEVANCE, RUBRICS, Rubric
from goldeneval.prompts.spec import JudgeSpec, PromptRunSpec
from goldeneval.retrieval import pipeline
from goldeneval.retrieval.spec import RunSpec
from tests.chat_server import Reply, answer, chat_server, last_user_message, verdict

FARES = "A day ticket costs 7.80 in zones A and B."
FERRY = "The first ferry leaves Harbour Front at 08:00 on Saturdays."
ANSWERS = {
    "What does a day ticket cost?": FARES,  # quotes its context
    "When does the first Saturday ferry leave?": "The first ferry leaves Harbour Front at 06:00 on Saturdays.",
}


def _context_judge(body: dict[str, Any]) -> Reply:
    """The answerer answers from ``ANSWERS``; the judge scores 1 when the answer to grade is
    found in the context block it was given, else 0."""
    prompt = last_user_message(body)
    if body["model"] != "judge":
        question = prompt.rsplit("Question: ", 1)[-1]
        return answer(ANSWERS[question])
    graded = prompt.rsplit("Answer to grade:\n", 1)[1]
    if CONTEXT_HEADING not in prompt:
        return verdict(0.0, "no context block")
    context = prompt.split(CONTEXT_HEADING, 1)[1].split("\n\nAnswer to grade:\n", 1)[0]
    return verdict(1.0, "quoted") if graded in context else verdict(0.0, "not in the context")


def _workspace(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir(exist_ok=True)
    (corpus / "fares.md").write_text(f"# Fares\n\n{FARES}\n")
    (corpus / "ferry.md").write_text(f"# Ferry\n\n{FERRY}\n")
    questions = [
        {"id": "fare", "text": "What does a day ticket cost?", "form": "MATCH", "expected": ["fares"],
         "answer_gist": "7.80"},
        {"id": "ferry", "text": "When does the first Saturday ferry leave?", "form": "MATCH", "expected": ["ferry"],
         "answer_gist": "08:00"},
    ]  # fmt: skip
    path = tmp_path / "transit-mini.yaml"
    path.write_text(yaml.safe_dump({"id": "transit-mini", "corpus": "corpus", "questions": questions}))
    return path


def _judge_model(base_url: str) -> Model:
    return build_model(ModelContext("goldeneval.openai", {"base_url": base_url, "model": "judge", "max_retries": "0"}))


def _answer_run(tmp_path: Path, base_url: str, rubric: str | None) -> dict[str, Any]:
    retrieval = RunSpec(
        set_ref=str(_workspace(tmp_path)),
        retriever_id="goldeneval.lexical",
        series="goldeneval.lexical",
        cache_dir=tmp_path / "cache",
    )
    spec = AnswerRunSpec(
        retrieval=retrieval,
        context_depth=1,
        model_id="goldeneval.openai",
        model_options={"base_url": base_url, "model": "answerer", "max_retries": "0"},
        series="answerer",
        grader=LLM_JUDGE,
        judge=JudgeSpec(model_id="goldeneval.openai", options={"base_url": base_url, "model": "judge"}),
        cache_dir=tmp_path / "cache",
    )
    golden_set = pipeline.load_golden_set(retrieval)
    retrieved = pipeline.evaluate(retrieval, golden_set=golden_set)
    choice = GradingService(judge=Judge(_judge_model(base_url), rubric=rubric)).select(LLM_JUDGE)
    run = evaluate_answers(spec, golden_set, retrieved, choice=choice)
    return {"run": run, "by_id": {r.id: r for r in run.results}}


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_faithfulness_rubric_fails_an_answer_that_contradicts_its_context_and_passes_one_that_quotes_it(
    tmp_path: Path,
) -> None:
    with chat_server(default=_context_judge) as server:
        result = _answer_run(tmp_path, server.base_url, "faithfulness")
    by_id = result["by_id"]
    assert (by_id["fare"].passed, by_id["fare"].score, by_id["fare"].reason) == (True, 1.0, "quoted")
    assert (by_id["ferry"].passed, by_id["ferry"].score, by_id["ferry"].reason) == (False, 0.0, "not in the context")
    run = result["run"]
    assert run.grader == "answer_llm_judge:faithfulness"
    assert FAITHFULNESS.identity in run.grader_identity and FAITHFULNESS.identity in run.protocol
    judged = [r for r in server.requests if r["model"] == "judge"]
    assert len(judged) == 2
    assert judged[0]["messages"][0]["content"].startswith(FAITHFULNESS.text)
    assert f"{CONTEXT_HEADING}\n[1] Fares\n" in last_user_message(judged[0])


def test_without_a_context_aware_rubric_the_judge_is_shown_no_context(tmp_path: Path) -> None:
    """Opt-in: the default judge prompt is what it was, with the reference and no passages."""
    with chat_server(default=_context_judge) as server:
        result = _answer_run(tmp_path, server.base_url, None)
    assert {r.passed for r in result["by_id"].values()} == {False}
    assert result["run"].grader == "answer_llm_judge"
    for request in (r for r in server.requests if r["model"] == "judge"):
        assert CONTEXT_HEADING not in last_user_message(request)
        assert "Reference answer:\n" in last_user_message(request)


def test_a_rubric_text_change_changes_the_judge_identity_even_at_the_same_version() -> None:
    edited = Rubric(FAITHFULNESS.name, FAITHFULNESS.version, FAITHFULNESS.text + " Be lenient.", uses_context=True)
    assert edited.identity != FAITHFULNESS.identity
    with chat_server() as server:
        model = _judge_model(server.base_url)
        same = LlmJudgeGrader(model, model.provenance(), rubric=FAITHFULNESS)  # type: ignore[attr-defined]
        other = LlmJudgeGrader(model, model.provenance(), rubric=edited)  # type: ignore[attr-defined]
    assert same.identity != other.identity
    assert same.identity.startswith("llm_judge/v2(judge-prompt-v1;rubric=faithfulness/v1:sha256:")


def test_an_unknown_rubric_is_invalid_input_listing_the_known_ones() -> None:
    with pytest.raises(
        InputError, match=r"^unknown judge rubric 'vibes' \(known: correctness, faithfulness, relevance\)"
    ):
        Judge(_judge_model("http://127.0.0.1:9/v1"), rubric="vibes")
    assert sorted(RUBRICS) == ["correctness", "faithfulness", "relevance"]


def test_a_prompt_names_its_own_rubric_in_the_set_file_overriding_the_runs(tmp_path: Path) -> None:
    set_path = tmp_path / "mixed.yaml"
    prompts = [
        {"id": "relevant", "prompt": "Name a colour.", "reference": "Blue.", "rubric": "relevance"},
        {"id": "plain", "prompt": "Name a fruit.", "reference": "Apple."},
    ]
    set_path.write_text(yaml.safe_dump({"id": "mixed", "prompts": prompts}))
    with chat_server(default=lambda body: verdict(0.9) if body["model"] == "judge" else answer("Red.")) as server:
        spec = PromptRunSpec(
            set_ref=str(set_path),
            model_id="goldeneval.openai",
            model_options={"base_url": server.base_url, "model": "m", "max_retries": "0"},
            series="m",
            grader=LLM_JUDGE,
            judge=JudgeSpec(model_id="goldeneval.openai", options={"base_url": server.base_url, "model": "judge"}),
            cache_dir=tmp_path / "cache",
        )
        run = evaluate(spec)
    systems = {last_user_message(r): r["messages"][0]["content"] for r in server.requests if r["model"] == "judge"}
    relevance = next(text for prompt, text in systems.items() if "Name a colour." in prompt)
    plain = next(text for prompt, text in systems.items() if "Name a fruit." in prompt)
    assert relevance.startswith(RELEVANCE.text) and not plain.startswith(RELEVANCE.text)
    assert [r.outcome for r in run.results] == ["pass", "pass"]
    # docs/guide/answers.md: relevance is judged from the question and the answer alone ("do not
    # judge whether it is true"); the default prompt and correctness show the reference
    shown = {prompt.split("\n")[1]: prompt for prompt in systems}
    assert "Reference answer:" not in shown["Name a colour."]
    assert "Reference answer:\nApple." in shown["Name a fruit."]


def test_only_the_correctness_rubric_shows_the_judge_the_reference() -> None:
    item = GradingItem("q", "Name a colour.", reference="Blue.")
    for rubric, shows in ((CORRECTNESS, True), (RELEVANCE, False), (FAITHFULNESS, False)):
        user = judge_messages(item, "Red.", rubric)[1].content
        assert ("Reference answer:\nBlue." in user) is shows, rubric.name
    assert RELEVANCE.identity.startswith("relevance/v2:")


def test_an_unknown_rubric_in_a_set_file_names_file_prompt_and_field(tmp_path: Path) -> None:
    from goldeneval.prompts.golden import PromptSetError, load_prompt_set

    set_path = tmp_path / "bad.yaml"
    set_path.write_text(yaml.safe_dump({"id": "bad", "prompts": [{"id": "p", "prompt": "x", "reference": "y",
                                                                    "rubric": "vibes"}]}))  # fmt: skip
    with pytest.raises(PromptSetError) as caught:
        load_prompt_set(set_path)
    assert str(caught.value).startswith(f"{set_path}: prompt #1 (id 'p'): field 'rubric': unknown judge rubric 'vibes'")


def test_the_judge_item_carries_the_passages_the_model_saw(tmp_path: Path) -> None:
    with chat_server(default=_context_judge) as server:
        _answer_run(tmp_path, server.base_url, "faithfulness")
    answered = [r for r in server.requests if r["model"] == "answerer"]
    judged = [r for r in server.requests if r["model"] == "judge"]
    for asked, graded in zip(answered, judged, strict=True):
        shown = last_user_message(asked).split("Context:\n\n", 1)[1].rsplit("\n\nQuestion: ", 1)[0]
        assert shown in last_user_message(graded)


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_rubric_run_is_stored_under_its_own_grader_and_compares_with_its_own_kind(tmp_path: Path) -> None:
    from goldeneval.history import door

    with chat_server(default=_context_judge) as server:
        first = _answer_run(tmp_path, server.base_url, "faithfulness")["run"]
        plain = _answer_run(tmp_path, server.base_url, None)["run"]
    spec = AnswerRunSpec(
        retrieval=RunSpec(set_ref="unused", retriever_id="goldeneval.lexical", series="goldeneval.lexical"),
        model_id="goldeneval.openai",
        series="answerer",
    )
    store = tmp_path / "s.duckdb"
    stored = door.record_and_judge(store, first, spec)
    assert stored.stored.grader == "answer_llm_judge:faithfulness"
    assert stored.verdict.status.value == "baseline"
    # a run judged without the rubric is another series of comparison: it is a baseline too
    assert door.record_and_judge(store, plain, spec).verdict.status.value == "baseline"
    assert door.record_and_judge(store, first, spec).verdict.status.value == "pass"
