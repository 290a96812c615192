"""Defect 6: first runs of one series evaluated at the same moment give exactly one
``baseline``; every other run is compared.

Eight ``goldeneval retrieval`` processes evaluate at once: a plug-in holds each at its first
question until all eight have started (so every run's ``created_at`` is earlier than any
commit), then lets the one that started last commit first and the one that started first
commit last.  Before the fix, the first to commit saw no earlier run and was the baseline,
and the run that started first, committed last, saw no run created before it and was a
baseline too."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from datetime import UTC, datetime, timedelta

import pytest

from goldeneval.cli import ExitCode
from goldeneval.core.gate import ComparisonState
from goldeneval.history.comparison import compare_with_history
from goldeneval.store import RunRecord, StoreLocation, open_store
from tests.conftest import CliWorkspace
from tests.records import details, question

RUNS = 8

BARRIER_PLUGIN = textwrap.dedent(
    """
    import os
    import time
    from pathlib import Path

    from goldeneval.core.provenance import Provenance


    class AllAtOnce:
        def __init__(self):
            self.waited = False

        def retrieve(self, question, limit):
            if not self.waited:
                self.waited = True
                self._wait_for_the_others()
            return ["a"]

        def _wait_for_the_others(self):
            folder = Path(os.environ["BARRIER"])
            (folder / f"{os.getpid()}.tmp").write_text(repr(time.time()))
            (folder / f"{os.getpid()}.tmp").rename(folder / f"{os.getpid()}.started")
            runs = int(os.environ["RUNS"])
            deadline = time.monotonic() + 120
            while len(list(folder.glob("*.started"))) < runs and time.monotonic() < deadline:
                time.sleep(0.02)
            started = sorted(float(p.read_text()) for p in folder.glob("*.started"))
            later = sum(1 for other in started if other > float((folder / f"{os.getpid()}.started").read_text()))
            time.sleep(0.3 * later)  # the last to start commits first

        def provenance(self):
            return Provenance(
                corpus_revision="rev-1",
                model_revision="not_applicable",
                chunking_identity="not_applicable",
                pipeline_identity="all-at-once",
            )


    def build(context):
        return AllAtOnce()
    """
)


@pytest.mark.slow  # eight real goldeneval processes
def test_concurrent_first_runs_of_one_series_give_exactly_one_baseline(
    cli_workspace: CliWorkspace, store_location: StoreLocation
) -> None:
    root = cli_workspace.root
    (root / "barrier_plugin.py").write_text(BARRIER_PLUGIN)
    barrier = root / "barrier"
    barrier.mkdir()
    store = store_location.url or str(store_location.path)
    command = [sys.executable, "-m", "goldeneval.cli", "retrieval", "--set", str(cli_workspace.set_path)]
    command += ["--retriever", "barrier_plugin:build", "--store", store, "--no-progress", "--format", "json"]
    env = {**os.environ, "PYTHONPATH": str(root), "BARRIER": str(barrier), "RUNS": str(RUNS)}
    processes = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(RUNS)
    ]
    outputs = []
    deadline = time.monotonic() + 300
    for process in processes:
        stdout, stderr = process.communicate(timeout=max(1.0, deadline - time.monotonic()))
        assert process.returncode == ExitCode.OK, stderr
        outputs.append(json.loads(stdout))
    states = Counter(output["verdict"]["state"] for output in outputs)
    assert states == {"baseline": 1, "comparable": RUNS - 1}
    runs = open_store(store_location).list_runs()
    assert len(runs) == RUNS
    compared_with = {output["verdict"]["previous_run_id"] for output in outputs} - {None}
    assert compared_with <= {run.id for run in runs}


T0 = datetime(2026, 11, 1, 2, 0, tzinfo=UTC)


def _record(at: datetime) -> RunRecord:
    return RunRecord(
        set_id="s",
        model="r1",
        grader="retrieval_hit_rate",
        pass_rate=1.0,
        mean_score=1.0,
        question_count=1,
        scored_count=1,
        error_count=0,
        details=details([question("q1", documents=["d1"])]),
        created_at=at,
        label_digest="labels",
        benchmark_fingerprint="benchmark",
    )


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_run_measured_first_but_stored_second_is_compared_with_the_one_stored_before_it(
    store_location: StoreLocation,
) -> None:
    store = open_store(store_location)
    later = store.save_run_in_turn(_record(T0 + timedelta(seconds=1)))
    earlier = store.save_run_in_turn(_record(T0))
    assert (later.preceded, earlier.preceded) == (False, True)
    first = compare_with_history(store, later.stored, preceded=later.preceded)
    second = compare_with_history(store, earlier.stored, preceded=earlier.preceded)
    assert (first.state, second.state) == (ComparisonState.BASELINE, ComparisonState.COMPARABLE)
    assert second.previous_run_id == later.stored.id
    # judged afterwards, from the history alone, the one measured first is the baseline
    assert compare_with_history(store, earlier.stored).state is ComparisonState.BASELINE
    assert compare_with_history(store, later.stored).previous_run_id == earlier.stored.id


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_saving_a_run_again_says_nothing_about_what_preceded_it(store_location: StoreLocation) -> None:
    store = open_store(store_location)
    saved = store.save_run_in_turn(_record(T0), "fixed-id")
    again = store.save_run_in_turn(_record(T0), "fixed-id")
    assert (saved.preceded, again.preceded, again.stored.id) == (False, None, "fixed-id")
