"""Dagster resources: build goldeneval objects (suite, store, tables, alert channels) from config."""

from resources.alerts import AlertsResource
from resources.goldeneval import GoldenEvalResource

__all__ = ["AlertsResource", "GoldenEvalResource"]
