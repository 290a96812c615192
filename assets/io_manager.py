"""The Parquet hand-off between assets: an IO manager keyed by partition and Dagster run.

It lives beside the assets it stores (a resource, but one only they use).

Each output is one hive-style file, ``<tables>/<asset>/set=<id>/retriever=<name>/
<time>_<run id>.parquet`` (``goldeneval.retrieval.tables``), and the file's path is recorded in the
materialisation's metadata.  An input is read from the path the *latest materialisation of
that partition* recorded — by the same run when it made one, so overlapping runs of one
partition never read each other's tables — and never "the newest file in the folder", so a
downstream asset re-materialised on its own reads exactly what its upstream last materialised.

It serves every kind of run and knows none: each table says, in its definition metadata
(``assets.tables.build_kind_assets``), the order of its partition's hive folders
(:data:`PARTITION_FOLDERS_METADATA_KEY`) and whether it is handed over
(:data:`HANDED_OVER_METADATA_KEY`).

A handed-over table (retrieval's hits) is also kept in memory, by run and file, when it is
written: when the summary's chosen file is one this process wrote for that same run, it gets
that table instead of decoding the file again (10,000 questions: a tenth of a second).  It
reads only the table's identity then, since it records the evaluation's own run
(``assets.handoff``).  Each kept table is handed over once; any other input (each step in a
process of its own, a summary re-materialised later) reads the file.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import dagster as dg
import pyarrow as pa

from assets.handoff import RunHandOff
from assets.partitions import partition_cell
from goldeneval.core.errors import StoreError
from goldeneval.store.parquet import TableInBatches, WrittenTable, read_table, write_partition_file
from goldeneval.suite_storage import load_storage

PATH_METADATA_KEY = "path"
PARTITION_FOLDERS_METADATA_KEY = "goldeneval/partition_folders"
"""A table's definition metadata: its partition's dimensions, comma-separated, in the order
of its hive folders (``set,retriever``: ``set=<id>/retriever=<name>``)."""
HANDED_OVER_METADATA_KEY = "goldeneval/handed_over"
"""A table's definition metadata: true when it is kept for the step that reads it."""
RECENT = 20
"""How many recent materialisations of the upstream partition to search for this run's."""
WRITTEN: RunHandOff[pa.Table] = RunHandOff()
"""Handed-over tables this process wrote, by Dagster run id and file, until read."""


def _evaluated_at(table: WrittenTable) -> datetime:
    if isinstance(table, TableInBatches):
        return table.evaluated_at
    if "evaluated_at" in table.column_names and table.num_rows:
        value = table.column("evaluated_at")[0].as_py()
        if isinstance(value, datetime):
            return value
    return datetime.now(UTC)


class PartitionedParquetIOManager(dg.ConfigurableIOManager):
    """Arrow tables to and from hive-style Parquet files below the suite's tables folder (a
    table too large to hold whole, :class:`~goldeneval.store.parquet.TableInBatches`, is
    written a batch at a time).

    It names the suite file, not the ``goldeneval`` resource: a nested resource makes Dagster
    1.13 call its own deprecated ``InitResourceContext.dagster_run`` at every run, and the
    tables folder is all it needs (read from the file's ``storage:`` section alone, as
    :meth:`goldeneval.suite.Suite.tables_root` resolves it)."""

    config_path: str

    def _tables_root(self) -> Path:
        return load_storage(self.config_path).tables()

    def handle_output(self, context: dg.OutputContext, obj: WrittenTable) -> None:
        table_name = context.asset_key.path[-1]
        declared = context.definition_metadata or {}
        folders = declared.get(PARTITION_FOLDERS_METADATA_KEY)
        if not folders:
            raise StoreError(
                f"{table_name}: declares no {PARTITION_FOLDERS_METADATA_KEY} (its partition's folders): "
                "build a kind's assets with assets.tables.build_kind_assets"
            )
        path = write_partition_file(
            self._tables_root(),
            table_name,
            partition_cell(context.asset_partition_key, tuple(str(folders).split(","))),
            obj,
            context.run_id,
            _evaluated_at(obj),
        )
        if declared.get(HANDED_OVER_METADATA_KEY) and isinstance(obj, pa.Table):
            WRITTEN.keep(context.run_id, str(path), obj)
        context.add_output_metadata({PATH_METADATA_KEY: dg.MetadataValue.path(str(path))})

    def load_input(self, context: dg.InputContext) -> pa.Table:
        asset_key = context.asset_key
        partition = context.asset_partition_key
        records = context.instance.fetch_materializations(
            dg.AssetRecordsFilter(asset_key=asset_key, asset_partitions=[partition]), limit=RECENT
        ).records
        # This run's own materialisation when it made one (another run of the partition may
        # have finished since), else the latest.
        run_id = context.step_context.run_id
        chosen = next((r for r in records if r.run_id == run_id), records[0] if records else None)
        materialization = chosen.asset_materialization if chosen else None
        entry = materialization.metadata.get(PATH_METADATA_KEY) if materialization else None
        if entry is None:
            raise StoreError(
                f"{asset_key.to_user_string()} partition {partition}: not materialised yet; "
                f"materialise {asset_key.to_user_string()} first"
            )
        path = Path(str(entry.value))
        if not path.is_file():
            raise StoreError(
                f"{path}: the {asset_key.to_user_string()} file of partition {partition} is gone "
                "(purged?); materialise it again"
            )
        written = WRITTEN.take(run_id, str(path))
        return written if written is not None else read_table(path)
