"""Where calls to a retriever run when they may hang: a bounded pool of worker threads
(:func:`run_tasks`) and one watched asking thread (:func:`ask_watched`), each abandoning a
call that passes its question's deadline and going on without it.

The machinery under :mod:`goldeneval.retrieval.asking`, which decides which of them a round
takes; it knows tasks and deadlines, and leaves what a call may return to
:mod:`goldeneval.retrieval.asking_calls`.
"""

from __future__ import annotations

import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from goldeneval.retrieval.asking_calls import Answers, QuestionTimeout, checked_ids, describe
from goldeneval.retrieval.retrievers.base import Retriever

__all__ = ["Task", "ask_watched", "run_tasks"]


@dataclass(eq=False)
class Task:
    """One call to make: a single question (``indexes`` of length 1) or a batch."""

    indexes: tuple[int, ...]
    run: Callable[[], Any]
    budget_s: float | None
    """How long it may run (None: no limit)."""
    batch: bool = False
    started: float | None = None
    """``perf_counter`` when a worker began it (None while queued)."""
    outcome: Any = None
    error: BaseException | None = None
    elapsed_s: float = 0.0
    finished: bool = False
    """Set by its worker (under the pool's lock) when the call returned in time to be reported."""
    done: bool = False


@dataclass(eq=False)
class _Worker:
    thread: threading.Thread
    retired: threading.Event


class _Pool:
    """``size`` daemon threads taking tasks from one queue and handing outcomes back on another.

    The caller (one thread) watches the deadlines: when a running task passes its timeout, its
    worker is retired (it drops whatever it later returns and exits) and a fresh one replaces
    it, so the pool keeps its size while a hung call sleeps on.
    """

    def __init__(self, size: int) -> None:
        self.size = size
        self.inbox: queue.SimpleQueue[Task | None] = queue.SimpleQueue()
        self.outbox: queue.SimpleQueue[Task] = queue.SimpleQueue()
        self.workers: list[_Worker] = []
        self.running: dict[Task, _Worker] = {}
        self._by_event: dict[int, _Worker] = {}
        self._lock = threading.Lock()
        """Orders a worker's "finished" against the caller's "abandoned" for the same task."""
        for _ in range(size):
            self._hire()

    def _hire(self) -> None:
        retired = threading.Event()
        thread = threading.Thread(target=self._work, args=(retired,), daemon=True, name="goldeneval-retrieve")
        worker = _Worker(thread, retired)
        self.workers.append(worker)
        self._by_event[id(retired)] = worker
        thread.start()

    def _work(self, retired: threading.Event) -> None:
        worker = self._by_event[id(retired)]
        while not retired.is_set():
            task = self.inbox.get()
            if task is None:
                return
            with self._lock:
                self.running[task] = worker
                task.started = time.perf_counter()
            try:
                outcome, error = task.run(), None
            except BaseException as exc:  # the task's own error, reported by the caller
                outcome, error = None, exc
            elapsed_s = time.perf_counter() - task.started
            with self._lock:
                if retired.is_set():
                    return  # timed out already: the caller has moved on
                self.running.pop(task, None)
                task.outcome, task.error, task.elapsed_s = outcome, error, elapsed_s
                task.finished = True
            self.outbox.put(task)

    def retire(self, task: Task) -> bool:
        """Give up on a running task: its worker exits after the call and is replaced.

        False when the call has returned meanwhile (its outcome is on its way to the caller):
        the worker, which may already be running another task, is kept.
        """
        with self._lock:
            if task.finished:
                return False
            worker = self.running.pop(task, None)
            if worker is None:
                return False
            worker.retired.set()
            self.workers.remove(worker)
        self._hire()
        return True

    def close(self) -> None:
        for _ in self.workers:
            self.inbox.put(None)


