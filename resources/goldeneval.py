"""The suite file, the result store and the Parquet tables, as one Dagster resource."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import dagster as dg
import pyarrow as pa

from goldeneval.store import ResultStore
from goldeneval.suite import Suite, load_suite
from goldeneval.tables import latest_partition_file, read_table, write_partition_file


class GoldenEvalResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """Where the suite file is; everything else (store, tables, cache) is read from it."""

    config_path: str

    def suite(self) -> Suite:
        return load_suite(self.config_path)

    def open_store(self) -> ResultStore:
        return ResultStore(self.suite().store_path)

    def write_table(
        self,
        table_name: str,
        partition: Mapping[str, str],
        table: pa.Table,
        run_id: str,
        evaluated_at: datetime,
    ) -> Path:
        return write_partition_file(self.suite().tables_root, table_name, partition, table, run_id, evaluated_at)

    def read_table(self, table_name: str, partition: Mapping[str, str], run_id: str) -> tuple[Path, pa.Table]:
        """This run's file of the partition if it wrote one, else the newest."""
        path = latest_partition_file(self.suite().tables_root, table_name, partition, run_id)
        return path, read_table(path)
