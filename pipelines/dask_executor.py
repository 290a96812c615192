"""``dagster_dask``'s executor with two fixes, so that many runs can share one dask cluster.

dagster-dask 0.29.27 (the pinned version) submits each step as
``client.submit(query_on_dask_worker, dependencies, recon_job, dagster_run, ...)``:

1. **Task names collide across runs** (dagster-io/dagster#21418): the dask key is
   ``"<job>.<step>"``, so when two runs of the nightly job (two partitions) share a cluster,
   dask treats the second run's steps as the first run's — they are not executed, yet the run
   ends "successful" with nothing materialised.  Here the key carries the run id.
2. **The arguments are walked by dask**: distributed 2026.x's ``parse_input`` descends into
   every tuple, and ``DagsterRun`` is a NamedTuple holding a Dagster ``@record``
   (``RunOpConcurrency``) that refuses iteration — every run fails at its first submit.  Here
   the step's arguments travel in one opaque object; only the upstream futures are visible.

Everything else is dagster-dask's: the worker side is its ``query_on_dask_worker`` (the job
rebuilt from its code pointer, the instance from its ref, one step executed), the cluster
from its ``build_dict`` (``threads_per_worker: 1`` for a local cluster), the resources from the
``dagster-dask/resource_requirements`` tag.  Only the ``existing`` and ``local`` clusters are
offered (dagster-dask's own executor has the rest: jobqueue, YARN, Kubernetes).

Dagster's concurrency pools are not enforced by this executor (nor by dagster-dask's): two
partitions may write the result store at once, which the store allows (a file lock on DuckDB,
transactions on PostgreSQL).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import dask.distributed
from dagster_dask.executor import DaskExecutor, get_dask_resource_requirements, query_on_dask_worker

from pipelines.dagster_internals import iterate_with_context, raise_execution_interrupts

CLUSTER_TYPES = ("existing", "local")
# distributed and dagster's config helpers are untyped: called through Any.
_local_cluster: Any = dask.distributed.LocalCluster
_client: Any = dask.distributed.Client
_as_completed: Any = dask.distributed.as_completed
_selector: Any = dg.Selector
_permissive: Any = dg.Permissive


@dataclass(frozen=True)
class StepCall:
    """The arguments of one step's ``query_on_dask_worker``, opaque to dask (not a tuple)."""

    recon_job: Any
    dagster_run: Any
    run_config: Any
    step_keys: Sequence[str]
    instance_ref: Any
    known_state: Any


@dataclass(frozen=True)
class StepEvents:
    """What a step sends back: its events, opaque to dask's ``sizeof`` (which walks tuples too)."""

    events: Sequence[dg.DagsterEvent]


def run_step(dependencies: list[Any], call: StepCall) -> StepEvents:
    """On a dask worker: execute one step.  ``dependencies`` (the upstream steps' results) only
    orders the tasks."""
    del dependencies
    events = query_on_dask_worker(
        None, call.recon_job, call.dagster_run, call.run_config, call.step_keys, call.instance_ref, call.known_state
    )
    return StepEvents(list(events))


class SharedClusterDaskExecutor(DaskExecutor):
    def _cluster_kwargs(self, job_name: str) -> dict[str, Any]:
        build: Any = self.build_dict
        kwargs: dict[str, Any] = build(job_name)
        return kwargs

    def execute(self, plan_context: Any, execution_plan: Any) -> Iterator[dg.DagsterEvent]:
        if not plan_context.instance.is_persistent:
            raise dg.DagsterInvariantViolationError(
                "the dask executor needs a persistent Dagster instance: set DAGSTER_HOME (docs/deployment.md)"
            )
        job_name = plan_context.job_name
        run_id = plan_context.dagster_run.run_id
        if self.cluster_type == "existing":
            cluster: Any = self.cluster_configuration["address"]
        elif self.cluster_type == "local":
            cluster = _local_cluster(**self._cluster_kwargs(job_name))
        else:  # pragma: no cover - the config schema offers only these two
            raise ValueError(f"cluster type {self.cluster_type!r}: expected one of {', '.join(CLUSTER_TYPES)}")
        try:
            with _client(cluster) as client:
                futures: dict[str, Any] = {}
                for level in execution_plan.get_steps_to_execute_by_level():
                    for step in level:
                        dependencies = [
                            futures[key] for step_input in step.step_inputs for key in step_input.dependency_keys
                        ]
                        call = StepCall(
                            recon_job=plan_context.reconstructable_job,
                            dagster_run=plan_context.dagster_run,
                            run_config=plan_context.run_config,
                            step_keys=[step.key],
                            instance_ref=plan_context.instance.get_ref(),
                            known_state=execution_plan.known_state,
                        )
                        futures[step.key] = client.submit(
                            run_step,
                            dependencies,
                            call,
                            key=f"{job_name}.{run_id}.{step.key}",
                            resources=get_dask_resource_requirements(step.tags),
                            pure=False,
                        )
                completed = _as_completed(list(futures.values()), with_results=True)
                for _future, result in iterate_with_context(raise_execution_interrupts, completed):
                    yield from result.events
        finally:
            if not isinstance(cluster, str):
                cluster.close()


@dg.executor(
    name="dask",
    requirements=dg.multiple_process_executor_requirements(),
    config_schema={
        "cluster": dg.Field(
            _selector(
                {
                    "existing": dg.Field(
                        {"address": dg.StringSource}, description="The scheduler of a running dask cluster."
                    ),
                    "local": dg.Field(
                        _permissive(),
                        is_required=False,
                        description="A LocalCluster per run: distributed.LocalCluster's parameters.",
                    ),
                }
            )
        )
    },
)
def dask_executor(init_context: dg.InitExecutorContext) -> dg.Executor:
    """Each step of a run is a task on a dask.distributed cluster (module docstring)."""
    cluster: dict[str, Any] = dict(init_context.executor_config["cluster"])  # type: ignore[call-overload]
    ((cluster_type, cluster_configuration),) = cluster.items()
    executor: Any = SharedClusterDaskExecutor
    built: dg.Executor = executor(cluster_type, cluster_configuration)
    return built