def run_tasks(
    tasks: Iterator[Task], workers: int, timeout_s: float | None, on_done: Callable[[Task], Iterable[Task]]
) -> None:
    """Run ``tasks`` (and whatever ``on_done`` adds) with at most ``workers`` in flight.

    ``on_done`` is called on the caller's thread with each finished or timed-out task (a
    timed-out one, past its ``budget_s``, has ``error`` set to :class:`QuestionTimeout`
    naming ``timeout_s``) and may return follow-up tasks, which run before the remaining ones.
    Without a timeout and with one worker the tasks run inline, on the caller's thread.
    """
    if workers == 1 and timeout_s is None:
        _run_inline(tasks, on_done)
        return
    pool = _Pool(workers)
    follow_ups: deque[Task] = deque()
    in_flight: list[Task] = []
    source = iter(tasks)
    try:
        while True:
            while len(in_flight) < workers:
                task = follow_ups.popleft() if follow_ups else next(source, None)
                if task is None:
                    break
                in_flight.append(task)
                pool.inbox.put(task)
            if not in_flight:
                return
            finished = _next_finished(pool, in_flight, timeout_s)
            for task in finished:
                in_flight.remove(task)
                task.done = True
                follow_ups.extend(on_done(task))
    finally:
        pool.close()


def _run_inline(tasks: Iterator[Task], on_done: Callable[[Task], Iterable[Task]]) -> None:
    """:func:`run_tasks` on the caller's thread: a retriever bound to the thread that built
    it (an SQLite connection) works as it does when it is asked one question at a time."""
    follow_ups: deque[Task] = deque()
    source = iter(tasks)
    while True:
        task = follow_ups.popleft() if follow_ups else next(source, None)
        if task is None:
            return
        task.started = time.perf_counter()
        try:
            task.outcome = task.run()
        except BaseException as exc:  # the task's own error: on_done re-raises a Ctrl-C
            task.error = exc
        task.elapsed_s = time.perf_counter() - task.started
        task.finished = task.done = True
        follow_ups.extend(on_done(task))


_POLL_S = 0.25
"""Longest single wait for an outcome: keeps the waiting thread responsive to Ctrl-C."""


def _next_finished(pool: _Pool, in_flight: list[Task], timeout_s: float | None) -> list[Task]:
    """Wait for the next task to finish, or for running tasks to pass their budget."""
    while True:
        now = time.perf_counter()
        wait = _POLL_S
        overdue: list[Task] = []
        for task in in_flight:
            if task.budget_s is None:
                continue
            if task.started is None:  # about to start: its deadline is at least a budget away
                wait = min(wait, task.budget_s)
                continue
            left = task.started + task.budget_s - now
            if left <= 0:
                overdue.append(task)
            else:
                wait = min(wait, left + 0.001)
        # A task that returned before the caller noticed its deadline is not abandoned (its
        # worker may be running the next task): its outcome is read below, its time checked.
        timed_out = [task for task in overdue if pool.retire(task)]
        if timed_out:
            for task in timed_out:
                task.error = QuestionTimeout(f"timed out after {timeout_s:g} s")
                task.elapsed_s = now - (task.started or now)
            return timed_out
        try:
            task = pool.outbox.get(timeout=wait)
        except queue.Empty:
            continue
        if not task.done and task in in_flight:
            if task.budget_s is not None and task.elapsed_s > task.budget_s:
                task.outcome, task.error = None, QuestionTimeout(f"timed out after {timeout_s:g} s")
            return [task]


