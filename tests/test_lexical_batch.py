"""``goldeneval.lexical`` analyses every question of a batch in one bm25s tokeniser call: the
terms, and so the rankings, must be exactly those of asking bm25s question by question."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from goldeneval.core.corpus import Corpus, Document, load_corpus
from goldeneval.core.text import bm25_tokenize
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever

CORPUS = Corpus(
    (
        Document("fares/day", "Day ticket", "A day ticket costs 7.80 and is valid until 4 am."),
        Document("rights/delay", "Delay compensation", "Delays of over 30 minutes are refunded."),
        Document("service/bikes", "Bikes on board", "Bicycles travel free outside rush hour."),
        Document("café", "Café à la gare", "Crêpes et café, ouvert dès 6 h."),
    )
)
QUESTIONS = [
    "delayed trains refunding",
    "what is the",  # stop words only: no term
    "",
    "kayak on the cable car",  # no term the index knows
    "Bicycles, bikes and BIKES!",
    "café crêpes",
    "day ticket delays bicycles",
]


def one_by_one(retriever: LexicalRetriever, question: str, limit: int) -> list[str]:
    """What bm25s returns for ``question`` asked alone: tokenised alone, terms the index
    lacks dropped, documents with a score of 0 left out."""
    model = retriever._model
    terms = [t for t in bm25_tokenize(question, return_ids=False)[0] if t in model.vocab_dict]
    if not terms or limit <= 0:
        return []
    docs, scores = model.retrieve([terms], k=min(limit, len(retriever._ids)), show_progress=False, n_threads=1)
    return [retriever._ids[int(d)] for d in np.asarray(docs[0])[np.asarray(scores[0]) > 0]]


def test_a_batch_ranks_as_each_question_alone(tmp_path: Path) -> None:
    retriever = LexicalRetriever(CORPUS, tmp_path)
    assert retriever.retrieve_batch(QUESTIONS, 3) == [one_by_one(retriever, q, 3) for q in QUESTIONS]


def test_a_question_ranks_the_same_alone_and_in_any_batch(tmp_path: Path) -> None:
    retriever = LexicalRetriever(CORPUS, tmp_path)
    alone = [retriever.retrieve(q, 4) for q in QUESTIONS]
    assert retriever.retrieve_batch(QUESTIONS[::-1], 4) == alone[::-1]
    assert retriever.retrieve_batch(QUESTIONS + QUESTIONS, 4) == alone + alone


def test_an_empty_batch_and_a_zero_limit_ask_nothing(tmp_path: Path) -> None:
    retriever = LexicalRetriever(CORPUS, tmp_path)
    assert retriever.retrieve_batch([], 3) == []
    assert retriever.retrieve_batch(QUESTIONS, 0) == [[] for _ in QUESTIONS]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.scifact
def test_scifact_batch_rankings_are_bm25s_question_by_question(scifact_dir: Path, tmp_path: Path) -> None:
    corpus = load_corpus(scifact_dir)
    questions = [q.text for q in load_beir_set(scifact_dir, "test", corpus).questions]
    retriever = LexicalRetriever(corpus, tmp_path)
    assert retriever.retrieve_batch(questions, 100) == [one_by_one(retriever, q, 100) for q in questions]


@pytest.mark.scifact
def test_scifact_batch_terms_are_each_question_tokenised_alone(scifact_dir: Path) -> None:
    questions = [q.text for q in load_beir_set(scifact_dir, "test").questions]
    assert bm25_tokenize(questions, return_ids=False) == [bm25_tokenize(q, return_ids=False)[0] for q in questions]
