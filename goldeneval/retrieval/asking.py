"""Asking a retriever every question: single calls, batches and a bounded pool of threads.

This is the evaluator's only contact with retriever code, so every rule about what a call
may do lives here:

* **Ranked ids only.** ``retrieve`` must return an ordered iterable of strings; a set, a
  string or a mapping is refused, an endless generator is cut at the limit.
* **One call per question per round.** :func:`ask_all` asks each question once, for its
  limit; :func:`ask_to_depth` decides which rankings to ask for again, deeper (the
  over-fetch of :mod:`goldeneval.retrieval.protocol`), from the whole run's arrays, and gives
  each question what is left of its timeout as its budget.  It hands each chunk of rankings
  to :mod:`goldeneval.retrieval.encoding` as it comes back: the asking owns the calls, the
  encoding owns the codes.
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

The calls themselves are held to :mod:`goldeneval.retrieval.asking_calls` and run off the
caller's thread by :mod:`goldeneval.retrieval.asking_threads`; every caller asks through this
module.
"""

from __future__ import annotations

import array
import itertools
import time
from collections.abc import Callable, Iterable, Iterator, MutableSequence, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from goldeneval.core.collector import plugin_collections
from goldeneval.core.workers import usable_workers
from goldeneval.retrieval import columnar
from goldeneval.retrieval.asking_calls import UNORDERED, Answers, batch_method, checked_ids, describe
from goldeneval.retrieval.asking_threads import Task, ask_watched, run_tasks
from goldeneval.retrieval.defaults import DEFAULT_BATCH_SIZE
from goldeneval.retrieval.encoding import CodedRun, RawRankings, RunCoder
from goldeneval.retrieval.golden import GoldenQuestion
from goldeneval.retrieval.protocol import first_raw_limit, next_raw_limit, raw_ceiling
from goldeneval.retrieval.retrievers.base import Retriever

