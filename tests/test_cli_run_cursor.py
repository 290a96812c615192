"""The CLI-run sensor's cursor (``pipelines.sensors``): a run is dated by when it was measured,
so a run stored late (a long CLI run) or in the same microsecond as another is still observed,
and none twice; a store empty at the first tick misses nothing stored later."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from goldeneval.core.records import StoredRun
from pipelines.sensors import LATE_RUN_WINDOW, _Seen

T0 = datetime(2026, 12, 1, 2, 0, tzinfo=UTC)


def _run(run_id: str, at: datetime) -> StoredRun:
    return StoredRun(
        "s", "fixed", "retrieval_hit_rate", 1.0, 1.0, 2, 2, 0,
        id=run_id, created_at=at, status="complete", details_json=None, provenance={},
    )  # fmt: skip


def test_an_empty_store_at_the_first_tick_misses_nothing_stored_later() -> None:
    first = _Seen.parse(None).after([])
    cursor = _Seen.parse(first.text())
    assert cursor.newer(_run("a", T0))


def test_runs_seen_at_the_first_tick_are_not_observed_and_later_ones_are_once() -> None:
    cursor = _Seen.parse(_Seen.parse(None).after([_run("old", T0)]).text())
    assert not cursor.newer(_run("old", T0))
    late = _run("late", T0 - timedelta(hours=3))  # measured before, stored after the tick
    same = _run("same", T0)  # the same microsecond as a run seen already
    assert cursor.newer(late) and cursor.newer(same)
    after = _Seen.parse(cursor.after([late, same]).text())
    assert not after.newer(late) and not after.newer(same)
    assert not after.newer(_run("ancient", T0 - LATE_RUN_WINDOW - timedelta(seconds=1)))


def test_the_cursor_forgets_runs_older_than_the_window() -> None:
    cursor = _Seen.parse(None).after([_run("a", T0)]).after([_run("b", T0 + 2 * LATE_RUN_WINDOW)])
    assert set(cursor.seen) == {"b"}
