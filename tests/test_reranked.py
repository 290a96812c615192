"""``goldeneval.reranked``: dense re-scoring of lexical candidates, and a CrossEncoder built
locally from a config (random weights, no download)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.dense import DenseRetriever, load_sentence_transformer, model_revision
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever
from goldeneval.retrieval.retrievers.reranked import (
    CrossEncoderScorer,
    DenseScorer,
    RerankedRetriever,
    load_cross_encoder,
)
from tests.tiny_models import tiny_cross_encoder

pytestmark = pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it

QUESTION = "Is it dangerous to drink sea water?"
CORPUS = Corpus(
    (
        Document("bar/menu", "Drink menu", "Sea breeze, water, and dangerous chili shots: drink at the bar."),
        Document("health/saltwater", "Saltwater", "Drinking ocean saltwater dehydrates the body and can be lethal."),
        Document("travel/ferry", "Ferry", "The ferry crosses the sea twice a day."),
        Document("city/parks", "Parks", "The city parks open at dawn."),
    )
)


@pytest.fixture(scope="module")
def cross_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_cross_encoder(tmp_path_factory.mktemp("tiny-cross-encoder"), seed=0)


def test_dense_rescoring_lifts_the_semantically_right_lexical_candidate(tmp_path: Path) -> None:
    lexical = LexicalRetriever(CORPUS, tmp_path)
    reranked = RerankedRetriever(lexical, DenseScorer(DenseRetriever(CORPUS, tmp_path, progress=False)))
    assert lexical.retrieve(QUESTION, 1) == ["bar/menu"]
    assert reranked.retrieve(QUESTION, 1) == ["health/saltwater"]


def test_reranking_only_reorders_the_first_stage_candidates(tmp_path: Path) -> None:
    lexical = LexicalRetriever(CORPUS, tmp_path)
    reranked = RerankedRetriever(lexical, DenseScorer(DenseRetriever(CORPUS, tmp_path, progress=False)))
    assert "city/parks" not in lexical.retrieve(QUESTION, 10)
    assert sorted(reranked.retrieve(QUESTION, 10)) == sorted(lexical.retrieve(QUESTION, 10))


def test_documents_below_the_candidate_cut_keep_their_first_stage_order(tmp_path: Path) -> None:
    lexical = LexicalRetriever(CORPUS, tmp_path)
    reranked = RerankedRetriever(lexical, DenseScorer(DenseRetriever(CORPUS, tmp_path, progress=False)), candidates=1)
    assert reranked.retrieve(QUESTION, 10) == lexical.retrieve(QUESTION, 10)


def test_the_cross_encoder_orders_candidates_by_its_own_pair_scores(tmp_path: Path, cross_encoder: Path) -> None:
    lexical = LexicalRetriever(CORPUS, tmp_path)
    reranked = RerankedRetriever(lexical, CrossEncoderScorer(cross_encoder, CORPUS))
    candidates = list(lexical.retrieve(QUESTION, 10))
    by_id = {doc.id: doc for doc in CORPUS}
    scores = load_cross_encoder(cross_encoder).predict(
        [(QUESTION, f"{by_id[d].title}\n{by_id[d].text}") for d in candidates], show_progress_bar=False
    )
    expected = [candidates[i] for i in np.argsort(-np.asarray(scores), kind="stable")]
    assert reranked.retrieve(QUESTION, 10) == expected
    assert expected != candidates  # the model re-orders: a reranker that did nothing would fail
    assert len(set(np.asarray(scores).tolist())) == len(candidates)


def test_the_cross_encoder_option_builds_a_cross_encoder_reranker(tmp_path: Path, cross_encoder: Path) -> None:
    context = RetrieverContext(CORPUS, tmp_path, {"cross_encoder": str(cross_encoder), "candidates": "3"})
    retriever = build_retriever("goldeneval.reranked", context)
    assert isinstance(retriever, RerankedRetriever) and isinstance(retriever.scorer, CrossEncoderScorer)
    assert retriever.provenance().model_revision == model_revision(cross_encoder)
    assert retriever.candidates == 3


def test_a_cross_encoder_folder_that_is_not_a_model_is_a_clear_error(tmp_path: Path) -> None:
    folder = tmp_path / "broken"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"not weights")
    (folder / "config.json").write_text("{}")
    with pytest.raises(RetrieverError, match=r"cross-encoder .*broken: cannot be loaded"):
        CrossEncoderScorer(folder, CORPUS)


def test_the_model_option_does_not_apply_to_a_cross_encoder(tmp_path: Path, cross_encoder: Path) -> None:
    context = RetrieverContext(CORPUS, tmp_path, {"cross_encoder": str(cross_encoder), "model": str(tmp_path)})
    with pytest.raises(RetrieverError, match="with cross_encoder=PATH drop it"):
        build_retriever("goldeneval.reranked", context)


def test_the_sentence_transformer_loader_refuses_a_non_model_folder(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(RetrieverError, match="cannot be loaded as a sentence-transformers model"):
        load_sentence_transformer(tmp_path)
