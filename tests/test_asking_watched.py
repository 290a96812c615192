"""One asking thread watched by the caller (a timeout, one worker), and the thread-safety
declaration that ``--workers`` honours."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.core.workers import usable_workers
from goldeneval.retrieval.asking import ask_all

HANG_GUARD_S = 60
"""How long a call waits for the test at most, so that a broken build fails instead of hanging;
never a measure of speed (docs/testing.md)."""


class _Recording:
    """Returns the question as its ranking; notes the thread of every call and the most calls
    it ever saw in flight at once.  The call for ``hang_on`` blocks until :attr:`release` is set
    (the test sets it once it is done), and the first ``meet`` calls each wait until that many
    are in flight at once (a barrier: only concurrent calls get past it)."""

    thread_safe = True

    def __init__(self, pause_s: float = 0.0, hang_on: str | None = None, meet: int = 0) -> None:
        self.pause_s, self.hang_on = pause_s, hang_on
        self.threads: list[int] = []
        self.in_flight = 0
        self.most_in_flight = 0
        self.lock = threading.Lock()
        self.release = threading.Event()
        self.hung_call_returned = threading.Event()
        self.meet = meet
        self.barrier = threading.Barrier(meet) if meet else None

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        with self.lock:
            self.threads.append(threading.get_ident())
            self.in_flight += 1
            self.most_in_flight = max(self.most_in_flight, self.in_flight)
            meets = self.barrier is not None and len(self.threads) <= self.meet
        try:
            if meets and self.barrier is not None:
                self.barrier.wait(HANG_GUARD_S)
            if question == self.hang_on:
                self.release.wait(HANG_GUARD_S)
                self.hung_call_returned.set()
            time.sleep(self.pause_s)
            return [question]
        finally:
            with self.lock:
                self.in_flight -= 1


def test_a_hung_question_times_out_at_its_deadline_and_the_next_ones_are_still_asked() -> None:
    """A call that never returns by itself times out at its deadline and is abandoned: every
    question is answered while it is still stuck (it is not waited for), its recorded latency is
    at least its deadline, and the questions after it are asked on a fresh thread."""
    retriever = _Recording(hang_on="q3")
    texts = [f"q{i}" for i in range(8)]
    ticks: list[tuple[int, int]] = []
    try:
        answers = ask_all(
            retriever, texts, 5, timeout_s=0.2, progress=lambda n: ticks.append((n, threading.get_ident()))
        )
        assert not retriever.hung_call_returned.is_set()  # abandoned, not waited for
    finally:
        retriever.release.set()
    assert answers.errors == [None, None, None, "timed out after 0.2 s", None, None, None, None]
    assert answers.returned == [(t,) for t in texts[:3]] + [()] + [(t,) for t in texts[4:]]
    assert answers.latency_ms[3] >= 200  # the product's own record: never below the deadline
    # Every question is ticked once, always from the caller's thread.
    assert sum(n for n, _ in ticks) == len(texts)
    assert {ident for _, ident in ticks} == {threading.get_ident()}
    # One asking thread before the hang, a fresh one after it: never the caller's.
    before, after = set(retriever.threads[:4]), set(retriever.threads[4:])
    assert len(before) == 1 and len(after) == 1 and before != after
    assert threading.get_ident() not in before | after


def test_a_late_answer_is_a_timeout_even_when_it_returns() -> None:
    """A call that returns after its budget (0.15 s for 0.1 s: load only makes it later) is a
    timeout, not a success."""
    answers = ask_all(_Recording(pause_s=0.15), ["a", "b"], 5, timeout_s=0.1)
    assert answers.errors == ["timed out after 0.1 s"] * 2
    assert answers.returned == [(), ()]


def test_per_question_budgets_are_each_questions_own() -> None:
    """The question with the small budget times out; those around it, answered at once, do not."""
    retriever = _Recording(hang_on="b")
    try:
        answers = ask_all(retriever, ["a", "b", "c"], 5, timeout_s=1.0, budgets_s=[1.0, 0.05, 1.0])
    finally:
        retriever.release.set()
    assert answers.errors == [None, "timed out after 1 s", None]
    assert answers.returned == [("a",), (), ("c",)]


def test_a_retriever_declaring_itself_not_thread_safe_is_asked_one_question_at_a_time() -> None:
    class Unsafe(_Recording):
        thread_safe = False

    unsafe = Unsafe(pause_s=0.02)
    answers = ask_all(unsafe, [f"q{i}" for i in range(12)], 5, timeout_s=5.0, workers=4)
    assert answers.errors == [None] * 12
    assert unsafe.most_in_flight == 1
    safe = _Recording(meet=2)  # its first two calls pass only when both are in flight at once
    answers = ask_all(safe, [f"q{i}" for i in range(12)], 5, timeout_s=HANG_GUARD_S, workers=4)
    assert answers.errors == [None] * 12
    assert safe.most_in_flight > 1  # the same run with a thread-safe retriever is concurrent


def test_usable_workers_says_why_it_asks_fewer() -> None:
    class Unsafe:
        thread_safe = False

        def retrieve(self, question: str, limit: int) -> Sequence[str]:
            return []

    workers, warning = usable_workers(8, "questions", retriever=Unsafe())
    assert workers == 1
    assert warning == (
        "--workers 8 ignored: the retriever declares thread_safe = False, so the questions are asked one at a time"
    )
    assert usable_workers(1, "questions", retriever=Unsafe()) == (1, None)
    assert usable_workers(8, "questions", retriever=_Recording()) == (8, None)


class _UnsafePlugin:
    """A plug-in that must not be called concurrently."""

    thread_safe = False

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        return []


def unsafe_factory(context: object) -> _UnsafePlugin:
    return _UnsafePlugin()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_run_warns_when_workers_are_ignored(tmp_path: Path) -> None:
    args = ["retrieval", "--set", "transit-sample", "--retriever", f"{__name__}:unsafe_factory", "--workers", "4"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    result = CliRunner().invoke(main, [*args, "--format", "json"])
    assert result.exit_code == 0, result.output
    expected = (
        "--workers 4 ignored: the retriever declares thread_safe = False, so the questions are asked one at a time"
    )
    assert f"goldeneval: warning: {expected}" in result.stderr
    assert expected in json.loads(result.stdout)["warnings"]
