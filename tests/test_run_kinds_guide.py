"""The developer guide's worked example of a third kind (``docs/guide/dagster.md``, "A third
kind of run, declared once") is true: its two modules and its entry point, installed from the
page as a package's would be, are a declared kind whose suite section is read, whose command is
listed and whose stored details are read back by a fresh process; and they are the test's kind
(``tests/toy_kind.py``) renamed, every field of a declaration set and explained."""

from __future__ import annotations

import dataclasses
import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from goldeneval.kinds import KindDeclaration, KindNames
from tests.dagster_support import SETS, write_project
from tests.test_run_kinds_declared import ROOT, install
from tests.toy_kind import TOY_DECLARATION, TOY_RATE_NAMES, ToyDetails, ToyReranker, ToySection

GUIDE = ROOT / "docs" / "guide" / "dagster.md"
HEADING = "### A third kind of run, declared once"


def _section() -> str:
    text = GUIDE.read_text(encoding="utf-8")
    start = text.index(HEADING)
    return text[start : text.index("\n### ", start)]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _section(), flags=re.S)


def _package(root: Path) -> Path:
    """The page's Python blocks, each where its first line (``# my_rerank/...``) says."""
    (root / "my_rerank").mkdir(parents=True)
    (root / "my_rerank" / "__init__.py").write_text("")
    for block in _blocks("python"):
        path = block.splitlines()[0].removeprefix("# ")
        assert path.startswith("my_rerank/"), block[:80]
        (root / path).write_text(block, encoding="utf-8")
    return root


def _entries() -> list[str]:
    (toml,) = _blocks("toml")
    group = tomllib.loads(toml)["project"]["entry-points"]["goldeneval.kinds"]
    return [f"{name} = {target}" for name, target in group.items()]


def test_the_example_is_the_test_kind_renamed_with_every_field_explained(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg")
    sys.path.insert(0, str(package))
    try:
        from my_rerank import details, kind  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(package))
        for name in [name for name in sys.modules if name.split(".")[0] == "my_rerank"]:
            del sys.modules[name]

    declared: KindDeclaration = kind.DECLARATION
    assert _entries() == ["rerank = my_rerank.kind:DECLARATION"]
    toy = TOY_DECLARATION
    assert (declared.name, declared.dimensions, declared.rates) == ("rerank", toy.dimensions, toy.rates)
    assert len(declared.assets) == len(toy.assets)
    assert declared.names == KindNames.prefixed("rerank_", cli_sensor="rerank_cli_run_series_sensor")
    assert (declared.details, declared.dagster) == ("my_rerank.details:DETAILS", "my_rerank.dagster:DAGSTER")
    assert details.RATE_NAMES == TOY_RATE_NAMES
    assert list(details.RerankDetails.model_fields) == list(ToyDetails.model_fields)
    assert details.DETAILS.names == ("rerank",) and details.DETAILS.outcomes is None
    assert list(kind.RerankSection.model_fields) == list(ToySection.model_fields)
    assert kind.Reranker.model_json_schema()["properties"] == ToyReranker.model_json_schema()["properties"]

    block = _blocks("python")[1]
    table = _section()[_section().index("What each field does:") :]
    for field in dataclasses.fields(KindDeclaration):
        assert f"    {field.name}=" in block, f"the example sets no {field.name}"
        assert re.search(rf"^\| (`\w+`, )?`{field.name}`", table, flags=re.M), f"the table explains no {field.name}"


@pytest.mark.slow  # two Python processes: seconds; CI runs it
def test_the_example_installed_from_the_page_is_read_back_by_a_fresh_process(tmp_path: Path) -> None:
    package = _package(tmp_path / "pkg")
    site = install(tmp_path / "site", *_entries())
    project = write_project(tmp_path / "project", sets={"alpha-set": SETS["alpha-set"]})
    config = yaml.safe_load(project.config.read_text())
    config["rerank"] = {"sets": ["rerank-set"], "rerankers": {"a": {"firsts": "1101"}}}
    project.config.write_text(yaml.safe_dump(config))
    config["rerank"]["rerankers"]["a"]["firsts"] = "11x1"
    (bad := tmp_path / "bad.yaml").write_text(yaml.safe_dump(config))
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLDENEVAL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(package), str(project.root), str(ROOT)])

    script = """
import json, sys
from goldeneval.core.errors import GoldenEvalError
from goldeneval.core.kinds import read_details
from goldeneval.kinds import declared_kinds
from goldeneval.suite import load_suite
found = {}
read = read_details('{"kind": "rerank", "firsts": {"q0": true, "q1": false}}', "run r1")
found["read"] = [type(read).__name__, dict(read.rate_names), read.paired_outcomes("pass_rate").hits.tolist()]
try:
    read_details('{"kind": "rerank", "firsts": {"q0": "maybe"}}', "run r2")
except GoldenEvalError as exc:
    found["bad details"] = str(exc)
found["kinds"] = [kind.name for kind in declared_kinds()]
found["cells"] = [list(cells) for cells in declared_kinds()[-1].cells(load_suite(sys.argv[1]))]
try:
    load_suite(sys.argv[2])
except GoldenEvalError as exc:
    found["bad suite"] = str(exc)
found["modules"] = sorted(name for name in sys.modules if name.startswith("my_rerank"))
print(json.dumps(found))
"""
    ran = subprocess.run(
        [sys.executable, "-c", script, str(project.config), str(bad)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    found = json.loads(ran.stdout)
    assert found["read"] == ["RerankDetails", TOY_RATE_NAMES, [True, False]]
    assert (
        found["bad details"]
        == "run r2: details field 'firsts.q0': Input should be a valid boolean, unable to interpret input"
    )
    assert found["kinds"] == ["retrieval", "prompts", "rerank"]
    assert found["cells"] == [["rerank-set"], ["a"]]
    assert "field 'rerank.rerankers.a.firsts': String should match pattern" in found["bad suite"]
    assert found["modules"] == ["my_rerank", "my_rerank.details", "my_rerank.kind"]  # nothing of its domain

    listed = subprocess.run(
        [sys.executable, "-m", "goldeneval.cli", "--help"], env=env, capture_output=True, text=True, check=False
    )
    assert re.search(r"^  rerank +Record a reranker-only run, judge it and print", listed.stdout, flags=re.M), listed
