"""The Parquet IO manager hands the hits table it wrote in this process to the summary of the
same run (issue 26): they are not decoded again from the file just written.
Any other reader (a later run, another process) reads the file.  Counted, never timed."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import assets.io_manager
from assets import build_assets, evaluation_partitions
from assets.names import TABLES_IO_MANAGER
from assets.partitions import prompt_partitions
from assets.prompts import build_prompt_assets
from goldeneval.store.parquet import read_table
from tests.dagster_support import definitions, latest_metadata, run_nightly, write_project

KEY = "fixed|alpha-set"
SETS = {
    "alpha-set": [
        {"id": "a1", "text": "apple orchard", "form": "MATCH", "expected": ["apples"]},
        {"id": "a2", "text": "yellow tropical", "form": "GAP", "expected": ["bananas"]},
    ]
}


def _tables_read_as_inputs(graph: list[object]) -> set[str]:
    read = set()
    for definition in graph:
        if not isinstance(definition, dg.AssetsDefinition):
            continue
        for name, key in definition.keys_by_input_name.items():
            if definition.node_def.input_def_named(name).input_manager_key == TABLES_IO_MANAGER:
                read.add(key.path[-1])
    return read


def _declared(graph: list[object], key: str) -> dict[str, object]:
    """Each table's definition metadata ``key``, where it has one."""
    return {
        spec.key.path[-1]: spec.metadata[key]
        for definition in graph
        if isinstance(definition, dg.AssetsDefinition)
        for spec in definition.specs
        if key in spec.metadata
    }


def test_the_table_kept_for_the_hand_over_is_the_one_the_retrieval_summary_reads() -> None:
    handed_over = assets.io_manager.HANDED_OVER_METADATA_KEY
    graph = build_assets(evaluation_partitions(["a-set"], ["a-retriever"]))
    assert _tables_read_as_inputs(graph) == set(_declared(graph, handed_over)) == {"question_hits"}
    prompts = build_prompt_assets(prompt_partitions(["a-prompt-set"], ["a-model"]))
    assert _declared(prompts, handed_over) == {}  # the prompt summary reads its file as written


def test_every_table_declares_its_partition_folders_to_the_io_manager() -> None:
    folders = assets.io_manager.PARTITION_FOLDERS_METADATA_KEY
    graph = build_assets(evaluation_partitions(["a-set"], ["a-retriever"]))
    prompts = build_prompt_assets(prompt_partitions(["a-prompt-set"], ["a-model"]))
    assert _declared(graph, folders) == dict.fromkeys(
        ("golden_question_sets", "retriever_rankings", "question_hits"), "set,retriever"
    )
    assert _declared(prompts, folders) == dict.fromkeys(
        ("golden_prompt_sets", "model_responses", "prompt_gradings"), "prompt_set,model"
    )


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Path]]:
    """The files the IO manager reads back."""
    read: list[Path] = []
    original = read_table

    def counting(path: Path) -> pa.Table:
        read.append(path)
        return original(path)

    monkeypatch.setattr(assets.io_manager, "read_table", counting)
    yield read


@pytest.fixture
def instance() -> Iterator[dg.DagsterInstance]:
    with dg.instance_for_test() as test_instance:
        yield test_instance


@pytest.mark.slow  # the in-process asset graph
def test_the_summary_takes_the_hits_its_run_wrote_without_reading_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance: dg.DagsterInstance, reads: list[Path]
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    project = write_project(tmp_path, sets=SETS)
    handed: list[pa.Table | None] = []
    original_take = assets.io_manager.WRITTEN.take

    def take(run_id: str, path: str) -> pa.Table | None:
        handed.append(original_take(run_id, path))
        return handed[-1]

    monkeypatch.setattr(assets.io_manager.WRITTEN, "take", take)
    [result] = run_nightly(definitions(project), instance, [KEY])
    assert result.success
    assert reads == []
    [table] = handed
    assert table is not None
    written = Path(str(latest_metadata(instance, "question_hits", KEY)["path"].value))
    read_back = pq.read_table(written)
    assert table.equals(read_back)  # the same columns and values (a map's entries field is renamed in Parquet)
    assert table.schema.metadata == read_back.schema.metadata  # the run's identity
    assert assets.io_manager.WRITTEN.take(result.run_id, str(written)) is None  # handed over once


@pytest.mark.slow  # the in-process asset graph
def test_a_summary_materialised_in_a_later_run_reads_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, instance: dg.DagsterInstance, reads: list[Path]
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    project = write_project(tmp_path, sets=SETS)
    defs = definitions(project)
    run_nightly(defs, instance, [KEY])
    written = Path(str(latest_metadata(instance, "question_hits", KEY)["path"].value))
    job = defs.resolve_implicit_global_asset_job_def()
    result = job.execute_in_process(
        partition_key=KEY, instance=instance, asset_selection=[dg.AssetKey("evaluation_summary")]
    )
    assert result.success
    assert reads == [written]
