"""The retriever guide stays true: every registered retriever, each of its options and the
TREC export commands are documented in docs/guide/retrievers.md (the README's retriever
section before the manual moved under docs/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeneval.retrieval.retrievers import known_retrievers
from goldeneval.retrieval.retrievers.command import COMMAND_OPTIONS
from goldeneval.retrieval.retrievers.dense import DENSE_OPTIONS
from goldeneval.retrieval.retrievers.http import HTTP_OPTIONS
from goldeneval.retrieval.retrievers.hybrid import HYBRID_OPTIONS
from goldeneval.retrieval.retrievers.langchain import LANGCHAIN_OPTIONS
from goldeneval.retrieval.retrievers.llamaindex import LLAMAINDEX_OPTIONS
from goldeneval.retrieval.retrievers.qdrant import QDRANT_OPTIONS
from goldeneval.retrieval.retrievers.reranked import RERANKED_OPTIONS

GUIDE_PATH = Path(__file__).resolve().parents[1] / "docs" / "guide" / "retrievers.md"
GUIDE = GUIDE_PATH.read_text(encoding="utf-8")
OPTIONS = {
    "goldeneval.lexical": ("k1", "b"),
    "goldeneval.dense": DENSE_OPTIONS,
    "goldeneval.hybrid": HYBRID_OPTIONS,
    "goldeneval.reranked": RERANKED_OPTIONS,
    "goldeneval.trec_run": ("run",),
    "goldeneval.http": HTTP_OPTIONS,
    "goldeneval.command": COMMAND_OPTIONS,
    "goldeneval.qdrant": QDRANT_OPTIONS,
    "goldeneval.langchain": LANGCHAIN_OPTIONS,
    "goldeneval.llamaindex": LLAMAINDEX_OPTIONS,
}


def guide_row(retriever_id: str) -> str:
    rows = [line for line in GUIDE.splitlines() if line.startswith(f"| `{retriever_id}` |")]
    if len(rows) != 1:
        pytest.fail(
            f"docs/guide/retrievers.md: expected one row for {retriever_id} in the retriever table, found {len(rows)}"
        )
    return rows[0]


@pytest.mark.parametrize("retriever_id", sorted(OPTIONS))
def test_every_option_of_a_retriever_is_in_its_guide_row(retriever_id: str) -> None:
    row = guide_row(retriever_id)
    assert [option for option in OPTIONS[retriever_id] if f"`{option}`" not in row] == []


def test_every_registered_goldeneval_retriever_has_a_guide_row() -> None:
    registered = [r for r in known_retrievers() if r.startswith("goldeneval.")]
    assert sorted(registered) == sorted(OPTIONS)
    for retriever_id in registered:
        guide_row(retriever_id)


@pytest.mark.parametrize("command", ["goldeneval export-run RUN_ID --trec OUT", "goldeneval export-qrels --set"])
def test_the_trec_export_commands_are_in_the_retriever_guide(command: str) -> None:
    assert command in GUIDE
