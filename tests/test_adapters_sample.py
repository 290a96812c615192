"""Issue 22's done-when for the adapters: a Qdrant collection (embedded local mode), a LangChain
retriever and a LlamaIndex retriever, each holding exactly the embeddings ``goldeneval.dense``
computes for the bundled transit sample (tests/adapter_factories.py), are measured through the
CLI as a user runs them and give dense's top-1 and top-3 hit rates.

Dense's default chunking is ``whole`` (one chunk per document), and each store indexes those
same chunk texts, so the comparison needs no chunking option.  Questions are embedded by
dense's own code in every case; the stores compute cosine similarity their own way (Qdrant's
local mode, LangChain's and LlamaIndex's numpy), which may differ from dense in the last bits,
so the rates, not the order of near-ties deep in a ranking, are what must agree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from tests.adapter_factories import fill_qdrant

pytestmark = pytest.mark.slow  # loads the MiniLM model, encodes the sample


def run(tmp_path: Path, retriever: str, *options: str) -> dict[str, Any]:
    args = ["retrieval", "--set", "transit-sample", "--retriever", retriever, "--format", "json", "--no-progress"]
    args += ["--store", str(tmp_path / "results.duckdb"), "--cache-dir", str(tmp_path / "cache")]
    for option in options:
        args += ["--option", option]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.OK, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["run"]["errors"] == 0
    return document


def rates(document: dict[str, Any]) -> dict[str, Any]:
    aggregates = document["aggregates"]
    return {
        "overall": (aggregates["overall"]["top1_rate"], aggregates["overall"]["top3_rate"]),
        "by_form": {form: (a["top1_rate"], a["top3_rate"]) for form, a in aggregates["by_form"].items()},
        "hit@1": aggregates["metrics"]["hit@1"],
        "hit@3": aggregates["metrics"]["hit@3"],
        # the fewest documents a question's ranking held: every document for dense, so equal
        # only when the limit reached the store (LangChain k=4, LlamaIndex similarity_top_k=2)
        "shortest": document["measurement"]["short_rankings"]["shortest"],
    }


@pytest.fixture(scope="module")
def dense_rates(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    document = run(tmp_path_factory.mktemp("dense"), "goldeneval.dense")
    assert document["run"]["top1_rate"] > 0.3  # a real measurement, not an empty one
    assert document["measurement"]["short_rankings"]["shortest"] == 72  # the whole corpus
    return rates(document)


def test_a_qdrant_collection_of_dense_embeddings_gives_dense_hit_rates(
    tmp_path: Path, dense_rates: dict[str, Any]
) -> None:
    fill_qdrant(tmp_path / "qdrant")
    document = run(
        tmp_path, "goldeneval.qdrant", f"path={tmp_path / 'qdrant'}", "collection=transit", "id_field=doc_id"
    )
    assert rates(document) == dense_rates
    provenance = document["run"]["provenance"]
    assert provenance["pipeline_identity"] == "goldeneval.qdrant/local collection=transit"
    assert provenance["model_revision"].startswith("sha256:")
    assert "corpus_revision" not in provenance or provenance["corpus_revision"] is None


def test_a_langchain_vector_store_retriever_gives_dense_hit_rates(tmp_path: Path, dense_rates: dict[str, Any]) -> None:
    document = run(tmp_path, "goldeneval.langchain", "factory=tests.adapter_factories:make_langchain_retriever")
    assert rates(document) == dense_rates
    assert document["run"]["provenance"]["pipeline_identity"] == (
        "goldeneval.langchain/tests.adapter_factories:make_langchain_retriever -> "
        "langchain_core.vectorstores.base.VectorStoreRetriever"
    )


def test_a_llamaindex_vector_index_retriever_gives_dense_hit_rates(tmp_path: Path, dense_rates: dict[str, Any]) -> None:
    document = run(
        tmp_path,
        "goldeneval.llamaindex",
        "factory=tests.adapter_factories:make_llamaindex_retriever",
        "id_field=doc_id",
    )
    assert rates(document) == dense_rates
