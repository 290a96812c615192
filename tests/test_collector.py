"""The collector runs less often while the pipeline works, and is restored after it."""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from goldeneval import pipeline
from goldeneval.collector import BULK_THRESHOLDS, fewer_collections
from goldeneval.spec import RunSpec

SAMPLE_SET = Path(pipeline.__file__).parent / "sample" / "transit" / "golden.yaml"


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


def test_the_pipeline_evaluates_with_fewer_collections(default_thresholds: tuple[int, int, int]) -> None:
    SEEN.clear()
    spec = RunSpec(set_ref=str(SAMPLE_SET), retriever_id=f"{__name__}:factory", series="sees", timeout_s=None)
    run = pipeline.evaluate(spec)
    assert run.aggregates.overall.questions == len(SEEN) > 0
    assert set(SEEN) == {BULK_THRESHOLDS}
    assert gc.get_threshold() == default_thresholds
