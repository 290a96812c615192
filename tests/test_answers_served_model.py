"""Served-model identity (issue 42): the ``model`` a server returns is recorded and joins the
variant, so an alias that moved to a new snapshot is a treatment change, shown; a plug-in model
can declare what it serves (``served_model``), so two served models behind one plug-in id are
two series."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.core.provenance import Provenance
from goldeneval.prompts.openai_chat import OpenAIChatModel
from goldeneval.prompts.pipeline import served_provenance
from goldeneval.store import ResultStore
from tests.chat_server import Reply, chat_server

PROMPTS = {"id": "served", "prompts": [{"id": "p1", "prompt": "What does a day ticket cost?", "reference": "7.80"}]}


def _served_answer(snapshot: str | None) -> Reply:
    document: dict[str, Any] = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "7.80"}}]}
    if snapshot is not None:
        document["model"] = snapshot
    return Reply(200, json.dumps(document).encode(), (("Content-Type", "application/json"),))


def _prompts(tmp_path: Path, *args: str) -> Result:
    path = tmp_path / "served.yaml"
    path.write_text(yaml.safe_dump(PROMPTS), encoding="utf-8")
    common = ["prompts", "--set", str(path), "--store", str(tmp_path / "s.duckdb"), "--no-progress"]
    common += ["--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    return CliRunner().invoke(main, [*common, *args])


def _openai_runs(tmp_path: Path, snapshots: list[str | None]) -> list[dict[str, Any]]:
    """One prompt run per snapshot, against one server (one endpoint: one pipeline)."""
    serving: list[str | None] = [None]
    documents = []
    with chat_server(default=lambda body: _served_answer(serving[0])) as server:
        options = ["--model-option", f"base_url={server.base_url}", "--model-option", "model=gpt-mini"]
        for snapshot in snapshots:
            serving[0] = snapshot
            result = _prompts(tmp_path, "--model", "goldeneval.openai", *options)
            assert result.exit_code == 0, result.output
            documents.append(json.loads(result.stdout))
    return documents


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_served_snapshot_joins_the_variant_and_a_new_snapshot_is_a_treatment_change(tmp_path: Path) -> None:
    first, again, moved = _openai_runs(tmp_path, ["gpt-mini-2026-01-01", "gpt-mini-2026-01-01", "gpt-mini-2026-06-01"])
    runs = {run.id: run for run in ResultStore(tmp_path / "s.duckdb").list_runs()}
    revisions = [runs[d["run"]["id"]].provenance.get("model_revision") for d in (first, again, moved)]
    assert revisions == [
        "gpt-mini (mutable alias); served=gpt-mini-2026-01-01",
        "gpt-mini (mutable alias); served=gpt-mini-2026-01-01",
        "gpt-mini (mutable alias); served=gpt-mini-2026-06-01",
    ]
    assert {d["run"]["model"] for d in (first, again, moved)} == {"openai:gpt-mini"}  # one series
    assert again["verdict"]["treatment_change"] is None
    change = moved["verdict"]["treatment_change"]
    assert "served=gpt-mini-2026-01-01 -> gpt-mini (mutable alias); served=gpt-mini-2026-06-01" in change


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_server_that_names_no_model_leaves_the_revision_as_declared(tmp_path: Path) -> None:
    (document,) = _openai_runs(tmp_path, [None])
    (run,) = ResultStore(tmp_path / "s.duckdb").list_runs()
    assert run.id == document["run"]["id"]
    assert run.provenance.get("model_revision") == "gpt-mini (mutable alias)"


def test_the_served_names_are_recorded_once_each_and_a_declared_revision_is_kept() -> None:
    model = OpenAIChatModel("http://127.0.0.1:9/v1", "gpt-mini")
    for snapshot in ("a", "b", "a"):
        raw = json.dumps({"model": snapshot, "choices": [{"message": {"content": "x"}}]}).encode()
        assert model._content(raw)[2] == snapshot
        model._served[snapshot] = None
    assert model.served_models() == ("a", "b")
    alias = Provenance(model_revision="gpt-mini (mutable alias)", pipeline_identity="p", chunking_identity="c")
    assert served_provenance(alias, model).model_revision == "gpt-mini (mutable alias); served=a,b"
    pinned = alias.model_copy(update={"model_revision": "gpt-mini@2026-01-01"})
    assert served_provenance(pinned, model) == pinned  # the operator's declaration, cacheable: kept


PLUGIN = textwrap.dedent(
    """
    class Served:
        def __init__(self, served):
            self.served_model = served

        def complete(self, request):
            return "7.80"


    def build(context):
        return Served(context.options["serves"])
    """
)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_plugin_that_declares_what_it_serves_makes_two_series(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "served_plugin.py").write_text(PLUGIN, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    series = []
    for served in ("small-v1", "large-v2"):
        result = _prompts(tmp_path, "--model", "served_plugin:build", "--model-option", f"serves={served}")
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        series.append(document["run"]["model"])
        assert document["verdict"]["state"] != "comparable" or document["verdict"]["previous_run_id"] is None
    assert series == ["served_plugin:build:small-v1", "served_plugin:build:large-v2"]
    named = _prompts(tmp_path, "--model", "served_plugin:build", "--model-option", "serves=x", "--name", "mine")
    assert json.loads(named.stdout)["run"]["model"] == "mine"  # an explicit name is kept
