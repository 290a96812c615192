"""Issue 25, defect 9: the UI names the store the suite writes to, PostgreSQL included.

The summary assets' kind tag (the badge the asset graph and catalogue show) and the summary's
``store`` / ``store_kind`` metadata say ``postgres`` for a PostgreSQL store, ``duckdb`` for
the DuckDB file; a PostgreSQL URL is text with its password redacted, not a file path.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from goldeneval.store import StoreLocation
from tests.dagster_support import SETS, definitions, latest_metadata, run_nightly, write_project

SUMMARIES = (dg.AssetKey("evaluation_summary"),)


def _kinds(defs: dg.Definitions) -> set[str]:
    specs = {spec.key: spec for spec in defs.resolve_all_asset_specs()}
    return {kind for key in SUMMARIES for kind in specs[key].kinds}


def test_the_kind_tag_follows_the_store_the_suite_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    project = write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    assert _kinds(definitions(project)) == {"duckdb"}
    monkeypatch.setenv("GOLDENEVAL_STORE", "postgresql://ci:s3cret@db.example:5432/history")
    assert _kinds(definitions(project)) == {"postgres"}  # no connection needed to say so


@pytest.mark.slow
def test_a_summary_stored_in_postgres_says_so_in_its_metadata(
    tmp_path: Path, postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    project = write_project(tmp_path, sets={"alpha-set": SETS["alpha-set"]})
    monkeypatch.setenv("GOLDENEVAL_STORE", postgres_url)
    defs = definitions(project)
    instance = dg.DagsterInstance.ephemeral()
    assert all(r.success for r in run_nightly(defs, instance, ["fixed|alpha-set"]))
    metadata = latest_metadata(instance, "evaluation_summary", "fixed|alpha-set")
    assert metadata["store_kind"].value == "postgres"
    assert isinstance(metadata["store"], dg.TextMetadataValue)
    assert metadata["store"].value == str(StoreLocation.parse(postgres_url))
    assert not project.store.exists()  # nothing went to a DuckDB file
