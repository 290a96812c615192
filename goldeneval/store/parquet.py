"""The Parquet tables beside the store: hive-style partition files, whole or absent.

Every kind of run writes its Arrow tables the same way: ``<root>/<table>/<dim>=<value>/...
/<time>_<run>.parquet`` (so ``read_parquet('<root>/<table>/**/*.parquet',
hive_partitioning=true)`` reads a table's whole history), each row stamped with the run that
wrote it, and a run's identity in the schema metadata of its main table under a key of the
kind's own.  Retention deletes a run's files by that run id (:func:`run_files`).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeAlias

import pyarrow as pa
import pyarrow.parquet as pq

from goldeneval.core.errors import StoreError
from goldeneval.core.privacy import PrivacyMode

__all__ = [
    "STAMP_FIELDS",
    "TABLE_FORMAT_VERSION",
    "TableInBatches",
    "WrittenTable",
    "file_evaluated_at",
    "file_run_id",
    "markdown_preview",
    "partition_folder",
    "read_identity",
    "read_table",
    "run_files",
    "stamp_columns",
    "stamped_batches",
    "stored_run_id_for",
    "table_privacy",
    "with_identity",
    "write_partition_file",
]

STORED_RUN_NAMESPACE = uuid.UUID("5b0c1f5e-7d3a-4c49-9a8e-2f1d6c0e8a41")
TABLE_FORMAT_VERSION = 1


STAMP_FIELDS = (pa.field("run_id", pa.string()), pa.field("evaluated_at", pa.timestamp("us", tz="UTC")))
"""The two columns every table ends with: the run that wrote a row, and when (UTC)."""


def _stamps(run_id: str, evaluated_at: datetime) -> tuple[pa.Scalar, pa.Scalar]:
    run, at = STAMP_FIELDS
    return pa.scalar(run_id, run.type), pa.scalar(evaluated_at.astimezone(UTC), at.type)


def stamp_columns(table: pa.Table, run_id: str, evaluated_at: datetime) -> pa.Table:
    """The table with ``run_id`` and ``evaluated_at`` (UTC) columns of the run that wrote it."""
    n = table.num_rows
    for field, value in zip(STAMP_FIELDS, _stamps(run_id, evaluated_at), strict=True):
        table = table.append_column(field, _repeated(value, n))
    return table


@dataclass(frozen=True)
class TableInBatches:
    """A table made and written a block of rows at a time, never held whole: its schema, its
    row count, when its run was evaluated, and ``make_batches``, which makes its rows as
    record batches (each written as a Parquet row group).  The ``retriever_rankings`` table
    of a 100,000-question run at depth 100 is ten million rows: held whole, about 800 MB of
    fresh memory that the Parquet writer reads once."""

    schema: pa.Schema
    num_rows: int
    evaluated_at: datetime
    make_batches: Callable[[], Iterator[pa.RecordBatch]]

    def to_batches(self) -> Iterator[pa.RecordBatch]:
        return self.make_batches()

    def to_table(self) -> pa.Table:
        """The whole table (for a reader that wants one: tests, a small run)."""
        return pa.Table.from_batches(list(self.make_batches()), schema=self.schema)


WrittenTable: TypeAlias = "pa.Table | TableInBatches"
"""What :func:`write_partition_file` writes."""


def stamped_batches(
    schema: pa.Schema, run_id: str, evaluated_at: datetime, blocks: Iterator[list[pa.Array]], most_rows: int
) -> Iterator[pa.RecordBatch]:
    """Each block's columns (``schema`` but its last two fields, :data:`STAMP_FIELDS`) as a
    record batch stamped with the run: the stamps are made once, ``most_rows`` long (the
    largest block), and sliced, so every batch shares their buffers."""
    run, at = (pa.repeat(value, most_rows) for value in _stamps(run_id, evaluated_at))
    for columns in blocks:
        n = len(columns[0])
        yield pa.RecordBatch.from_arrays([*columns, run.slice(0, n), at.slice(0, n)], schema=schema)


_STAMP_CHUNK = 1 << 16
"""Rows of one chunk of a stamped column; every chunk shares its buffers."""


def _repeated(value: pa.Scalar, n: int) -> pa.ChunkedArray:
    """``value`` ``n`` times (``pa.repeat``: in C, not ``n`` Python objects), as chunks of one
    array: the run id stamped on a 100,000-question run's 10,000,000 ranking rows would be
    360 MB made and copied again by the Parquet writer, for one value."""
    chunk = pa.repeat(value, min(n, _STAMP_CHUNK))
    whole, rest = divmod(n, _STAMP_CHUNK)
    return pa.chunked_array([chunk] * whole + ([chunk.slice(0, rest)] if rest else []), type=value.type)


def with_identity(table: pa.Table, key: bytes, identity: Mapping[str, Any]) -> pa.Table:
    """The table carrying a run's identity (JSON) in its schema metadata under ``key``."""
    return table.replace_schema_metadata({key: json.dumps(identity).encode("utf-8")})


