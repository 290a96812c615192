"""Materialisation metadata helpers: rates as floats, Arrow schemas as Dagster TableSchemas."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg
import pyarrow as pa

from goldeneval.retrieval.scoring import RateSummary

UNKNOWN = "unknown"


def table_schema(schema: pa.Schema) -> dg.TableSchema:
    return dg.TableSchema(columns=[dg.TableColumn(name=f.name, type=str(f.type)) for f in schema])


def table_metadata(table: pa.Table) -> dict[str, Any]:
    """A table's row count and column schema, as the UI shows them."""
    return {"dagster/row_count": table.num_rows, "dagster/column_schema": table_schema(table.schema)}


def float_rates(values: Mapping[str, float | None]) -> dict[str, Any]:
    """Rates as floats (the UI plots float metadata over time); absent when nothing was scored."""
    return {name: dg.MetadataValue.float(value) for name, value in values.items() if value is not None}


def rates(summary: RateSummary, prefix: str = "") -> dict[str, Any]:
    """A retrieval summary's top-1 and top-3 hit rates."""
    return float_rates({f"{prefix}top1_hit_rate": summary.top1_rate, f"{prefix}top3_hit_rate": summary.top3_rate})


def rank_metrics(measured: Mapping[str, Any]) -> dict[str, Any]:
    """Each reported rank metric as a float (``metric/ndcg@10``, plotted over time by the UI)
    and the whole measurement (definitions from the registry, depth, relevance level, the
    questions left out) as JSON: :func:`goldeneval.retrieval.report.measurement`."""
    values: dict[str, Any] = {
        f"metric/{metric['name']}": dg.MetadataValue.float(metric["value"])
        for metric in measured["metrics"]
        if metric["value"] is not None
    }
    values["measurement"] = dg.MetadataValue.json(dict(measured))
    return values


def text_or_unknown(value: str | None) -> dg.MetadataValue:
    return dg.MetadataValue.text(value if value is not None else UNKNOWN)
