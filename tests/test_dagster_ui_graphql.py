"""Issue 25: what the UI reads, through the webserver's GraphQL, after nightly runs launched by it.

The same services as tests/test_dagster_e2e.py (dagster-webserver and dagster-daemon on
127.0.0.1, a temporary DAGSTER_HOME, two partitions launched through GraphQL): the per-series
key's observations (its Plots tab), the per-set key's latest night side by side, the
``comparison`` Markdown on the ``no_regression`` evaluation and on the summary, and the store's
kind tag on the asset node.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.test_dagster_e2e import KEYS, Services, services

__all__ = ["services"]  # the module-scoped fixture, started once for this module

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

ENTRIES = """label __typename ... on FloatMetadataEntry { floatValue } ... on MarkdownMetadataEntry { mdStr }
  ... on TextMetadataEntry { text }"""
OBSERVATIONS = (
    """query($path: [String!]!) { assetOrError(assetKey: {path: $path}) { ... on Asset {
  assetObservations(limit: 100) { timestamp metadataEntries { """
    + ENTRIES
    + " } } } } }"
)
MATERIALISATIONS = (
    """query($path: [String!]!) { assetOrError(assetKey: {path: $path}) { ... on Asset {
  assetMaterializations(limit: 100) { partition metadataEntries { """
    + ENTRIES
    + " } } } } }"
)
CHECK = (
    """query($path: [String!]!, $check: String!) {
  assetCheckExecutions(assetKey: {path: $path}, checkName: $check, limit: 100) {
    partition evaluation { success description metadataEntries { """
    + ENTRIES
    + " } } } }"
)
NODES = "{ assetNodes { assetKey { path } groupName kinds } }"


def _values(entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {e["label"]: e.get("floatValue", e.get("mdStr", e.get("text"))) for e in entries}


def _summary(services: Services, partition: str) -> dict[str, Any]:
    found = services.graphql(MATERIALISATIONS, {"path": ["evaluation_summary"]})["assetOrError"]
    [event] = [m for m in found["assetMaterializations"] if m["partition"] == partition]
    return _values(event["metadataEntries"])


def test_a_series_key_holds_one_observation_per_night_with_the_summarys_rates(services: Services) -> None:
    for key in KEYS:
        retriever, set_id = key.split("|")
        found = services.graphql(OBSERVATIONS, {"path": ["series", set_id, retriever]})["assetOrError"]
        [point] = [_values(o["metadataEntries"]) for o in found["assetObservations"]]
        summary = _summary(services, key)
        assert point["stored_run_id"] == summary["stored_run_id"]
        assert f"{point['top3_hit_rate']:.3f}" == summary["top3_hit_rate"]  # a float there, its text here


def test_the_nightly_key_shows_every_retriever_of_the_set_side_by_side(services: Services) -> None:
    found = services.graphql(OBSERVATIONS, {"path": ["nightly", "alpha-set"]})["assetOrError"]
    latest = max(found["assetObservations"], key=lambda o: float(o["timestamp"]))
    night = _values(latest["metadataEntries"])
    lexical = _summary(services, "lexical|alpha-set")
    assert f"{night['lexical/top1_hit_rate']:.3f}" == lexical["top1_hit_rate"]
    table = night["retrievers"]
    assert "| retriever | top-1 | top-3 | verdict | stored run |" in table
    assert "| fixed |" in table and "| lexical |" in table


def test_the_check_and_the_summary_carry_the_comparison_as_markdown(services: Services) -> None:
    executions = services.graphql(CHECK, {"path": ["regression_check"], "check": "no_regression"})[
        "assetCheckExecutions"
    ]
    assert {e["partition"] for e in executions} == set(KEYS)
    for execution in executions:
        evaluation = execution["evaluation"]
        comparison = _values(evaluation["metadataEntries"])["comparison"]
        status = evaluation["description"].split(":", 1)[0]
        assert comparison.startswith(f"**{status}**"), (evaluation["description"], comparison)
        assert comparison == _summary(services, execution["partition"])["comparison"]


def test_the_asset_nodes_name_the_store_and_group_the_series(services: Services) -> None:
    nodes = {"/".join(n["assetKey"]["path"]): n for n in services.graphql(NODES)["assetNodes"]}
    assert nodes["evaluation_summary"]["kinds"] == ["duckdb"]
    assert nodes["series/alpha-set/fixed"]["groupName"] == "goldeneval_series"
    assert nodes["nightly/alpha-set"]["groupName"] == "goldeneval_series"