class _Watched:
    """One thread asks the questions in order; the caller only watches the current deadline.

    The common case (the CLI always passes a timeout, most retrievers take one worker) would
    otherwise hand every question to a pool thread and its outcome back through two queues.
    Here the asking thread writes each outcome straight into ``answers`` and the caller wakes
    only to tick progress and to check whether the question in flight has passed its budget.
    When it has, the caller takes the question over as a timeout under the lock, the asking
    thread (hung in the retriever) is abandoned to finish or sleep on, and a fresh thread
    carries on from the next question.  ``generation`` tells an abandoned thread that whatever
    it returns is no longer wanted.
    """

    def __init__(
        self,
        retriever: Retriever,
        texts: Sequence[str],
        limits: Sequence[int],
        budgets: Sequence[float | None],
        answers: Answers,
        timeout_label: str,
    ) -> None:
        self.retriever, self.texts, self.limits, self.budgets, self.answers = retriever, texts, limits, budgets, answers
        self.timeout_label = timeout_label
        """How messages name the timeout: ``5 s``."""
        self.lock = threading.Lock()
        self.generation = 0
        self.current: int | None = None
        """The question being asked (None between questions)."""
        self.started = 0.0
        self.returned: int | None = None
        """The last question whose call has returned (written without the lock, read under it:
        a call that returned in time is never taken for a timeout while it waits to be recorded)."""
        self.next = 0
        """The first question not yet taken by the asking thread."""
        self.answered = 0
        self.interrupted: BaseException | None = None
        self.finished = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._ask, args=(self.generation,), daemon=True, name="goldeneval-retrieve").start()

    def _ask(self, generation: int) -> None:
        retriever, texts, limits, budgets, answers, lock = (
            self.retriever, self.texts, self.limits, self.budgets, self.answers, self.lock,
        )  # fmt: skip
        n = len(texts)
        while True:
            with lock:
                if generation != self.generation:
                    return
                i = self.next
                if i >= n:
                    self.finished.set()
                    return
                self.next, self.current = i + 1, i
                self.started = started = time.perf_counter()
            limit = limits[i]
            try:
                ids, error = checked_ids(retriever.retrieve(texts[i], limit), limit), None
            except BaseException as exc:  # the question's own error; a Ctrl-C ends the run
                ids, error = (), exc
            self.returned = i
            elapsed_s = time.perf_counter() - started
            with lock:
                if generation != self.generation:
                    return  # timed out already: the caller has moved on
                budget = budgets[i]
                if budget is not None and elapsed_s > budget:
                    ids, error = (), QuestionTimeout(f"timed out after {self.timeout_label}")
                answers.latency_ms[i] = elapsed_s * 1000.0
                if error is None:
                    answers.returned[i] = ids
                elif isinstance(error, KeyboardInterrupt):
                    self.interrupted = error
                    self.finished.set()
                    return
                else:
                    answers.errors[i] = describe(error)
                self.current = None
                self.answered += 1

    def abandon_if_overdue(self, now: float) -> float:
        """Time the question in flight out when it has passed its budget (then start a fresh
        asking thread); return how long the caller may sleep before the next check."""
        with self.lock:
            i = self.current
            if i is None:  # between questions
                return self._until_next()
            if self.returned == i:  # returned in time, about to be recorded
                return 0.001
            budget = self.budgets[i]
            if budget is None:
                return _POLL_S
            left = self.started + budget - now
            if left > 0:
                return min(_POLL_S, left + 0.001)
            self.generation += 1
            self.current = None
            self.answers.errors[i] = f"timed out after {self.timeout_label}"
            self.answers.latency_ms[i] = (now - self.started) * 1000.0
            self.answered += 1
            wait = self._until_next()
        self.start()
        return wait

    def _until_next(self) -> float:
        """The caller's wait while no question is in flight: the next one's deadline is at
        least its budget away."""
        upcoming = self.budgets[self.next] if self.next < len(self.budgets) else None
        return _POLL_S if upcoming is None else min(_POLL_S, upcoming)


def ask_watched(
    retriever: Retriever,
    texts: Sequence[str],
    limits: Sequence[int],
    budgets: Sequence[float | None],
    timeout_s: float | None,
    answers: Answers,
    tick: Callable[[int], None],
) -> None:
    """A timeout and one worker: see :class:`_Watched`.  Progress is ticked from the caller's
    thread (a progress bar is not asked to be thread-safe)."""
    watched = _Watched(retriever, texts, limits, budgets, answers, f"{timeout_s:g} s")
    ticked = 0
    wait = watched.abandon_if_overdue(time.perf_counter())  # nothing in flight yet: the first deadline
    watched.start()
    while True:
        done = watched.finished.wait(wait)
        answered = watched.answered
        if answered > ticked:
            tick(answered - ticked)
            ticked = answered
        if watched.interrupted is not None:
            raise watched.interrupted
        if done:
            return
        wait = watched.abandon_if_overdue(time.perf_counter())
