"""Asset check specs evaluated per (set x retriever) partition."""

import warnings

import dagster as dg


def partitioned_check(
    name: str, asset: str, partitions_def: dg.PartitionsDefinition, description: str
) -> dg.AssetCheckSpec:
    """A check whose result is recorded per partition, so the UI, GraphQL and the alert
    sensor see which (set x retriever) failed.  Partitioned checks are a preview feature of
    Dagster 1.13 (pinned in pyproject.toml); its warning is expected here and silenced here only."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=dg.PreviewWarning, message=".*AssetCheckSpec.*")
        return dg.AssetCheckSpec(name, asset=asset, partitions_def=partitions_def, description=description)