def read_identity(table: pa.Table, key: bytes, table_name: str) -> dict[str, Any]:
    """The identity :func:`with_identity` wrote; a table without it was not written by goldeneval."""
    raw = (table.schema.metadata or {}).get(key)
    if raw is None:
        raise StoreError(f"{table_name} table has no {key.decode()} metadata: not written by goldeneval")
    identity: dict[str, Any] = json.loads(raw)
    return identity


def table_privacy(table: pa.Table, key: bytes, table_name: str) -> PrivacyMode:
    """The privacy mode a table was written under."""
    return PrivacyMode(read_identity(table, key, table_name)["privacy"])


def stored_run_id_for(tables_run_id: str, set_id: str, series: str) -> str:
    """The store id of the run built from one run's tables: the same tables give the same id,
    so recording them twice is idempotent (``ResultStore.save_run``)."""
    return uuid.uuid5(STORED_RUN_NAMESPACE, f"{tables_run_id}\x1f{set_id}\x1f{series}").hex


def partition_folder(root: Path, table_name: str, partition: Mapping[str, str]) -> Path:
    """``<root>/<table>/<dim>=<value>/...`` in the given dimension order."""
    folder = root / table_name
    for dimension, value in partition.items():
        folder = folder / f"{dimension}={value}"
    return folder


_FILE_TIME = "%Y%m%dT%H%M%S%fZ"
"""How a partition file's name begins: when its run was evaluated, UTC (so names sort by it)."""


def _file_stem(evaluated_at: datetime, run_id: str) -> str:
    return f"{evaluated_at.astimezone(UTC).strftime(_FILE_TIME)}_{run_id}"


def file_run_id(path: Path) -> str:
    """The id of the (Dagster) run that wrote a partition file: ``<time>_<run id>.parquet``."""
    return path.stem.partition("_")[2]


def file_evaluated_at(path: Path) -> datetime:
    """When the run that wrote a partition file was evaluated, from its name (a table of no
    rows has no ``evaluated_at`` value to read)."""
    return datetime.strptime(path.stem.partition("_")[0], _FILE_TIME).replace(tzinfo=UTC)


REPORTS_FOLDER = "reports"
"""The folder below the tables root that holds each judged run's HTML report (the Dagster
``no_regression`` check writes it); retention deletes a purged run's report with its tables."""


def report_file(root: Path, stored_run_id: str) -> Path:
    """Where the HTML report of a stored run lies: ``<tables>/reports/<run id>.html`` (stable:
    judging the run again replaces it)."""
    return root / REPORTS_FOLDER / f"{re.sub(r'[^A-Za-z0-9._-]', '_', stored_run_id)}.html"


def report_files(root: Path, stored_run_ids: set[str]) -> list[Path]:
    """The HTML reports below ``root`` of ``stored_run_ids`` that exist."""
    return sorted(path for path in (report_file(root, run_id) for run_id in stored_run_ids) if path.is_file())


def run_files(root: Path, run_ids: set[str]) -> list[Path]:
    """Every table file below ``root`` written by one of ``run_ids``."""
    if not run_ids or not root.is_dir():
        return []
    return sorted(path for path in root.rglob("*.parquet") if file_run_id(path) in run_ids)


def write_partition_file(
    root: Path,
    table_name: str,
    partition: Mapping[str, str],
    table: WrittenTable,
    run_id: str,
    evaluated_at: datetime,
) -> Path:
    """Write one Parquet file for this run; renamed into place, so a file is whole or absent.
    A :class:`TableInBatches` is written a batch at a time, one row group each, and only if its
    batches hold the rows it declared."""
    folder = partition_folder(root, table_name, partition)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        target = folder / f"{_file_stem(evaluated_at, run_id)}.parquet"
        handle, staging = tempfile.mkstemp(dir=folder, prefix=".writing-", suffix=".tmp")
        os.close(handle)
        try:
            if isinstance(table, TableInBatches):
                written = 0
                with pq.ParquetWriter(staging, table.schema) as writer:
                    for batch in table.to_batches():
                        writer.write_batch(batch)
                        written += batch.num_rows
                if written != table.num_rows:  # its metadata (the asset's row count) would say otherwise
                    raise StoreError(
                        f"{folder}: the {table_name} table made {written:,} rows, not the {table.num_rows:,} "
                        "it declared: nothing written"
                    )
            else:
                pq.write_table(table, staging)
            os.replace(staging, target)
        except BaseException:
            Path(staging).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise StoreError(f"{folder}: cannot write the {table_name} table: {exc.strerror}") from None
    return target


def read_table(path: Path) -> pa.Table:
    return pq.read_table(path)


def markdown_preview(table: pa.Table, limit: int = 10, columns: Sequence[str] | None = None) -> str:
    """The first rows as a Markdown table (lists joined by commas, floats to 3 places)."""
    names = [c for c in (columns or table.column_names) if c in table.column_names]

    def cell(value: Any) -> str:
        if value is None:
            return ""
        if isinstance(value, float):
            return f"{value:.3f}"
        if isinstance(value, list):
            return ", ".join(str(v) for v in value)
        return str(value).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    for row in table.select(names).slice(0, limit).to_pylist():
        lines.append("| " + " | ".join(cell(row[n]) for n in names) + " |")
    if table.num_rows > limit:
        lines.append(f"\n{table.num_rows - limit} more rows")
    return "\n".join(lines)
