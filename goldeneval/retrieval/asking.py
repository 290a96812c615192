"""Asking a retriever every question: single calls, batches and a bounded pool of threads.

This is the evaluator's only contact with retriever code, so every rule about what a call
may do lives here:

* **Ranked ids only.** ``retrieve`` must return an ordered iterable of strings; a set, a
  string or a mapping is refused, an endless generator is cut at the limit.
* **One call per question per round.** :func:`ask_all` asks each question once, for its
  limit; the evaluator decides which rankings to ask for again, deeper (the over-fetch of
  :mod:`goldeneval.retrieval.evaluation`), from the whole run's arrays, and gives each question what is
  left of its timeout as its budget.
* **Per-question timeouts, exactly.** A question is an error when *its* calls take longer
  than ``timeout_s`` together.  Calls run on worker threads that the caller never joins: a
  call that hangs is abandoned (its thread is retired and replaced) and the run goes on.
* **Errors belong to their question.** An exception, ``sys.exit()`` or any other
  ``BaseException`` (``GeneratorExit``, ``asyncio.CancelledError``) inside the retriever
  becomes that question's error, never a miss and never the end of the run; only
  ``KeyboardInterrupt`` (Ctrl-C) ends it.
* **Batches** (:meth:`~goldeneval.retrieval.retrievers.base.BatchRetriever.retrieve_batch`, optional):
  a batch is trusted only when it returns one well-formed ranking per question within one
  question's timeout.  Otherwise its questions are asked again one by one, so that an error or
  a timeout is still pinned on the question that caused it.  A batched question's latency is
  its share of the batch's time (the batch time divided by its size).
* **Workers.** ``workers`` calls (single or batch) are in flight at once, for retrievers that
  wait on the network; the answers come back in question order whatever order they finish in.
  A retriever is assumed thread-safe unless it says ``thread_safe = False``
  (:func:`goldeneval.core.workers.usable_workers`).

Without a timeout and with one worker every call runs inline on the caller's thread: no
thread hand-off, so a fast in-memory retriever pays nothing for the machinery above.  With a
timeout and one worker (what the CLI does by default) one thread asks every question in turn
and the caller only watches the deadline of the question in flight: no hand-off per question
either, and a hung call is still abandoned at its deadline.
"""

from __future__ import annotations

import itertools
import queue
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, cast

from goldeneval.core.collector import plugin_collections
from goldeneval.core.errors import one_line
from goldeneval.core.text_files import is_unicode_text
from goldeneval.core.workers import usable_workers
from goldeneval.retrieval.defaults import DEFAULT_BATCH_SIZE
from goldeneval.retrieval.retrievers.base import Retriever

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "Answers",
    "QuestionTimeout",
    "ask_all",
    "batch_method",
    "checked_ids",
]

_UNORDERED = (str, bytes, set, frozenset, Mapping)
"""What ``retrieve`` must not return: no ranking (a set's order changes from run to run)."""


@dataclass
class Answers:
    """What the retriever returned for each question, in question order (columns, not objects)."""

    returned: list[tuple[str, ...]]
    """The raw ranking of each question (empty for an errored question)."""
    errors: list[str | None]
    """The error of each question, or None."""
    latency_ms: list[float]


class QuestionTimeout(Exception):
    """A question's calls took longer than its timeout."""


def batch_method(retriever: Retriever) -> Callable[[Sequence[str], int], Any] | None:
    """The retriever's ``retrieve_batch`` method, when it has one."""
    method = getattr(retriever, "retrieve_batch", None)
    return method if callable(method) else None


