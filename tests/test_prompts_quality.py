"""EvaluationQualityScoreProvider and QualityAwareModelSelector over a real result store."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from goldeneval.core.privacy import PrivacyMode
from goldeneval.prompts.details import PromptDetail
from goldeneval.prompts.evaluation import PromptRun
from goldeneval.prompts.quality import EvaluationQualityScoreProvider, QualityAwareModelSelector
from goldeneval.store import ResultStore

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _store_run(store: ResultStore, model: str, set_id: str, scores: list[float | None], minutes: int) -> None:
    results = tuple(
        PromptDetail(
            id=f"p{i}",
            status="ok" if score is not None else "error",
            stage=None if score is not None else "model",
            passed=None if score is None else score >= 0.5,
            score=score,
            latency_ms=1.0,
            error=None if score is not None else "boom",
        )
        for i, score in enumerate(scores)
    )
    run = PromptRun(
        kind="prompts",
        set_id=set_id,
        series=model,
        model_id=model,
        grader="deterministic",
        grader_identity="deterministic/v1",
        pass_threshold=0.5,
        results=results,
        started_at=T0 + timedelta(minutes=minutes),
        label_digest="prompts-v1:sha256:x",
        protocol="prompt-grading/v1",
        benchmark_fingerprint="prompt-benchmark-v1:sha256:x",
    )
    store.save_run(run.to_record(PrivacyMode.FULL))


@pytest.fixture
def store(tmp_path: Path) -> ResultStore:
    store = ResultStore(tmp_path / "s.duckdb")
    _store_run(store, "alpha", "set-a", [0.2, 0.2], 0)  # superseded by the next run of set-a
    _store_run(store, "alpha", "set-a", [0.6, 0.8], 1)
    _store_run(store, "alpha", "set-b", [1.0, 1.0], 2)
    _store_run(store, "alpha", "set-b", [0.0, None], 3)  # incomplete: never counted
    _store_run(store, "beta", "set-a", [0.9, 0.9], 4)
    _store_run(store, "gamma", "set-a", [0.1, 0.3], 5)
    return store


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_the_score_is_the_mean_of_the_latest_complete_run_per_set(store: ResultStore) -> None:
    provider = EvaluationQualityScoreProvider(store)
    assert provider.score("alpha") == pytest.approx((0.7 + 1.0) / 2)
    assert [run.set_id for run in provider.latest_runs("alpha")] == ["set-a", "set-b"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_model_without_runs_has_no_score(store: ResultStore) -> None:
    assert EvaluationQualityScoreProvider(store).score("delta") is None


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_the_selector_reranks_by_score_and_keeps_unscored_models_in_order_after(store: ResultStore) -> None:
    selector = QualityAwareModelSelector(EvaluationQualityScoreProvider(store))
    assert selector.rank(["zeta", "gamma", "delta", "alpha", "beta"]) == ["beta", "alpha", "gamma", "zeta", "delta"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_quality_command_prints_the_ranking(store: ResultStore) -> None:
    from click.testing import CliRunner

    from goldeneval.cli import main

    result = CliRunner().invoke(main, ["quality", "gamma", "delta", "beta", "--store", str(store.path)])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["1\tbeta\t0.900", "2\tgamma\t0.200", "3\tdelta\tno score"]
