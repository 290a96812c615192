"""The one place goldeneval reaches into Dagster's private ``_core`` modules.

Dagster 1.13 (the range pyproject.toml allows) has no public export for these; everything
else goes through ``import dagster as dg``.  When upgrading Dagster, check this module first.

* ``AssetCheckExecutionRecord`` / ``...RecordStatus`` — what
  ``instance.event_log_storage.get_asset_check_execution_history`` returns; the alert sensor
  reads check executions across runs with it (the event-log query API has no public filter
  for check evaluations across runs on the run-sharded SQLite storage).
* ``PartitionKeyFilter`` — the partition filter that same call takes.
* ``RUN_KEY_TAG`` / ``SENSOR_NAME_TAG`` — the tags the daemon puts on a sensor's runs, which
  the main command sets too so that a daemon started later skips runs already made.
* ``ROOT_RUN_ID_TAG`` — the tag (``dagster/root_run_id``) Dagster puts on a re-execution,
  naming the run first executed; ``pipelines.purge`` finds a purged night's re-executions by it
  (and by ``PARTITION_NAME_TAG``, ``dagster/partition``, for those executed in process,
  which carry no such tag).
* ``raise_execution_interrupts`` / ``iterate_with_context`` — how an executor lets Ctrl-C through
  while it waits for its steps; ``pipelines.executors`` (the dask executor) uses them as
  dagster-dask does.
* :func:`delete_check_executions` — deletes a run's asset check executions, which
  ``DagsterInstance.delete_run`` leaves in the event log's ``asset_check_executions`` table
  (with their descriptions) in Dagster 1.13; ``pipelines.purge`` calls it for purged runs.
* :func:`drop_captured_outputs` — empties the outputs ``execute_in_process`` captured for a
  result (``ExecuteInProcessResult._output_capture``), which the main command never reads.
"""

from typing import Any

from dagster._core.errors import raise_execution_interrupts
from dagster._core.event_api import PartitionKeyFilter
from dagster._core.storage.asset_check_execution_record import (
    AssetCheckExecutionRecord,
    AssetCheckExecutionRecordStatus,
)
from dagster._core.storage.event_log.schema import AssetCheckExecutionsTable
from dagster._core.storage.event_log.sql_event_log import SqlEventLogStorage
from dagster._core.storage.tags import PARTITION_NAME_TAG, ROOT_RUN_ID_TAG, RUN_KEY_TAG, SENSOR_NAME_TAG
from dagster._utils import iterate_with_context

__all__ = [
    "PARTITION_NAME_TAG",
    "ROOT_RUN_ID_TAG",
    "RUN_KEY_TAG",
    "SENSOR_NAME_TAG",
    "AssetCheckExecutionRecord",
    "AssetCheckExecutionRecordStatus",
    "PartitionKeyFilter",
    "delete_check_executions",
    "drop_captured_outputs",
    "iterate_with_context",
    "raise_execution_interrupts",
]


def delete_check_executions(instance: Any, run_id: str) -> int:
    """Delete the asset check executions ``run_id`` recorded, on an SQL event log (SQLite and
    PostgreSQL: the storages goldeneval deploys on); returns how many went.  Another storage
    keeps them (0)."""
    storage = instance.event_log_storage
    if not isinstance(storage, SqlEventLogStorage) or not storage.has_table("asset_check_executions"):
        return 0
    with storage.index_connection() as connection:
        result = connection.execute(
            AssetCheckExecutionsTable.delete().where(AssetCheckExecutionsTable.c.run_id == run_id)
        )
        return int(result.rowcount or 0)


def drop_captured_outputs(result: Any) -> None:
    """Let go of every output ``execute_in_process`` captured for ``result`` (a partition's
    golden set, rankings and hits tables).  Dropping the result is not enough: Dagster 1.13
    keeps the first run's step context, and with it that capture, for the rest of the process
    (the namespaces its record classes compile their constructors in hold the locals of the
    first call).  Dagster captures outputs in every in-process execution (dagster-io/dagster
    issues 9731 and 4262, open); a Dagster that keeps its capture elsewhere is left as it is."""
    captured = getattr(result, "_output_capture", None)
    if isinstance(captured, dict):
        captured.clear()
