"""The collector runs less often while the pipeline works, and is restored after it."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from goldeneval.core.collector import BULK_THRESHOLDS, fewer_collections
from goldeneval.retrieval import evaluation, pipeline
from goldeneval.retrieval import scoring as scoring_module
from goldeneval.retrieval.spec import RunSpec

SAMPLE_SET = Path(pipeline.__file__).parents[1] / "sample" / "transit" / "golden.yaml"


@pytest.fixture
def default_thresholds() -> Iterator[tuple[int, int, int]]:
    saved = gc.get_threshold()
    gc.set_threshold(700, 10, 10)
    yield gc.get_threshold()
    gc.set_threshold(*saved)


def test_the_thresholds_are_raised_inside_and_restored_after(default_thresholds: tuple[int, int, int]) -> None:
    with fewer_collections():
        assert gc.get_threshold() == BULK_THRESHOLDS
        with fewer_collections():  # nested: left as it is
            assert gc.get_threshold() == BULK_THRESHOLDS
        assert gc.get_threshold() == BULK_THRESHOLDS
    assert gc.get_threshold() == default_thresholds


def test_they_are_restored_when_the_block_raises(default_thresholds: tuple[int, int, int]) -> None:
    with pytest.raises(KeyboardInterrupt), fewer_collections():
        raise KeyboardInterrupt
    assert gc.get_threshold() == default_thresholds


SEEN: list[tuple[int, int, int]] = []
"""The collector's thresholds at each call of the retriever below."""


class _SeesTheThresholds:
    """A retriever that records the collector's thresholds while it is asked."""

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        SEEN.append(gc.get_threshold())
        return ["platform-screen-doors"]


def factory(context: object) -> _SeesTheThresholds:
    return _SeesTheThresholds()


def test_the_pipeline_scores_with_fewer_collections_and_asks_with_the_usual_ones(
    default_thresholds: tuple[int, int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    SEEN.clear()
    scoring: list[tuple[int, int, int]] = []
    score_answers = scoring_module.score_answers

    def recording(*args: Any, **kwargs: Any) -> Any:
        scoring.append(gc.get_threshold())
        return score_answers(*args, **kwargs)

    monkeypatch.setattr(evaluation, "score_answers", recording)
    spec = RunSpec(set_ref=str(SAMPLE_SET), retriever_id=f"{__name__}:factory", series="sees", timeout_s=None)
    run = pipeline.evaluate(spec)
    assert run.aggregates.overall.questions == len(SEEN) > 0
    assert set(SEEN) == {default_thresholds}
    assert scoring == [BULK_THRESHOLDS]
    assert gc.get_threshold() == default_thresholds


FREED: list[int] = []
"""Reference cycles the retriever below made that the collector has freed."""
CYCLES_A_CALL = 30
"""Enough for the default young threshold (700 allocations) to be passed a few times in a run."""


class _Cycle:
    def __init__(self) -> None:
        self.me = self
        self.payload = bytearray(64 * 1024)  # what a real plug-in keeps alive: a response body

    def __del__(self) -> None:
        FREED.append(1)


class _MakesCycles:
    """Makes a reference cycle on every call, as keeping a caught exception with its frame does."""

    calls = 0

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        for _ in range(CYCLES_A_CALL):
            _Cycle()
        _MakesCycles.calls += 1
        return ["platform-screen-doors"]


def cycles(context: object) -> _MakesCycles:
    return _MakesCycles()


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_plugins_reference_cycles_are_collected_during_the_run(default_thresholds: tuple[int, int, int]) -> None:
    """Plug-in code runs with the thresholds found before the pipeline (what it allocates is
    collected as usual), so its garbage does not pile up until the run ends."""
    gc.collect()
    FREED.clear()
    _MakesCycles.calls = 0
    spec = RunSpec(set_ref=str(SAMPLE_SET), retriever_id=f"{__name__}:cycles", series="cycles", timeout_s=None)
    with fewer_collections():  # as the CLI runs every command
        pipeline.evaluate(spec)
        freed_during_the_run = len(FREED)
    made = _MakesCycles.calls * CYCLES_A_CALL
    assert _MakesCycles.calls >= 80
    assert freed_during_the_run >= made // 2
    assert gc.get_threshold() == default_thresholds
