"""Bounded concurrency of model calls (``--workers``, issue 24).

A served model answers many requests at once; asked one prompt at a time, a run of 500
prompts at two seconds each takes a quarter of an hour.  :func:`evaluate_tasks` asks and
grades up to ``workers`` tasks at once through the one
:class:`~goldeneval.prompts.evaluation.EvaluationService` (every task is evaluated exactly as
one at a time: the same timeout, grading and error handling) and returns the results in task
order, so a run's results do not depend on how many workers it had.

A model that declares ``thread_safe = False`` (a client bound to one connection, a model with
per-call state) is asked one prompt at a time whatever ``--workers`` says, with a notice, as
retrievers are.  The response cache, the circuit breaker and the usage meter
(:mod:`goldeneval.prompts.calls`) are safe to share between workers.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

from goldeneval.core.collector import plugin_collections
from goldeneval.core.workers import MAX_WORKERS, usable_workers
from goldeneval.prompts.details import PromptDetail
from goldeneval.prompts.evaluation import EvaluationService, Progress, Task

__all__ = ["MAX_WORKERS", "evaluate_tasks", "usable_workers"]  # the rule itself: goldeneval.core.workers


def evaluate_tasks(
    service: EvaluationService, tasks: Sequence[Task], progress: Progress | None = None, workers: int = 1
) -> list[PromptDetail]:
    """Every task's result, in task order, with up to ``workers`` evaluated at once."""
    if workers <= 1 or len(tasks) <= 1:
        return service.run(tasks, progress)
    with (
        plugin_collections(),
        ThreadPoolExecutor(max_workers=min(workers, len(tasks)), thread_name_prefix="goldeneval-prompt") as pool,
    ):
        futures = [pool.submit(service.evaluate, task) for task in tasks]
        ordered = tasks if progress is None else progress(tasks)
        return [future.result() for _, future in zip(ordered, futures, strict=True)]
