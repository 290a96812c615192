"""``goldeneval.hybrid``: what fusing lexical and dense rankings returns, its options, and a
whole CLI run that stores the declared provenance."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.dense import DenseRetriever
from goldeneval.retrieval.retrievers.fusion import reciprocal_rank_fusion
from goldeneval.retrieval.retrievers.hybrid import HybridRetriever
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever
from goldeneval.store import ResultStore
from tests.tiny_models import tiny_sentence_transformer

CORPUS = Corpus(
    (
        Document("pets/felines", "Felines", "Domestic felines purr when content and enjoy being petted."),
        Document("shop/litter", "Litter", "Cat litter prices: the cheapest cat litter in town."),
        Document("weather/storms", "Storms", "Heavy rainfall flooded several villages along the valley."),
    )
)
QUESTION = "Why do cats hum when stroked?"


@pytest.fixture(scope="module")
def hybrid(tmp_path_factory: pytest.TempPathFactory) -> HybridRetriever:
    cache = tmp_path_factory.mktemp("cache")
    return HybridRetriever(LexicalRetriever(CORPUS, cache), DenseRetriever(CORPUS, cache, progress=False))


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_hybrid_returns_every_document_either_retriever_ranks(hybrid: HybridRetriever) -> None:
    lexical, dense = hybrid.rankings(QUESTION, 100)
    assert (lexical[0], dense[0]) == ("shop/litter", "pets/felines")  # they disagree
    assert "weather/storms" not in lexical
    assert sorted(hybrid.retrieve(QUESTION, 30)) == sorted(set(lexical) | set(dense))


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_hybrid_returns_the_reciprocal_rank_fusion_of_both_rankings(hybrid: HybridRetriever) -> None:
    fused = reciprocal_rank_fusion(hybrid.rankings(QUESTION, 100), k=60)
    assert list(hybrid.retrieve(QUESTION, 30)) == [doc for doc, _ in fused]


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_a_heavier_dense_weight_puts_the_dense_favourite_first(tmp_path: Path) -> None:
    lexical, dense = LexicalRetriever(CORPUS, tmp_path), DenseRetriever(CORPUS, tmp_path, progress=False)
    assert HybridRetriever(lexical, dense, dense_weight=2.0).retrieve(QUESTION, 1) == ["pets/felines"]
    assert HybridRetriever(lexical, dense, lexical_weight=2.0).retrieve(QUESTION, 1) == ["shop/litter"]


def test_zero_weights_for_both_retrievers_are_an_error(tmp_path: Path) -> None:
    context = RetrieverContext(CORPUS, tmp_path, {"lexical_weight": "0", "dense_weight": "0"})
    with pytest.raises(RetrieverError, match="at least one of lexical_weight and dense_weight must be above 0"):
        build_retriever("goldeneval.hybrid", context)


def test_a_negative_weight_is_an_error(tmp_path: Path) -> None:
    context = RetrieverContext(CORPUS, tmp_path, {"dense_weight": "-1"})
    with pytest.raises(
        RetrieverError,
        match=re.escape("retriever 'goldeneval.hybrid': option 'dense_weight': must be a finite number >= 0, got -1"),
    ):
        build_retriever("goldeneval.hybrid", context)


@pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it
def test_a_cli_run_of_hybrid_stores_its_declared_provenance(tmp_path: Path) -> None:
    model = tiny_sentence_transformer(tmp_path / "model", seed=0)
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "day.md").write_text("# day ticket\nthe day ticket is for the bus and tram\n")
    (corpus / "delay.md").write_text("# delay\na delay of the train gives a refund\n")
    questions = [{"id": "q1", "text": "bus ticket", "form": "MATCH", "expected": ["day"]}]
    (tmp_path / "set.yaml").write_text(yaml.safe_dump({"id": "tiny", "corpus": "corpus", "questions": questions}))
    store = tmp_path / "results.duckdb"
    result = CliRunner().invoke(
        main,
        ["retrieval", "--set", str(tmp_path / "set.yaml"), "--retriever", "goldeneval.hybrid",
         "--option", f"model={model}", "--option", "rrf_k=10", "--store", str(store),
         "--cache-dir", str(tmp_path / "cache"), "--format", "json", "--no-progress"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    printed = json.loads(result.output)["run"]["provenance"]
    [stored] = ResultStore(store).list_runs()
    assert stored.provenance == printed
    assert printed["pipeline_identity"].startswith("goldeneval.hybrid/rrf(k=10,weights=1:1,depth=100)[")
    assert printed["chunking_identity"] == "whole" and printed["model_revision"].startswith("sha256:")
