"""Unstable judge verdicts are their own status (issue 24): samples on both sides of the pass
threshold are neither a pass nor a fail, whatever the number of samples; ``fail_on_unstable``
makes them grading errors, so the run is incomplete and the gate fails.  Before, an unstable
verdict counted as a pass whenever the mean reached the threshold."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.core.gate import GateDecision
from goldeneval.history import door
from goldeneval.prompts.evaluation import EvaluationService, prompt_tasks
from goldeneval.prompts.golden import load_prompt_set
from goldeneval.prompts.graders import LLM_JUDGE, GradingItem, GradingService, Judge, LlmJudgeGrader
from goldeneval.prompts.models import Model, ModelContext, build_model
from goldeneval.prompts.pipeline import evaluate
from goldeneval.prompts.spec import JudgeSpec, PromptRunSpec
from tests.chat_server import Reply, answer, chat_server, verdict

ITEM = GradingItem("p", "What colour is the sky?", (), "Blue.")
PROMPTS = [
    {"id": "sky", "prompt": "What colour is the sky?", "reference": "Blue."},
    {"id": "grass", "prompt": "What colour is grass?", "reference": "Green."},
]


def _judge_model(base_url: str) -> Model:
    return build_model(ModelContext("goldeneval.openai", {"base_url": base_url, "model": "judge", "max_retries": "0"}))


def _judge(base_url: str, samples: int, *, fail_on_unstable: bool = False) -> LlmJudgeGrader:
    service = GradingService(judge=Judge(_judge_model(base_url), samples=samples), fail_on_unstable=fail_on_unstable)
    grader = service.select(LLM_JUDGE).grader
    assert isinstance(grader, LlmJudgeGrader)
    return grader


@pytest.mark.parametrize(
    ("scores", "passed", "outcome"),
    [
        ((0.4, 0.6), None, "unstable"),
        ((0.4, 0.6, 0.6), None, "unstable"),  # odd count, mean 0.53: still unstable, not a pass
        ((0.2, 0.2, 0.6), None, "unstable"),  # odd count, mean 0.33: still unstable, not a fail
        ((0.6, 0.7, 0.8), True, "pass"),
        ((0.1, 0.2, 0.3), False, "fail"),
        ((0.5, 0.5), True, "pass"),  # the threshold itself is a pass
    ],
)
def test_a_verdict_is_unstable_when_samples_straddle_the_threshold_whatever_their_count(
    scores: tuple[float, ...], passed: bool | None, outcome: str
) -> None:
    with chat_server(*(verdict(s) for s in scores)) as server:
        grading = _judge(server.base_url, len(scores)).grade(ITEM, "Blue.")
    assert len(server.requests) == len(scores)
    assert (grading.passed, grading.outcome, grading.error) == (passed, outcome, None)
    assert grading.unstable is (outcome == "unstable")


def test_fail_on_unstable_makes_an_unstable_verdict_a_grading_error_naming_the_samples() -> None:
    with chat_server(verdict(0.3), verdict(0.9)) as server:
        grading = _judge(server.base_url, 2, fail_on_unstable=True).grade(ITEM, "Blue.")
    assert grading.passed is None and grading.score is None and grading.unstable is True
    assert grading.error == "unstable judge verdict: samples 0.3, 0.9 straddle the pass threshold 0.5"
    with chat_server() as server:
        assert "unstable=error" in _judge(server.base_url, 2, fail_on_unstable=True).identity


def _spec(tmp_path: Path, base_url: str) -> PromptRunSpec:
    set_path = tmp_path / "colours.yaml"
    set_path.write_text(yaml.safe_dump({"id": "colours", "prompts": PROMPTS}))
    return PromptRunSpec(
        set_ref=str(set_path),
        model_id="goldeneval.openai",
        model_options={"base_url": base_url, "model": "answerer", "max_retries": "0"},
        series="answerer",
        grader=LLM_JUDGE,
        judge=JudgeSpec(model_id="goldeneval.openai", options={"base_url": base_url, "model": "judge"}, samples=2),
        cache_dir=tmp_path / "cache",
    )


def _replies(sky: list[float]) -> Callable[[dict[str, Any]], Reply]:
    """The answerer says the colour; the judge scores the sky with ``sky`` and grass with 0.9."""
    scores = iter(sky)

    def reply(body: dict[str, Any]) -> Reply:
        if body["model"] == "answerer":
            return answer("Blue." if "sky" in json.dumps(body) else "Green.")
        return verdict(next(scores) if "sky" in json.dumps(body) else 0.9)

    return reply


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
@pytest.mark.parametrize(("fail_on_unstable", "gate"), [(False, GateDecision.PASS), (True, GateDecision.INCOMPLETE)])
def test_unstable_prompts_are_counted_apart_and_fail_the_gate_only_when_asked(
    tmp_path: Path, fail_on_unstable: bool, gate: GateDecision
) -> None:
    with chat_server(default=_replies([0.2, 0.8])) as server:
        spec = _spec(tmp_path, server.base_url)
        service = GradingService(
            judge=Judge(_judge_model(server.base_url), samples=2), fail_on_unstable=fail_on_unstable
        )
        run = evaluate(spec, choice=service.select(LLM_JUDGE))
        outcome = door.record_and_judge(tmp_path / "s.duckdb", run, spec)
    sky, grass = run.results
    assert (grass.status, grass.passed) == ("ok", True)
    overall = run.aggregates.overall
    if fail_on_unstable:
        assert (sky.status, sky.stage, sky.passed) == ("error", "grader", None)
        assert sky.error is not None and sky.error.startswith("unstable judge verdict: samples 0.2, 0.8")
        assert (overall.graded, overall.errors, overall.unstable) == (1, 1, 0)
    else:
        found: tuple[object, ...] = (sky.status, sky.passed, sky.outcome, sky.score)
        assert found == ("unstable", None, "unstable", pytest.approx(0.5))
        # graded, not a pass: the pass rate is 1 of 2, the unstable prompt counted on its own
        assert (overall.graded, overall.passed, overall.unstable, overall.failed) == (2, 1, 1, 0)
        assert overall.pass_rate == 0.5
        assert run.details().passes() == {"sky": False, "grass": True}
    assert outcome.gate is gate


@pytest.mark.slow
def test_the_cli_shows_an_unstable_prompt_as_unstable_not_as_a_pass(tmp_path: Path) -> None:
    set_path = tmp_path / "colours.yaml"
    set_path.write_text(yaml.safe_dump({"id": "colours", "prompts": PROMPTS[:1]}))
    scores = iter([0.9, 0.1])
    with chat_server(
        default=lambda body: answer("Blue.") if body["model"] == "answerer" else verdict(next(scores))
    ) as s:
        result = CliRunner().invoke(
            main,
            ["prompts", "--set", str(set_path), "--model", "goldeneval.openai",
             "--model-option", f"base_url={s.base_url}", "--model-option", "model=answerer",
             "--grader", "llm_judge", "--judge-model", "goldeneval.openai", "--judge-option", f"base_url={s.base_url}",
             "--judge-option", "model=judge", "--judge-samples", "2", "--store", str(tmp_path / "s.duckdb"),
             "--no-progress"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "UNSTABLE" in result.output
    assert "Unstable (judge samples straddle 0.5; not a pass): 1" in result.output
    row = next(line for line in result.output.splitlines() if line.startswith("all "))
    assert row.split() == ["all", "1", "1", "0", "0", "0.000", "0.500", "0", "0", "0", "1"]


def test_an_unstable_prompt_set_evaluates_without_a_database(tmp_path: Path) -> None:
    """ADR-060 decision 3 holds for judged runs too: the service needs no store."""
    set_path = tmp_path / "colours.yaml"
    set_path.write_text(yaml.safe_dump({"id": "colours", "prompts": PROMPTS}))
    with chat_server(default=lambda body: answer("Blue.") if body["model"] == "m" else verdict(0.9)) as server:
        model = build_model(ModelContext("goldeneval.openai", {"base_url": server.base_url, "model": "m"}))
        judge = _judge(server.base_url, 1)
        results = EvaluationService(model, judge).run(prompt_tasks(load_prompt_set(set_path)))
    assert [r.outcome for r in results] == ["pass", "pass"]
    assert not list(tmp_path.glob("*.duckdb"))
