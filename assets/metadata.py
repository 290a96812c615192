"""Materialisation metadata helpers: rates as floats, Arrow schemas as Dagster TableSchemas."""

from __future__ import annotations

from typing import Any

import dagster as dg
import pyarrow as pa

from goldeneval.scoring import RateSummary

UNKNOWN = "unknown"


def table_schema(schema: pa.Schema) -> dg.TableSchema:
    return dg.TableSchema(columns=[dg.TableColumn(name=f.name, type=str(f.type)) for f in schema])


def rates(summary: RateSummary, prefix: str = "") -> dict[str, Any]:
    """Float rates (the UI plots float metadata over time); absent when nothing was scored."""
    values: dict[str, Any] = {}
    if summary.top1_rate is not None:
        values[f"{prefix}top1_hit_rate"] = dg.MetadataValue.float(summary.top1_rate)
    if summary.top3_rate is not None:
        values[f"{prefix}top3_hit_rate"] = dg.MetadataValue.float(summary.top3_rate)
    return values


def text_or_unknown(value: str | None) -> dg.MetadataValue:
    return dg.MetadataValue.text(value if value is not None else UNKNOWN)
