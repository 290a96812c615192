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


def rates(summary: RateSummary, prefix: str = "") -> dict[str, Any]:
    """Float rates (the UI plots float metadata over time); absent when nothing was scored."""
    values: dict[str, Any] = {}
    if summary.top1_rate is not None:
        values[f"{prefix}top1_hit_rate"] = dg.MetadataValue.float(summary.top1_rate)
    if summary.top3_rate is not None:
        values[f"{prefix}top3_hit_rate"] = dg.MetadataValue.float(summary.top3_rate)
    return values


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