def checked_ids(value: object, limit: int, method: str = "retrieve") -> tuple[str, ...]:
    """The first ``limit`` ids of a ranking, checked to be an ordered iterable of strings.

    Called once per question: a list or a tuple (what retrievers return) skips the abstract
    base class checks, a tuple no longer than ``limit`` is kept as it is, and the ids are
    checked to be strings by one C-level join (the loop below only names the culprit)."""
    exact = type(value) is tuple or type(value) is list
    if not exact and (isinstance(value, _UNORDERED) or not isinstance(value, Iterable)):
        raise TypeError(f"{method}() must return ranked ids (a list, tuple or iterator), got {type(value).__name__}")
    cut = max(limit, 0)
    if isinstance(value, tuple) and exact and len(value) <= cut:
        ids: tuple[Any, ...] = value
    elif isinstance(value, (list, tuple)):
        ids = tuple(value[:cut])
    else:
        ids = tuple(itertools.islice(cast(Iterable[Any], value), cut))
    try:
        joined = "".join(ids)
    except TypeError:
        for item in ids:
            if not isinstance(item, str):
                raise TypeError(f"{method}() returned a non-string id {one_line(repr(item), 80)}") from None
        raise
    if not joined.isascii() and not is_unicode_text(joined):
        bad = next(item for item in ids if not is_unicode_text(item))
        raise ValueError(
            f"{method}() returned an id that is not Unicode text (a lone surrogate, which no store, "
            f"table or JSON output can hold): {one_line(repr(bad), 80)}"
        )
    return ids


def describe(exc: BaseException) -> str:
    """A question's error message: the exception's class and its first line, with any lone
    surrogate in what the plug-in said written as its escape (the message is stored)."""
    if isinstance(exc, QuestionTimeout):
        return str(exc)
    text = f"{type(exc).__name__}: {one_line(str(exc))}"
    return text if text.isascii() or is_unicode_text(text) else text.encode("utf-8", "backslashreplace").decode("utf-8")


# ---------------------------------------------------------------------------------- the pool


@dataclass(eq=False)
class _Task:
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
        self.inbox: queue.SimpleQueue[_Task | None] = queue.SimpleQueue()
        self.outbox: queue.SimpleQueue[_Task] = queue.SimpleQueue()
        self.workers: list[_Worker] = []
        self.running: dict[_Task, _Worker] = {}
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

    def retire(self, task: _Task) -> bool:
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


