"""Finding retriever factories: entry points first, then import paths, with clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever, known_retrievers, load_factory
from goldeneval.retrieval.retrievers.base import document_id_mapper


def test_the_builtin_lexical_retriever_is_registered() -> None:
    assert "goldeneval.lexical" in known_retrievers()


def test_an_import_path_names_a_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "myretrievers.py").write_text(
        "class Echo:\n    def retrieve(self, question, limit):\n        return [question]\n\n"
        "def build(context):\n    return Echo()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    retriever = build_retriever("myretrievers:build", RetrieverContext(corpus=None, cache_dir=tmp_path))
    assert retriever.retrieve("doc-1", 3) == ["doc-1"]


@pytest.mark.parametrize(
    ("retriever_id", "message"),
    [
        ("nonexistent_module_xyz:build", "cannot import 'nonexistent_module_xyz'"),
        (
            "goldeneval.retrieval.scoring:no_such_factory",
            "module 'goldeneval.retrieval.scoring' has no callable 'no_such_factory'",
        ),
        ("plainname", "unknown retriever 'plainname': not a registered id"),
    ],
)
def test_a_bad_retriever_reference_is_a_clear_error(retriever_id: str, message: str) -> None:
    with pytest.raises(RetrieverError, match=message):
        load_factory(retriever_id)


def test_a_factory_returning_no_retriever_is_refused(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match="returned str, which has no retrieve"):
        build_retriever("builtins:str", RetrieverContext(corpus=None, cache_dir=tmp_path))


def test_chunk_ids_map_to_documents_by_the_prefix_before_the_separator() -> None:
    assert document_id_mapper("#")("doc-17#3") == "doc-17"
    assert document_id_mapper("::")("a/b::0") == "a/b"
    assert document_id_mapper(None)("doc-17#3") == "doc-17#3"
