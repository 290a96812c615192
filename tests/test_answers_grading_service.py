"""ADR-060 decision 3 and the fallback, which had no test (issue 24): one model call per
prompt, its latency recorded, :class:`EvaluationService` usable without a database; an
unknown grader falls back to the deterministic one even with a judge configured, and the
judge is then never called.  And the cosmetics: ``quality --format json`` prints rounded
scores, prompt runs say "prompts"."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.core.errors import InputError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.prompts.details import PromptDetail
from goldeneval.prompts.evaluation import EvaluationService, PromptRun, prompt_tasks
from goldeneval.prompts.golden import load_prompt_set
from goldeneval.prompts.graders import DeterministicGrader, GradingService, Judge
from goldeneval.prompts.models import ModelContext, build_model
from goldeneval.prompts.quality import EvaluationQualityScoreProvider, quality_json
from goldeneval.store import ResultStore
from tests.chat_server import Reply, answer, chat_server, last_user_message

PROMPTS = [
    {"id": "capital", "prompt": "Capital of France?", "reference": "Paris"},
    {"id": "sum", "prompt": "2+2?", "reference": "4"},
    {"id": "slow", "prompt": "Say slowly: yes", "reference": "yes"},
]


def _set(tmp_path: Path) -> Path:
    path = tmp_path / "tiny.yaml"
    path.write_text(yaml.safe_dump({"id": "tiny", "prompts": PROMPTS}))
    return path


def _reply(body: dict[str, Any]) -> Reply:
    prompt = last_user_message(body)
    if prompt.startswith("Say slowly"):
        return answer("yes", delay_s=0.3)
    return answer({"Capital of France?": "Paris", "2+2?": "4"}[prompt])


def test_one_call_per_prompt_with_its_latency_and_no_database(tmp_path: Path) -> None:
    with chat_server(default=_reply) as server:
        model = build_model(ModelContext("goldeneval.openai", {"base_url": server.base_url, "model": "m"}))
        results = EvaluationService(model, DeterministicGrader()).run(prompt_tasks(load_prompt_set(_set(tmp_path))))
    assert [last_user_message(r) for r in server.requests] == [p["prompt"] for p in PROMPTS]
    assert [r.id for r in results] == ["capital", "sum", "slow"]
    assert [(r.status, r.passed, r.outcome) for r in results] == [("ok", True, "pass")] * 3
    by_id = {r.id: r for r in results}
    assert by_id["slow"].latency_ms >= 300.0  # its own call, the server's 0.3 s in it
    assert all(r.latency_ms > 0 for r in results)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tiny.yaml"]  # nothing stored, no store opened


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_an_unknown_grader_with_a_judge_configured_falls_back_and_never_calls_the_judge(tmp_path: Path) -> None:
    with chat_server(default=_reply) as model_server, chat_server() as judge_server:
        judge = build_model(ModelContext("goldeneval.openai", {"base_url": judge_server.base_url, "model": "judge"}))
        service = GradingService(judge=Judge(judge, samples=3))
        choice = service.select("gpt-judge-9000")
        assert isinstance(choice.grader, DeterministicGrader) and choice.notice is not None
        result = CliRunner().invoke(
            main,
            ["prompts", "--set", str(_set(tmp_path)), "--model", "goldeneval.openai",
             "--model-option", f"base_url={model_server.base_url}", "--model-option", "model=m",
             "--grader", "gpt-judge-9000", "--judge-model", "goldeneval.openai",
             "--judge-option", f"base_url={judge_server.base_url}", "--judge-option", "model=judge",
             "--store", str(tmp_path / "s.duckdb"), "--no-progress", "--format", "json"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "unknown grader 'gpt-judge-9000' (known: deterministic, llm_judge" in result.stderr
    document = json.loads(result.stdout)
    assert (document["run"]["grader"], document["run"]["requested_grader"]) == ("deterministic", "gpt-judge-9000")
    assert len(model_server.requests) == 3
    assert judge_server.requests == []


def _store_run(store: ResultStore, model: str, set_id: str, scores: list[float]) -> None:
    results = tuple(
        PromptDetail(id=f"p{i}", status="ok", passed=s >= 0.5, score=s, latency_ms=1.0) for i, s in enumerate(scores)
    )
    run = PromptRun(
        kind="prompts",
        set_id=set_id,
        series=model,
        model_id=model,
        grader="deterministic",
        grader_identity="deterministic/v2",
        pass_threshold=0.5,
        results=results,
        started_at=datetime.now(UTC),
        label_digest="prompts-v1:sha256:x",
        protocol="prompt-grading/v1",
        benchmark_fingerprint="prompt-benchmark-v1:sha256:x",
    )
    store.save_run(run.to_record(PrivacyMode.FULL))


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"samples": 0}, r"^--judge-samples must be between 1 and 20, got 0$"),
        ({"samples": 21}, r"^--judge-samples must be between 1 and 20, got 21$"),
        ({"rubric": "vibes"}, r"^unknown judge rubric 'vibes'"),
    ],
)
def test_a_judge_built_in_python_is_checked_as_the_flags_are(given: dict[str, Any], message: str) -> None:
    """The Python door has no pydantic model in front of it: the judge checks itself."""
    model = build_model(ModelContext("goldeneval.openai", {"base_url": "http://127.0.0.1:9/v1", "model": "judge"}))
    with pytest.raises(InputError, match=message):
        Judge(model, **given)
    assert Judge(model, samples=20).samples == 20


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_quality_json_prints_rounded_scores(tmp_path: Path) -> None:
    store = ResultStore(tmp_path / "s.duckdb")
    _store_run(store, "alpha", "set-a", [0.7, 0.7])
    _store_run(store, "alpha", "set-b", [0.6, 0.6])
    assert EvaluationQualityScoreProvider(store).score("alpha") == 0.6499999999999999  # the exact mean of means
    args = ["quality", "alpha", "beta", "--store", str(tmp_path / "s.duckdb"), "--format", "json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "0.6499999999999999" not in result.output
    assert json.loads(result.stdout) == [
        {"model": "alpha", "quality_score": 0.65},
        {"model": "beta", "quality_score": None},
    ]
    assert quality_json([("m", 1 / 3)]) == [{"model": "m", "quality_score": 0.333333}]


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_prompt_run_says_prompts_and_an_answer_run_questions(tmp_path: Path) -> None:
    with chat_server(default=_reply) as server:
        result = CliRunner().invoke(
            main,
            ["prompts", "--set", str(_set(tmp_path)), "--model", "goldeneval.openai",
             "--model-option", f"base_url={server.base_url}", "--model-option", "model=m",
             "--store", str(tmp_path / "s.duckdb"), "--no-progress"],
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    header = lines[lines.index("Overall:") + 1].split()
    assert header[0] == "prompts" and "questions" not in result.output
    details = ResultStore(tmp_path / "s.duckdb").list_runs(with_details=True)[0].details
    assert details.unit == "prompts"
