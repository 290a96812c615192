"""The nightly schedules: one run per partition of each run kind, no click needed."""

from __future__ import annotations

import dagster as dg

from goldeneval.kinds import KindDeclaration
from goldeneval.kinds.retrieval import RETRIEVAL
from pipelines.jobs import NIGHTLY_JOB

NIGHTLY_SCHEDULE = RETRIEVAL.names.schedule


def build_nightly_schedule(
    partitions_def: dg.MultiPartitionsDefinition,
    cron: str,
    timezone: str,
    *,
    name: str = NIGHTLY_SCHEDULE,
    job_name: str = NIGHTLY_JOB,
    what: str = "golden set x retriever",
) -> dg.ScheduleDefinition:
    @dg.schedule(
        name=name,
        job_name=job_name,
        cron_schedule=cron,
        execution_timezone=timezone,
        default_status=dg.DefaultScheduleStatus.RUNNING,
        description=f"Every night, evaluate every ({what}) partition.",
    )
    def nightly_evaluation_schedule(context: dg.ScheduleEvaluationContext) -> list[dg.RunRequest]:
        tick = context.scheduled_execution_time
        stamp = tick.isoformat() if tick is not None else "manual"
        return [
            dg.RunRequest(run_key=f"{stamp}:{key}", partition_key=key) for key in partitions_def.get_partition_keys()
        ]

    return nightly_evaluation_schedule


def build_kind_schedule(
    kind: KindDeclaration, partitions_def: dg.MultiPartitionsDefinition, cron: str, timezone: str
) -> dg.ScheduleDefinition:
    """A declared kind's nightly schedule over its partitions."""
    return build_nightly_schedule(
        partitions_def, cron, timezone, name=kind.names.schedule, job_name=kind.names.job, what=kind.cell
    )
