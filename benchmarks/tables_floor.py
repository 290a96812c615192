"""What writing its Parquet tables costs the README's main command, measured apart from it.

``python -m pipelines.main`` writes, for every partition, the golden set, rankings and hits
tables the CLI does not write (the rankings table of a 100,000-question run at depth 100 holds
ten million rows).  This reads back the newest file of each table folder below ``--tables``
(what the job just wrote), then times writing each again through the job's own writer,
:func:`goldeneval.store.parquet.write_partition_file`, into a scratch folder: a table the
job wrote in several row groups (the rankings table, made a batch at a time) is handed over
in those batches, as the job hands it; a smaller one whole.  Only the writes are timed (the
reading is not), so the seconds are what pyarrow takes to write those tables, however fast
the job builds them: beside Dagster's floor (``benchmarks/dagster_floor.py``) and what the
questions cost the CLI, part of a lower bound for the job.

    .venv/bin/python -m benchmarks.tables_floor --tables ROOT --json OUT.json
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from goldeneval.store.parquet import TableInBatches, file_run_id, write_partition_file


def newest_files(root: Path) -> list[Path]:
    """The newest Parquet file of each folder below ``root`` (file names begin with the time
    the run was evaluated, so the newest sorts last)."""
    newest: dict[Path, Path] = {}
    for path in sorted(root.rglob("*.parquet")):
        newest[path.parent] = path
    return sorted(newest.values())


def _batches(table: pa.Table) -> Iterator[pa.RecordBatch]:
    return iter(table.to_batches())


def rewrite(path: Path, root: Path, scratch: Path) -> dict[str, Any]:
    """Write the table of ``path`` again into ``scratch``, as the job wrote it; the seconds
    the write took, and the rows and row groups it holds."""
    parquet = pq.ParquetFile(path)
    row_groups = parquet.metadata.num_row_groups
    table = parquet.read()
    relative = path.parent.relative_to(root)
    name, partition = relative.parts[0], dict(part.split("=", 1) for part in relative.parts[1:])
    evaluated_at = table.column("evaluated_at")[0].as_py()
    handed: pa.Table | TableInBatches = table
    if row_groups > 1:  # the job wrote it a batch at a time, one row group each
        handed = TableInBatches(
            schema=table.schema,
            num_rows=table.num_rows,
            evaluated_at=evaluated_at,
            make_batches=lambda: _batches(table),
        )
    started = time.perf_counter()
    write_partition_file(scratch, name, partition, handed, file_run_id(path), evaluated_at)
    return {
        "table": name,
        "rows": table.num_rows,
        "row_groups": row_groups,
        "write_s": time.perf_counter() - started,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", type=Path, required=True, help="the tables root the job wrote into")
    parser.add_argument("--json", type=Path, required=True, help="where to write the seconds, as JSON")
    args = parser.parse_args(argv)
    files = newest_files(args.tables)
    if not files:
        print(f"{args.tables}: no Parquet table below it", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="goldeneval-tables-floor-") as scratch:
        tables = [rewrite(path, args.tables, Path(scratch)) for path in files]
    record = {"tables": tables, "write_s": sum(t["write_s"] for t in tables)}
    args.json.write_text(json.dumps(record, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
