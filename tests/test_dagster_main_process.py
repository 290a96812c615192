"""The main command as a one-shot process (issue 26): its jobs run with the collector tuned as
the ``goldeneval`` command's are, and what it allocated is frozen before the process ends.
Counted behaviour, never a timing."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import pipelines.main
from goldeneval.core.collector import BULK_THRESHOLDS


def test_main_runs_its_jobs_with_fewer_collections_and_restores_the_thresholds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
    seen: list[tuple[int, int, int]] = []

    def run_everything(home: Path) -> int:
        seen.append(gc.get_threshold())
        return 0

    monkeypatch.setattr(pipelines.main, "_run_everything", run_everything)
    before = gc.get_threshold()
    assert pipelines.main.main([]) == 0
    assert seen == [BULK_THRESHOLDS]
    assert gc.get_threshold() == before


def test_ending_freezes_what_the_process_allocated() -> None:
    before = gc.get_freeze_count()
    allocated = [object()]  # tracked by the collector, in its youngest generation
    try:
        pipelines.main.ending()
        assert gc.get_freeze_count() > before
    finally:
        gc.unfreeze()
    assert allocated


def test_the_command_ends_the_process_with_mains_status(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []

    def main(argv: list[str] | None = None) -> int:
        calls.append("main")
        return 1

    monkeypatch.setattr(pipelines.main, "main", main)
    monkeypatch.setattr(pipelines.main, "ending", lambda: calls.append("ending"))
    with pytest.raises(SystemExit) as ended:
        pipelines.main.command([])
    assert ended.value.code == 1
    assert calls == ["main", "ending"]
