"""What writing its Parquet tables costs the README's main command, measured apart from it.

``python -m pipelines.main`` writes, for every partition, the golden set, rankings and hits
tables the CLI does not write (the rankings table of a 100,000-question run at depth 100 holds
ten million rows).  This takes the newest file of each table folder below ``--tables`` (what
the job just wrote) and times writing it again through the job's own writer,
:func:`goldeneval.store.parquet.write_partition_file`, into a scratch folder beside
``--tables``: a table the job wrote a batch at a time (the rankings table: several row groups,
or none when no question was answered) is handed over as a
:class:`~goldeneval.store.parquet.TableInBatches` whose batches are its row groups, each read
when the writer asks for it, as the job makes each when asked; a table of one row group is
read whole and handed over whole.  Only the writes are timed (reading a row group is taken
out), so the seconds are what pyarrow takes to write those tables, however fast the job
builds them: beside Dagster's floor (``benchmarks/dagster_floor.py``) and what the questions
cost the CLI, part of a lower bound for the job as long as it writes these tables so.

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

from goldeneval.store.parquet import TableInBatches, file_evaluated_at, file_run_id, write_partition_file


def newest_files(root: Path) -> list[Path]:
    """The newest Parquet file of each folder below ``root`` (file names begin with the time
    the run was evaluated, so the newest sorts last)."""
    newest: dict[Path, Path] = {}
    for path in sorted(root.rglob("*.parquet")):
        newest[path.parent] = path
    return sorted(newest.values())


def rewrite(path: Path, root: Path, scratch: Path) -> dict[str, Any]:
    """Write the table of ``path`` again into ``scratch``, as the job wrote it; the seconds
    the write took, and the rows and row groups of the file read and of the file written."""
    parquet = pq.ParquetFile(path)
    row_groups = parquet.metadata.num_row_groups
    relative = path.parent.relative_to(root)
    name, partition = relative.parts[0], dict(part.split("=", 1) for part in relative.parts[1:])
    evaluated_at = file_evaluated_at(path)
    reading = [0.0]

    def row_groups_read_when_asked() -> Iterator[pa.RecordBatch]:
        for index in range(row_groups):
            started = time.perf_counter()
            batch = parquet.read_row_group(index).combine_chunks().to_batches()
            reading[0] += time.perf_counter() - started
            yield from batch  # one batch: the chunks were combined

    handed: pa.Table | TableInBatches
    if row_groups == 1:
        handed = parquet.read()
    else:  # the job wrote it a batch at a time, one row group each
        handed = TableInBatches(
            schema=parquet.schema_arrow,
            num_rows=parquet.metadata.num_rows,
            evaluated_at=evaluated_at,
            make_batches=row_groups_read_when_asked,
        )
    started = time.perf_counter()
    written = write_partition_file(scratch, name, partition, handed, file_run_id(path), evaluated_at)
    write_s = time.perf_counter() - started - reading[0]
    return {
        "table": name,
        "rows": parquet.metadata.num_rows,
        "row_groups": row_groups,
        "written_row_groups": pq.ParquetFile(written).metadata.num_row_groups,
        "write_s": write_s,
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
    # beside the tables: the same file system as the job's writes
    with tempfile.TemporaryDirectory(prefix=".goldeneval-tables-floor-", dir=args.tables.parent) as scratch:
        tables = [rewrite(path, args.tables, Path(scratch)) for path in files]
    record = {"tables": tables, "write_s": sum(t["write_s"] for t in tables)}
    args.json.write_text(json.dumps(record, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
