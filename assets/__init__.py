"""Dagster assets and asset checks: thin — load inputs, call goldeneval, attach metadata."""

from typing import Any

import dagster as dg

from assets.evaluation import RETRIEVAL_DAGSTER
from assets.names import NO_REGRESSION, RUN_COMPLETE, STORE_POOL
from assets.partitions import RETRIEVER_DIMENSION, SET_DIMENSION, cell, evaluation_partitions
from assets.regression import RegressionCheckConfig

__all__ = [
    "NO_REGRESSION",
    "RETRIEVER_DIMENSION",
    "RUN_COMPLETE",
    "SET_DIMENSION",
    "STORE_POOL",
    "RegressionCheckConfig",
    "build_assets",
    "cell",
    "evaluation_partitions",
]


def build_assets(partitions_def: dg.MultiPartitionsDefinition, *, store_kind: str = "duckdb") -> list[Any]:
    """The retrieval graph, its regression check, and the observed per-series assets."""
    return RETRIEVAL_DAGSTER.build(partitions_def, store_kind)
