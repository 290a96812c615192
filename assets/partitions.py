"""Partitions: one per (set x plug-in) of a kind, both read from the suite file.

Retrieval runs are partitioned by (golden set x named retriever), prompt runs by (golden
prompt set x named model); both are two static dimensions, built and read back here once.
"""

from __future__ import annotations

import dagster as dg

from goldeneval.kinds import KindDeclaration

SET_DIMENSION = "set"
RETRIEVER_DIMENSION = "retriever"
PROMPT_SET_DIMENSION = "prompt_set"
MODEL_DIMENSION = "model"
RETRIEVAL_FOLDERS = (SET_DIMENSION, RETRIEVER_DIMENSION)
"""A retrieval partition's hive folders, in order: ``set=<id>/retriever=<name>``."""
PROMPT_FOLDERS = (PROMPT_SET_DIMENSION, MODEL_DIMENSION)
"""A prompt partition's hive folders, in order: ``prompt_set=<id>/model=<name>``."""


def _partitions(dimensions: dict[str, list[str]]) -> dg.MultiPartitionsDefinition:
    return dg.MultiPartitionsDefinition({name: dg.StaticPartitionsDefinition(ids) for name, ids in dimensions.items()})


def partition_cell(partition_key: str, dimensions: tuple[str, ...]) -> dict[str, str]:
    """The key's value per dimension, in the given (hive folder) order.  A key read back from
    storage as a plain string joins the values with ``|`` in dimension-name order."""
    if isinstance(partition_key, dg.MultiPartitionKey):
        keys = partition_key.keys_by_dimension
    else:
        keys = dict(zip(sorted(dimensions), partition_key.split("|"), strict=True))
    return {name: keys[name] for name in dimensions}


def evaluation_partitions(set_ids: list[str], retriever_names: list[str]) -> dg.MultiPartitionsDefinition:
    return _partitions({SET_DIMENSION: set_ids, RETRIEVER_DIMENSION: retriever_names})


def cell(partition_key: str) -> dict[str, str]:
    """``{"set": ..., "retriever": ...}`` of a multi-partition key, in hive folder order."""
    return partition_cell(partition_key, RETRIEVAL_FOLDERS)


def prompt_partitions(prompt_set_ids: list[str], model_names: list[str]) -> dg.MultiPartitionsDefinition:
    """One partition per (golden prompt set x named model), ADR-060."""
    return _partitions({PROMPT_SET_DIMENSION: prompt_set_ids, MODEL_DIMENSION: model_names})


def prompt_cell(partition_key: str) -> dict[str, str]:
    """``{"prompt_set": ..., "model": ...}`` of a prompt partition key, in hive folder order."""
    return partition_cell(partition_key, PROMPT_FOLDERS)


def kind_partitions(kind: KindDeclaration, set_ids: list[str], members: list[str]) -> dg.MultiPartitionsDefinition:
    """A declared kind's partitions: its set ids x its series names, on its two dimensions."""
    set_dimension, member_dimension = kind.dimensions
    return _partitions({set_dimension: set_ids, member_dimension: members})


def kind_cell(partition_key: str, kind: KindDeclaration) -> dict[str, str]:
    """A declared kind's partition key as its value per dimension, in hive folder order."""
    return partition_cell(partition_key, kind.dimensions)
