"""Partitions: one per (golden set x named retriever), both read from the suite file."""

from __future__ import annotations

import dagster as dg

SET_DIMENSION = "set"
RETRIEVER_DIMENSION = "retriever"


def evaluation_partitions(set_ids: list[str], retriever_names: list[str]) -> dg.MultiPartitionsDefinition:
    return dg.MultiPartitionsDefinition(
        {
            SET_DIMENSION: dg.StaticPartitionsDefinition(set_ids),
            RETRIEVER_DIMENSION: dg.StaticPartitionsDefinition(retriever_names),
        }
    )


def cell(partition_key: str) -> dict[str, str]:
    """``{"set": ..., "retriever": ...}`` of a multi-partition key, in hive folder order."""
    if isinstance(partition_key, dg.MultiPartitionKey):
        keys = partition_key.keys_by_dimension
    else:  # a key read back from storage as a plain string: "<retriever>|<set>"
        retriever, _, set_id = partition_key.partition("|")
        keys = {RETRIEVER_DIMENSION: retriever, SET_DIMENSION: set_id}
    return {SET_DIMENSION: keys[SET_DIMENSION], RETRIEVER_DIMENSION: keys[RETRIEVER_DIMENSION]}


PROMPT_SET_DIMENSION = "prompt_set"
MODEL_DIMENSION = "model"


def prompt_partitions(prompt_set_ids: list[str], model_names: list[str]) -> dg.MultiPartitionsDefinition:
    """One partition per (golden prompt set x named model), ADR-060."""
    return dg.MultiPartitionsDefinition(
        {
            PROMPT_SET_DIMENSION: dg.StaticPartitionsDefinition(prompt_set_ids),
            MODEL_DIMENSION: dg.StaticPartitionsDefinition(model_names),
        }
    )


def prompt_cell(partition_key: str) -> dict[str, str]:
    """``{"prompt_set": ..., "model": ...}`` of a prompt partition key, in hive folder order."""
    if isinstance(partition_key, dg.MultiPartitionKey):
        keys = partition_key.keys_by_dimension
    else:  # read back as a plain string: "<model>|<prompt set>" (dimensions in name order)
        model, _, prompt_set = partition_key.partition("|")
        keys = {MODEL_DIMENSION: model, PROMPT_SET_DIMENSION: prompt_set}
    return {PROMPT_SET_DIMENSION: keys[PROMPT_SET_DIMENSION], MODEL_DIMENSION: keys[MODEL_DIMENSION]}
