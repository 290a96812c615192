"""The nightly's ``no_regression`` check on a mismatch says what changed (issue 43): two nights
of a copy of the bundled sample with the lexical retriever, a page edited and a label changed
in between, materialised in-process as the daemon would (the nightly, then the regression
sensor's check).

The summary of each night records the run rebuilt from its Parquet table, as it does when
each step runs in a process of its own (Dagster's default executor, dask): the manifest then
comes from the evaluating step.  Under ``metadata_only`` no document id is in the check, its
metadata, the event log, the store or any Parquet file.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import pyarrow.parquet as pq
import pytest
import yaml

import assets.evaluation
from pipelines.build import build_definitions
from tests.dagster_support import latest_metadata, run_nightly, run_requests, tick_regression_sensor
from tests.test_dagster_check_description import no_regression
from tests.test_manifest import EDITED, RELABELLED, SAMPLE, corpus_ids, edit_page, relabel, store_text

KEY = "lexical|transit-sample"


@dataclass
class Nights:
    root: Path
    instance: dg.DagsterInstance

    @property
    def store(self) -> Path:
        return self.root / ".goldeneval" / "results.duckdb"


def _nights(root: Path, privacy: str) -> Iterator[Nights]:
    sample = Path(shutil.copytree(SAMPLE, root / "transit"))
    config = root / "goldeneval.yaml"
    suite = {
        "sets": [str(sample / "golden.yaml")],
        "retrievers": {"lexical": {"id": "goldeneval.lexical"}},
        "privacy": privacy,
        "timeout_s": 30,
    }
    config.write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch, dg.DagsterInstance.ephemeral() as instance:
        patch.chdir(root)
        # each summary rebuilds its run from the table, as in a step process of its own
        patch.setattr(assets.evaluation.EVALUATED_RUNS, "take", lambda *_: None)
        cursor = None
        for night in (1, 2):
            if night == 2:
                edit_page(sample)
                relabel(sample)
            defs = build_definitions(config)
            assert all(r.success for r in run_nightly(defs, instance, [KEY]))
            tick = tick_regression_sensor(defs, instance, cursor=cursor)
            assert all(r.success for r in run_requests(defs, instance, tick))
            cursor = tick.cursor
        yield Nights(root, instance)


@pytest.fixture(scope="module")
def full(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    yield from _nights(tmp_path_factory.mktemp("full"), "full")


@pytest.fixture(scope="module")
def private(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Nights]:
    yield from _nights(tmp_path_factory.mktemp("private"), "metadata_only")


@pytest.mark.slow
def test_the_check_names_what_changed_and_compares_the_rest_for_information(full: Nights) -> None:
    check, _ = no_regression(full.instance)
    assert not check.passed  # a mismatch has no numeric verdict: the gate fails
    assert check.metadata["state"].value == "mismatch"
    description = check.description or ""
    first = description.splitlines()[0]
    assert first.startswith("mismatch: benchmark differs from accepted level run ")  # the nightly default
    assert f"1 document changed: {EDITED}" in first
    assert f"labels changed for 1 question: {RELABELLED}" in first
    assert "Informational, no numeric verdict: the 78 questions whose labels and judged documents did not change" in (
        description
    )
    assert "- top-1 hit rate " in description and " over 78 questions;" in description
    informational = check.metadata["informational"].value
    assert isinstance(informational, dict)
    assert informational["note"] == "informational, no numeric verdict"
    assert informational["unchanged_questions"] == 78
    change = check.metadata["benchmark_change"].value
    assert isinstance(change, dict) and change["documents"]["changed_ids"] == [EDITED]
    materialised = latest_metadata(full.instance, "regression_check", KEY)
    assert materialised["verdict_details"].value["informational"]["unchanged_questions"] == 78
    markdown = str(check.metadata["comparison"].value)
    assert "**Informational, no numeric verdict: the 78 questions whose labels and judged documents" in markdown
    assert "| top-1 hit rate | 78 |" in markdown


@pytest.mark.slow
def test_under_metadata_only_the_check_counts_and_no_document_id_is_kept(private: Nights) -> None:
    check, events = no_regression(private.instance)
    assert not check.passed
    description = check.description or ""
    assert "corpus changed (72 -> 72 documents; document ids are not kept under metadata_only)" in description
    assert "labels changed for 1 question;" in description
    assert "Informational, no numeric verdict: the 78 questions" in description
    written = [
        ("description", description),
        ("check metadata", repr(check.metadata)),
        ("materialisation metadata", repr(latest_metadata(private.instance, "regression_check", KEY))),
        ("summary metadata", repr(latest_metadata(private.instance, "evaluation_summary", KEY))),
        ("event log", "\n".join(repr(event) for event in events)),
        ("store", store_text(private.store)),
    ]
    tables = sorted((private.root / ".goldeneval" / "tables").rglob("*.parquet"))
    assert tables
    written += [(f"Parquet file {path.name}", repr(pq.read_table(path).to_pylist())) for path in tables]
    written += [(f"Parquet metadata {path.name}", repr(pq.read_schema(path).metadata)) for path in tables]
    for where, text in written:
        for document in corpus_ids():
            assert document not in text, f"document id {document} in the {where}"
