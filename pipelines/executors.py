"""Which executor runs the steps of the nightly job: chosen by the environment of the code location.

``GOLDENEVAL_EXECUTOR`` (read when the definitions load):

* unset or ``multiprocess`` — Dagster's default (``multi_or_in_process_executor``): each step in
  a child process of the run, on the machine of the run.  The embedded default, unchanged.
* ``dask`` — dagster-dask's executor (the ``distributed`` extra; ``pipelines.dask_executor``
  fixes two faults of the pinned version): each step is a task on a dask.distributed cluster.
  With ``GOLDENEVAL_DASK_SCHEDULER=tcp://host:8786`` the steps go to that existing cluster
  (every run shares it, so partitions run in parallel on its workers); without it each run
  starts a ``LocalCluster`` of ``GOLDENEVAL_DASK_WORKERS`` (default 2) single-threaded worker
  processes.  The dask executor needs a persistent Dagster instance (a ``$DAGSTER_HOME``,
  SQLite or PostgreSQL) and a run launched from a code location (``dagster job execute``, the
  daemon, the UI); ``execute_in_process`` ignores executors.  Only the nightly job takes it:
  the sensor-launched regression check is one short step.

docs/deployment.md shows both, and Kubernetes (dagster-k8s), where the run launcher starts one
pod per partition run instead.
"""

from __future__ import annotations

import os
from typing import Any

import dagster as dg

EXECUTOR_ENV = "GOLDENEVAL_EXECUTOR"
DASK_SCHEDULER_ENV = "GOLDENEVAL_DASK_SCHEDULER"
DASK_WORKERS_ENV = "GOLDENEVAL_DASK_WORKERS"
EXECUTORS = ("multiprocess", "dask")
DEFAULT_DASK_WORKERS = 2


def dask_executor_config() -> dict[str, Any]:
    """The ``cluster`` config of ``dagster_dask.dask_executor`` this environment asks for."""
    if os.environ.get(DASK_SCHEDULER_ENV):
        # Read from the environment when a run starts, so the address is not frozen into the definitions.
        return {"cluster": {"existing": {"address": {"env": DASK_SCHEDULER_ENV}}}}
    raw = os.environ.get(DASK_WORKERS_ENV) or str(DEFAULT_DASK_WORKERS)
    try:
        workers = int(raw)
    except ValueError:
        workers = 0
    if workers < 1:
        raise ValueError(f"{DASK_WORKERS_ENV}={raw!r}: expected a whole number of workers, at least 1")
    return {"cluster": {"local": {"n_workers": workers, "threads_per_worker": 1, "processes": True}}}


def nightly_executor() -> dg.ExecutorDefinition | None:
    """The executor of the nightly job, or None for Dagster's default."""
    kind = (os.environ.get(EXECUTOR_ENV) or "multiprocess").strip().lower()
    if kind == "multiprocess":
        return None
    if kind != "dask":
        raise ValueError(f"{EXECUTOR_ENV}={kind!r}: expected one of {', '.join(EXECUTORS)}")
    try:
        from pipelines.dask_executor import dask_executor
    except ImportError as exc:  # pragma: no cover - the extra is part of the pinned set-up
        raise ValueError(
            f"{EXECUTOR_ENV}=dask needs the 'distributed' extra: pip install 'goldeneval[distributed]' ({exc})"
        ) from None
    configured: dg.ExecutorDefinition = dask_executor.configured(dask_executor_config(), name="dask")
    return configured