__all__ = ["ASK_CHUNK", "DEFAULT_BATCH_SIZE", "AskedRun", "ask_all", "ask_to_depth"]


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
    (each must be positive: :func:`ask_to_depth` times out a question
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
        ask_watched(retriever, texts, per_question, budgets, timeout_s, answers, tick)
    else:
        tasks = (_single(retriever, texts, per_question, i, budgets[i]) for i in range(n))
        run_tasks(tasks, workers, timeout_s, _recorder(answers, tick))
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


def _single(retriever: Retriever, texts: Sequence[str], limits: Sequence[int], i: int, budget: float | None) -> Task:
    text, limit = texts[i], limits[i]
    return Task((i,), lambda: checked_ids(retriever.retrieve(text, limit), limit), budget)


def _recorder(answers: Answers, tick: Callable[[int], None]) -> Callable[[Task], list[Task]]:
    """Store a single-question task's outcome; re-raise what must end the run (Ctrl-C)."""

    def record(task: Task) -> list[Task]:
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
        if isinstance(rankings, UNORDERED) or not isinstance(rankings, Iterable):
            raise TypeError(f"retrieve_batch() must return one ranking per question, got {type(rankings).__name__}")
        checked = [checked_ids(r, limit, "retrieve_batch") for r in itertools.islice(rankings, len(indexes) + 1)]
        if len(checked) != len(indexes):
            raise ValueError(f"retrieve_batch() returned {len(checked)} rankings for {len(indexes)} questions")
        return checked

    def done(task: Task) -> list[Task]:
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

    def batches() -> Iterator[Task]:
        for start in range(0, len(texts), size):
            indexes = tuple(range(start, min(start + size, len(texts))))
            yield Task(indexes, partial(call_batch, indexes), timeout_s, batch=True)

    run_tasks(batches(), workers, timeout_s, done)


ASK_CHUNK = 8192
"""Questions asked at a time (rounded to whole batches): their rankings are coded into the run's
arrays and dropped before the next ones are asked, so a run never holds every returned id as a
string in a tuple (100 ids a question: 856 bytes, 856 MB for 1,000,000 questions)."""


@dataclass
class AskedRun:
    """What :func:`ask_to_depth` found, per question in set order (columns, not objects)."""

    returned: Sequence[tuple[str, ...]]
    """Each question's final raw ranking (empty for an error), read from the coded arrays."""
    errors: list[str | None]
    latency_ms: MutableSequence[float]
    """All calls of each question together (an ``array('d')``: 8 bytes a question)."""


def ask_to_depth(
    retriever: Retriever,
    questions: Sequence[GoldenQuestion],
    depth: int,
    to_document: Callable[[str], str],
    *,
    timeout_s: float | None,
    workers: int = 1,
    batch_size: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[AskedRun, CodedRun]:
    """Every question's raw ranking, long enough for the protocol and for ``depth`` distinct
    documents, and the run coded as arrays.

    Each question is first asked for :func:`~goldeneval.retrieval.protocol.first_raw_limit` ids.  While
    its ranking collapses to fewer than ``depth`` documents and the retriever returned all it
    was asked for (so it may have more), it is asked again for ``OVERFETCH_MULTIPLIER`` times
    as many, up to :func:`~goldeneval.retrieval.protocol.raw_ceiling` ids.  Which rankings fall short is
    read off the whole run's arrays at once, not question by question.  ``timeout_s`` bounds
    all calls of a question together: a deeper call gets what is left of it.

    The questions are asked :data:`ASK_CHUNK` at a time (in order, whole batches each, so the
    calls are the ones a single :func:`ask_all` would make) and each
    chunk's rankings are coded (:class:`~goldeneval.retrieval.encoding.RunCoder`) before the next is
    asked.  A round of deeper calls is coded apart; when there was one, the final rankings are
    coded again from the rounds' arrays, so the coded run is what
    :func:`~goldeneval.retrieval.encoding.code_run` makes of the final rankings.
    """
    n = len(questions)
    texts = [question.text for question in questions]
    limit = first_raw_limit(depth)
    errors: list[str | None] = [None] * n
    latency_ms = array.array("d", bytes(8 * n))
    size = DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    chunk = max(1, ASK_CHUNK // size) * size
    first = RunCoder(n, n * limit, to_document)
    for start in range(0, n, chunk):
        rows = range(start, min(start + chunk, n))
        answers = ask_all(
            retriever,
            texts[start : rows.stop],
            limit,
            timeout_s=timeout_s,
            workers=workers,
            batch_size=batch_size,
            progress=progress,
        )
        first.add(answers.returned)
        _note(answers, rows, errors, latency_ms)
        del answers
    rankings, raw = first.rankings()
    # Where each question's final ranking lies: (round, row in that round); round -1: emptied.
    rounds: list[tuple[columnar.Rankings, RawRankings]] = [(rankings, raw)]
    owner = np.zeros(n, dtype=np.int64)
    row_in_round = np.arange(n, dtype=np.int64)
    limits = np.full(n, limit, dtype=np.int64)
    candidates = np.arange(n, dtype=np.int64)
    ceiling = raw_ceiling(depth)
    first_collapsed: columnar.Rankings | None = columnar.collapse(rankings, depth)
    while True:
        ok = np.fromiter((error is None for error in errors), dtype=np.bool_, count=n)[candidates]
        last = rounds[-1][0]
        collapsed = first_collapsed if first_collapsed is not None else columnar.collapse(last, depth)
        distinct = np.diff(collapsed.offsets)
        del collapsed
        short = ok & (last.lengths == limits[candidates]) & (limits[candidates] < ceiling) & (distinct < depth)
        again = candidates[short].tolist()
        if not again:
            break
        spent_s = [latency_ms[i] / 1000.0 for i in again]
        if timeout_s is not None:
            for i, spent in zip(again, spent_s, strict=True):
                if spent >= timeout_s:  # nothing left for a deeper call
                    errors[i] = f"timed out after {timeout_s:g} s"
                    owner[i] = -1
            kept = [(i, spent) for i, spent in zip(again, spent_s, strict=True) if spent < timeout_s]
            again, spent_s = [i for i, _ in kept], [spent for _, spent in kept]
            if not again:
                break
        deeper = [next_raw_limit(int(limits[i]), depth) for i in again]
        coder = RunCoder(len(again), sum(deeper), to_document)
        for start in range(0, len(again), ASK_CHUNK):
            part = again[start : start + ASK_CHUNK]
            more = ask_all(
                retriever,
                [texts[i] for i in part],
                deeper[start : start + ASK_CHUNK],
                timeout_s=timeout_s,
                budgets_s=None if timeout_s is None else [timeout_s - s for s in spent_s[start : start + ASK_CHUNK]],
                workers=workers,
            )
            coder.add(more.returned)  # an errored call returned nothing: its ranking is empty
            _note(more, part, errors, latency_ms)
            del more
        candidates = np.asarray(again, dtype=np.int64)
        limits[candidates] = deeper
        owner[candidates] = len(rounds)
        row_in_round[candidates] = np.arange(candidates.size, dtype=np.int64)
        rounds.append(coder.rankings())
        first_collapsed = None  # the final rankings are coded afresh: collapsed when scored
    if len(rounds) == 1:
        coded = first.finish(questions)
        # The same rankings, collapsed once: the scoring reads them (CodedRun.kept) without a
        # second scan, which at 1,000,000 x 100 marks 100 MB of positions at the run's fullest.
        if first_collapsed is not None:
            coded.collapsed[depth] = coded.rankings if first_collapsed is rankings else first_collapsed
    else:
        coded = _recoded(questions, rounds, owner, row_in_round, to_document)
    return AskedRun(coded.raw, errors, latency_ms), coded


def _note(answers: Answers, rows: Iterable[int], errors: list[str | None], latency_ms: MutableSequence[float]) -> None:
    """A chunk's errors and latencies, into the run's columns (latencies add up over rounds)."""
    for j, i in enumerate(rows):
        errors[i] = answers.errors[j]
        latency_ms[i] += answers.latency_ms[j]


def _recoded(
    questions: Sequence[GoldenQuestion],
    rounds: Sequence[tuple[columnar.Rankings, RawRankings]],
    owner: np.ndarray,
    row_in_round: np.ndarray,
    to_document: Callable[[str], str],
) -> CodedRun:
    """The final rankings (each question's from the last round that asked it; none where its
    time ran out) coded afresh, :data:`ASK_CHUNK` questions at a time."""
    n = len(questions)
    lengths = np.zeros(n, dtype=np.int64)
    for r, (rankings, _) in enumerate(rounds):
        mine = owner == r
        lengths[mine] = rankings.lengths[row_in_round[mine]]
    coder = RunCoder(n, int(lengths.sum()), to_document)
    owners, rows = owner.tolist(), row_in_round.tolist()
    for start in range(0, n, ASK_CHUNK):
        coder.add(
            [rounds[owners[i]][1][rows[i]] if owners[i] >= 0 else () for i in range(start, min(start + ASK_CHUNK, n))]
        )
    return coder.finish(questions)
