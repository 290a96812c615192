"""The graph every kind of run has: its golden set, the step that evaluates it, the summary.

A kind (retrieval: ``golden_question_sets`` -> ``retriever_rankings`` -> ``question_hits``;
prompts: ``golden_prompt_sets`` -> ``model_responses`` -> ``prompt_gradings``) has one asset
for the validated set and one multi-asset step whose outputs are tables, each depending on the
one before; all are stored by the Parquet IO manager (``assets.io_manager``); then the summary
that records the run (``assets.summary``).  Built here once, from each kind's
:class:`EvaluatedKind`, so the two kinds' graphs cannot drift apart in how they are declared.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg
import pyarrow as pa

from assets.io_manager import HANDED_OVER_METADATA_KEY, PARTITION_FOLDERS_METADATA_KEY
from assets.metadata import table_metadata
from assets.names import TABLES_IO_MANAGER
from assets.summary import build_summary_asset
from goldeneval.core.privacy import PrivacyMode
from goldeneval.store.parquet import TableInBatches, WrittenTable, markdown_preview, partition_folder, run_files

__all__ = ["PREVIEW_ROWS", "EvaluatedKind", "Table", "build_kind_assets", "full_table", "table_output"]

PREVIEW_ROWS = 10
"""Rows of a table's Markdown preview (``markdown_preview``'s limit); the whole table is one
DuckDB line away (:func:`full_table`)."""


@dataclass(frozen=True)
class Table:
    """One asset: its name and what the UI says of it."""

    name: str
    description: str


@dataclass(frozen=True)
class EvaluatedKind:
    """A kind's graph: the set asset ``golden`` (``load``'s table), the step ``evaluate``
    yielding ``outputs`` in order, each depending on the table before it, and the ``summary``
    (``summarise``) that records the run its last table describes."""

    group: str
    golden: Table
    load: Callable[..., Any]
    step: str
    evaluate: Callable[..., Any]
    outputs: tuple[Table, ...]
    summary: Table
    summarise: Callable[..., Any]
    check_description: str
    """What the summary's ``run_complete`` check says it checks."""
    folders: tuple[str, ...]
    """The partition's dimensions in the order of the tables' hive folders (``set``, ``retriever``)."""
    hand_over: bool = False
    """Whether the last table is handed to the summary in memory when this process wrote it
    (``assets.io_manager``), or read from its file."""


def build_kind_assets(
    kind: EvaluatedKind, partitions_def: dg.MultiPartitionsDefinition, *, store_kind: str = "duckdb"
) -> list[Any]:
    """The set asset, the step and the summary of ``kind`` over its partitions; the summary's
    kind tag names the store (``duckdb`` or ``postgres``).  Each table tells the Parquet IO
    manager its folders (and whether it is handed over) in its definition metadata: the IO
    manager serves every kind and knows none."""
    dimensions = sorted(dimension.name for dimension in partitions_def.partitions_defs)
    if sorted(kind.folders) != dimensions:  # else the IO manager would fail after the step's work
        raise ValueError(f"{kind.step}: folders {kind.folders} are not the partitions' dimensions {dimensions}")
    folders = {PARTITION_FOLDERS_METADATA_KEY: ",".join(kind.folders)}
    sets_asset = dg.asset(
        name=kind.golden.name,
        partitions_def=partitions_def,
        group_name=kind.group,
        kinds={"parquet"},
        io_manager_key=TABLES_IO_MANAGER,
        description=kind.golden.description,
        metadata=folders,
    )(kind.load)
    last = kind.outputs[-1]
    specs = [
        dg.AssetSpec(
            table.name,
            deps=[before.name],
            group_name=kind.group,
            kinds={"parquet"},
            description=table.description,
            metadata={**folders, **({HANDED_OVER_METADATA_KEY: True} if kind.hand_over and table is last else {})},
        ).with_io_manager_key(TABLES_IO_MANAGER)
        for before, table in zip([kind.golden, *kind.outputs], kind.outputs, strict=False)
    ]
    step_asset = dg.multi_asset(name=kind.step, specs=specs, partitions_def=partitions_def)(kind.evaluate)
    summary_asset = build_summary_asset(
        kind.summarise,
        name=kind.summary.name,
        group=kind.group,
        table=kind.outputs[-1].name,
        partitions_def=partitions_def,
        check_description=kind.check_description,
        description=kind.summary.description,
        store_kind=store_kind,
    )
    return [sets_asset, step_asset, summary_asset]


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def full_table(tables_root: Path, table_name: str, partition: Mapping[str, str], run_id: str) -> dict[str, Any]:
    """Where one run's whole table of a partition lies, and the DuckDB line that reads it:
    ``full_table`` (the Parquet file, ``<tables>/<table>/<dim>=<value>/.../<time>_<run
    id>.parquet``: the IO manager's layout) and ``full_table_sql``
    (``SELECT * FROM read_parquet('...')``).  ``partition`` is in hive folder order.

    Before the file is written (on the table's own materialisation: the IO manager writes it
    after the step yields it, and records its path as ``path``) only ``full_table_sql`` is
    given, reading ``*_<run id>.parquet`` in the partition's folder: that one file.  Neither
    names a question or a document, in any privacy mode (the folders are the partition's
    keys); the file holds what its privacy mode lets it hold."""
    folder = partition_folder(tables_root, table_name, partition)
    files = run_files(folder, {run_id})
    location = str(files[0]) if len(files) == 1 else str(folder / f"*_{run_id}.parquet")
    sql = {"full_table_sql": dg.MetadataValue.text(f"SELECT * FROM read_parquet({_sql_string(location)})")}
    return {"full_table": dg.MetadataValue.path(location), **sql} if len(files) == 1 else sql


def table_output(
    table: WrittenTable,
    output_name: str,
    privacy: PrivacyMode,
    metadata: Mapping[str, Any],
    *,
    preview: Sequence[str] = (),
    full: Mapping[str, Any] | None = None,
) -> dg.Output[WrittenTable]:
    """One output of a kind's step: the kind's ``metadata``, then what every table shows (the
    privacy mode it obeys, its rows and schema; where the whole table lies and the DuckDB line
    that reads it, ``full``: :func:`full_table`) and, for the table a person reads first, a
    Markdown preview of the ``preview`` columns of its first :data:`PREVIEW_ROWS` rows, under a
    label that says so, ending with that DuckDB line."""
    shown: dict[str, Any] = {}
    if preview:
        head = table
        if isinstance(head, TableInBatches):  # its first batch holds the first rows
            head = pa.Table.from_batches(list(itertools.islice(head.to_batches(), 1)), schema=head.schema)
        markdown = markdown_preview(head, limit=PREVIEW_ROWS, columns=preview)
        if full is not None:
            sql = full["full_table_sql"]
            sql = sql.value if isinstance(sql, dg.MetadataValue) else sql
            markdown += f"\n\nAll {table.num_rows} rows, in DuckDB:\n\n```sql\n{sql}\n```\n"
        shown = {f"preview (first {PREVIEW_ROWS} rows)": dg.MetadataValue.md(markdown)}
    return dg.Output(
        table,
        output_name=output_name,
        metadata={**metadata, "privacy": privacy.value, **table_metadata(table), **dict(full or {}), **shown},
    )