def _run_tasks(
    tasks: Iterator[_Task], workers: int, timeout_s: float | None, on_done: Callable[[_Task], Iterable[_Task]]
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
    follow_ups: deque[_Task] = deque()
    in_flight: list[_Task] = []
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


def _run_inline(tasks: Iterator[_Task], on_done: Callable[[_Task], Iterable[_Task]]) -> None:
    """:func:`_run_tasks` on the caller's thread: a retriever bound to the thread that built
    it (an SQLite connection) works as it does when it is asked one question at a time."""
    follow_ups: deque[_Task] = deque()
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


def _next_finished(pool: _Pool, in_flight: list[_Task], timeout_s: float | None) -> list[_Task]:
    """Wait for the next task to finish, or for running tasks to pass their budget."""
    while True:
        now = time.perf_counter()
        wait = _POLL_S
        overdue: list[_Task] = []
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


# ---------------------------------------------------------------------------------- asking


@plugin_collections()  # the retriever's own garbage is collected as usual (goldeneval.core.collector)
def ask_all(
    retriever: Retriever,
    texts: Sequence[str],
    limits: int | Sequence[int],
    *,
    timeout_s: float | None,
    budgets_s: Sequence[float] | None = None,
    workers: int = 1,
    batch_size: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> Answers:
    """Ask every question (``texts``, in order) once, for ``limits`` ids (one limit for all,
    or one per question), and collect the raw rankings, errors and latencies.

    ``timeout_s`` names the per-question timeout in messages; ``budgets_s`` (default: all
    ``timeout_s``) is what each question may still spend, when earlier rounds used some of it
    (each must be positive: :func:`goldeneval.retrieval.evaluation.ask_to_depth` times out a question
    with nothing left instead of asking it).  ``batch_size``: questions
    per ``retrieve_batch`` call when the retriever has one and every question has the same
    limit and its full budget (``None``: :data:`DEFAULT_BATCH_SIZE`; ``1`` never batches).
    ``progress(n)`` is told each time ``n`` more questions are answered.
    """
    if workers < 1:
        raise ValueError(f"workers must be 1 or more (found {workers})")
    workers, _ = usable_workers(workers, "questions", retriever=retriever)
    n = len(texts)
    per_question = [limits] * n if isinstance(limits, int) else list(limits)
    budgets: list[float | None] = [timeout_s] * n if budgets_s is None else list(budgets_s)
    if not len(per_question) == len(budgets) == n:
        raise ValueError("limits and budgets_s must have one entry per question")
    answers = Answers(returned=[()] * n, errors=[None] * n, latency_ms=[0.0] * n)
    tick = progress or (lambda _: None)
    batch = batch_method(retriever)
    size = DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    if batch is not None and size > 1 and isinstance(limits, int) and budgets_s is None:
        _ask_batched(retriever, batch, texts, limits, answers, tick, timeout_s, workers, size)
    elif timeout_s is None and workers == 1:
        _ask_inline(retriever, texts, per_question, answers, tick)
    elif workers == 1:
        _ask_watched(retriever, texts, per_question, budgets, timeout_s, answers, tick)
    else:
        tasks = (_single(retriever, texts, per_question, i, budgets[i]) for i in range(n))
        _run_tasks(tasks, workers, timeout_s, _recorder(answers, tick))
    return answers


def _ask_inline(
    retriever: Retriever, texts: Sequence[str], limits: Sequence[int], answers: Answers, tick: Callable[[int], None]
) -> None:
    """No timeout, one worker: every call on the caller's thread, nothing handed off."""
    for i, text in enumerate(texts):
        start = time.perf_counter()
        try:
            answers.returned[i] = checked_ids(retriever.retrieve(text, limits[i]), limits[i])
        except BaseException as exc:  # sys.exit() in a plug-in is its error, not ours
            if isinstance(exc, KeyboardInterrupt):
                raise
            answers.errors[i] = describe(exc)
        answers.latency_ms[i] = (time.perf_counter() - start) * 1000.0
        tick(1)


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


def _ask_watched(
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


def _single(retriever: Retriever, texts: Sequence[str], limits: Sequence[int], i: int, budget: float | None) -> _Task:
    text, limit = texts[i], limits[i]
    return _Task((i,), lambda: checked_ids(retriever.retrieve(text, limit), limit), budget)


def _recorder(answers: Answers, tick: Callable[[int], None]) -> Callable[[_Task], list[_Task]]:
    """Store a single-question task's outcome; re-raise what must end the run (Ctrl-C)."""

    def record(task: _Task) -> list[_Task]:
        (i,) = task.indexes
        answers.latency_ms[i] = task.elapsed_s * 1000.0
        if task.error is None:
            answers.returned[i] = task.outcome
        elif not isinstance(task.error, KeyboardInterrupt):
            answers.errors[i] = describe(task.error)
        else:
            raise task.error
        tick(1)
        return []

    return record


def _ask_batched(
    retriever: Retriever,
    batch: Callable[[Sequence[str], int], Any],
    texts: Sequence[str],
    limit: int,
    answers: Answers,
    tick: Callable[[int], None],
    timeout_s: float | None,
    workers: int,
    size: int,
) -> None:
    record_single = _recorder(answers, tick)
    every_limit = [limit] * len(texts)

    def call_batch(indexes: tuple[int, ...]) -> list[tuple[str, ...]]:
        rankings = batch([texts[i] for i in indexes], limit)
        if isinstance(rankings, _UNORDERED) or not isinstance(rankings, Iterable):
            raise TypeError(f"retrieve_batch() must return one ranking per question, got {type(rankings).__name__}")
        checked = [checked_ids(r, limit, "retrieve_batch") for r in itertools.islice(rankings, len(indexes) + 1)]
        if len(checked) != len(indexes):
            raise ValueError(f"retrieve_batch() returned {len(checked)} rankings for {len(indexes)} questions")
        return checked

    def done(task: _Task) -> list[_Task]:
        if not task.batch:
            return record_single(task)
        if isinstance(task.error, KeyboardInterrupt):
            raise task.error
        if task.error is not None:
            # The batch failed or took longer than one question may: ask each question alone,
            # so that an error or a timeout is pinned on the question that caused it.
            return [_single(retriever, texts, every_limit, i, timeout_s) for i in task.indexes]
        share_ms = task.elapsed_s * 1000.0 / len(task.indexes)
        for i, returned in zip(task.indexes, task.outcome, strict=True):
            answers.returned[i] = returned
            answers.latency_ms[i] = share_ms
        tick(len(task.indexes))
        return []

    def batches() -> Iterator[_Task]:
        for start in range(0, len(texts), size):
            indexes = tuple(range(start, min(start + size, len(texts))))
            yield _Task(indexes, partial(call_batch, indexes), timeout_s, batch=True)

    _run_tasks(batches(), workers, timeout_s, done)
