"""The pass rate is ``passed / graded prompts`` (issue 42: a mutation to ``passed / all
prompts`` broke no test), and the quality score never averages across graders (one judge run
moved a model from 0.600 to 0.100)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.core.privacy import PrivacyMode
from goldeneval.prompts.details import PromptDetail
from goldeneval.prompts.evaluation import PromptRun, aggregate_prompts
from goldeneval.prompts.quality import EvaluationQualityScoreProvider
from goldeneval.store import ResultStore
from tests.chat_server import Reply, answer, chat_server, error, last_user_message

PROMPTS = [
    {"id": "right", "prompt": "What does a day ticket cost?", "reference": "7.80"},
    {"id": "sentence", "prompt": "When does the first ferry leave?", "reference": "08:00"},
    {"id": "wrong", "prompt": "What does a monthly pass cost?", "reference": "89.00"},
    {"id": "no-text", "prompt": "What does a 7-Day Ticket cost?", "reference": "41.00"},
]
REPLIES = {
    "What does a day ticket cost?": "7.80",
    "When does the first ferry leave?": "It leaves at 08:00.",
    "What does a monthly pass cost?": "It costs 98.00.",
}
"""The 7-Day Ticket prompt gets an HTTP 400: the prompt is an error, not graded."""


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_the_pass_rate_is_passed_over_graded_prompts_through_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "rate.yaml"
    path.write_text(yaml.safe_dump({"id": "rate-check", "prompts": PROMPTS}), encoding="utf-8")

    def reply(body: dict[str, Any]) -> Reply:
        question = last_user_message(body)
        return answer(REPLIES[question]) if question in REPLIES else error(400, "scripted bad request")

    with chat_server(default=reply) as server:
        args = ["prompts", "--set", str(path), "--model", "goldeneval.openai", "--model-option"]
        args += [f"base_url={server.base_url}", "--model-option", "model=m", "--store", str(tmp_path / "s.duckdb")]
        args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", "--format", "json"]
        result = CliRunner().invoke(main, args)
    document = json.loads(result.stdout)
    statuses = {p["id"]: (p["status"], p["passed"]) for p in document["prompts"]}
    assert statuses["no-text"][0] == "error"
    assert [statuses[i][1] for i in ("right", "sentence", "wrong")] == [True, True, False]
    overall = document["aggregates"]["overall"]
    assert (overall["prompts"], overall["graded"], overall["passed"]) == (4, 3, 2)
    assert overall["pass_rate"] == pytest.approx(2 / 3)  # not 2 / 4: an error is not a graded prompt
    (stored,) = ResultStore(tmp_path / "s.duckdb").list_runs()
    assert stored.pass_rate == pytest.approx(2 / 3)
    assert stored.complete is False


def _detail(pid: str, status: str, passed: bool | None, score: float | None) -> PromptDetail:
    return PromptDetail(
        id=pid,
        status=status,
        stage="model" if status == "error" else None,
        passed=passed,
        score=score,
        latency_ms=1.0,
        error="boom" if status == "error" else None,
    )


def test_errors_and_unstable_verdicts_are_counted_as_the_definition_says() -> None:
    details = [
        _detail("a", "ok", True, 1.0),
        _detail("b", "ok", False, 0.0),
        _detail("c", "unstable", None, 0.5),  # graded, not a pass
        _detail("d", "error", None, None),  # not graded
        _detail("e", "error", None, None),
    ]
    overall = aggregate_prompts(details).overall
    assert (overall.prompts, overall.graded, overall.errors, overall.passed) == (5, 3, 2, 1)
    assert overall.pass_rate == pytest.approx(1 / 3)
    assert overall.mean_score == pytest.approx(0.5)
    assert aggregate_prompts([_detail("d", "error", None, None)]).overall.pass_rate is None


T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _store(store: ResultStore, grader: str, set_id: str, score: float, minutes: int) -> None:
    run = PromptRun(
        kind="prompts",
        set_id=set_id,
        series="alpha",
        model_id="alpha",
        grader=grader,
        grader_identity=f"{grader}/v1",
        pass_threshold=0.5,
        results=(_detail("p", "ok", score >= 0.5, score),),
        started_at=T0 + timedelta(minutes=minutes),
        label_digest="prompts-v1:sha256:x",
        protocol="prompt-grading/v1",
        benchmark_fingerprint=f"prompt-benchmark-v1:sha256:{grader}",
    )
    store.save_run(run.to_record(PrivacyMode.FULL))


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_the_quality_score_never_averages_across_graders(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.duckdb")
    _store(store, "deterministic", "set-a", 0.6, 0)
    _store(store, "llm_judge", "set-a", 0.1, 1)  # newer, by another grader
    _store(store, "llm_judge", "set-b", 0.1, 2)  # a set only the judge graded
    assert EvaluationQualityScoreProvider(store).score("alpha") == pytest.approx(0.6)
    assert EvaluationQualityScoreProvider(store, grader="llm_judge").score("alpha") == pytest.approx(0.1)
    assert EvaluationQualityScoreProvider(store, grader="semantic").score("alpha") is None
    result = CliRunner().invoke(main, ["quality", "alpha", "--store", str(tmp_path / "s.duckdb"), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"model": "alpha", "quality_score": 0.6}]
    judged = ["quality", "alpha", "--grader", "llm_judge", "--store", str(tmp_path / "s.duckdb"), "--format", "json"]
    assert json.loads(CliRunner().invoke(main, judged).stdout) == [{"model": "alpha", "quality_score": 0.1}]
