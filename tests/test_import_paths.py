"""A module named by an import path (``package.module:factory``) is found in the folder the
command runs from, as docs/guide/retrievers.md promises ("run from the folder holding the
module"), by the ``goldeneval`` console script as by ``python -m``: before, the console script
said ``cannot import 'myretrievers'`` unless ``PYTHONPATH`` was set."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from goldeneval.core.plugins import import_named_module

GOLDENEVAL = Path(sys.executable).parent / "goldeneval"

MY_RETRIEVERS = """\
from goldeneval import RetrieverContext
from {helpers} import first_ids  # a module beside it: found as python -m would find it


class MyRetriever:
    def retrieve(self, question: str, limit: int) -> list[str]:
        return first_ids()[:limit]


def build(context: RetrieverContext) -> MyRetriever:
    return MyRetriever()
"""


def _folder_with_a_team_module(root: Path, module: str = "myretrievers", helpers: str = "helpers") -> Path:
    (root / f"{module}.py").write_text(MY_RETRIEVERS.format(helpers=helpers))
    (root / f"{helpers}.py").write_text('def first_ids():\n    return ["fares/child-fares"]\n')
    # a file named like a package goldeneval needs never hides it: the folder comes after them
    # (scipy: imported only once runs are compared, after the plug-in's folder is searched)
    (root / "scipy.py").write_text('raise SystemExit("the folder\'s scipy.py was imported")\n')
    return root


@pytest.mark.slow  # a real goldeneval process
def test_the_console_script_imports_a_retriever_from_the_folder_it_runs_in(tmp_path: Path) -> None:
    folder = _folder_with_a_team_module(tmp_path)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    for answer in ("fares/child-fares", "fares/day-ticket"):  # the second run differs from the first
        # and is compared with it: scipy's exact McNemar test is imported then, after the plug-in
        (folder / "helpers.py").write_text(f"def first_ids():\n    return [{answer!r}]\n")
        result = subprocess.run(
            [str(GOLDENEVAL), "retrieval", "--set", "transit-sample", "--retriever", "myretrievers:build",
             "--store", str(folder / "s.duckdb"), "--provenance", "corpus_revision=site-1", "--format", "json",
             "--no-progress"],
            cwd=folder, env=env, capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    run = document["run"]
    assert (run["retriever_id"], run["status"], run["errors"]) == ("myretrievers:build", "complete", 0)
    assert any(paired["newly_passing"] for paired in document["verdict"]["paired"]), document["verdict"]
    assert "scipy.py was imported" not in result.stderr


def test_the_working_directory_is_searched_after_the_installed_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # names no other test uses, and forgotten afterwards: sys.modules outlives the test
    module_name, helpers_name = "cwd_team_retrievers", "cwd_team_helpers"
    folder = _folder_with_a_team_module(tmp_path, module_name, helpers_name)
    monkeypatch.chdir(folder)
    monkeypatch.setattr(sys, "path", [entry for entry in sys.path if entry not in ("", ".", str(folder))])
    try:
        module = import_named_module(module_name)
        assert module.build(None).retrieve("q", 5) == ["fares/child-fares"]
        assert sys.path[-1] == str(folder)  # last: an installed package of the same name wins
        assert import_named_module("scipy").__file__ != str(folder / "scipy.py")
        import_named_module(helpers_name)
        assert sys.path.count(str(folder)) == 1  # added once, not at every import
    finally:
        sys.modules.pop(module_name, None)
        sys.modules.pop(helpers_name, None)


def test_a_module_in_no_folder_searched_is_still_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from goldeneval.core.errors import RetrieverError
    from goldeneval.retrieval.retrievers.registry import RETRIEVERS

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    with pytest.raises(RetrieverError, match=r"^retriever 'nowhere_module:build': cannot import 'nowhere_module'"):
        RETRIEVERS.load_factory("nowhere_module:build")
