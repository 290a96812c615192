"""The built-in BM25 retriever: analyser, empty results and the on-disk index cache."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldeneval.corpus import Corpus, Document
from goldeneval.errors import RetrieverError
from goldeneval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrievers.lexical import LexicalRetriever

CORPUS = Corpus(
    (
        Document("fares/day", "Day ticket", "A day ticket costs 7.80 and is valid until 4 am."),
        Document("rights/delay", "Delay compensation", "Delays of over 30 minutes are refunded."),
        Document("service/bikes", "Bikes on board", "Bicycles travel free outside rush hour."),
    )
)


def test_stemming_matches_inflected_forms(tmp_path: Path) -> None:
    retriever = LexicalRetriever(CORPUS, tmp_path)
    assert retriever.retrieve("delayed trains refunding", 3)[0] == "rights/delay"


def test_a_question_sharing_no_term_gets_an_empty_ranking(tmp_path: Path) -> None:
    assert LexicalRetriever(CORPUS, tmp_path).retrieve("kayak on the cable car", 30) == []


def test_a_question_of_only_stop_words_gets_an_empty_ranking(tmp_path: Path) -> None:
    assert LexicalRetriever(CORPUS, tmp_path).retrieve("what is the", 30) == []


def test_the_limit_caps_the_ranking(tmp_path: Path) -> None:
    assert len(LexicalRetriever(CORPUS, tmp_path).retrieve("ticket delays bicycles", 2)) == 2


def test_the_index_is_built_once_per_corpus_revision(tmp_path: Path) -> None:
    first = LexicalRetriever(CORPUS, tmp_path)
    second = LexicalRetriever(CORPUS, tmp_path)
    changed = LexicalRetriever(Corpus((*CORPUS.documents, Document("x", "", "ferry"))), tmp_path)
    assert (first.index_loaded_from_cache, second.index_loaded_from_cache) == (False, True)
    assert not changed.index_loaded_from_cache
    assert second.retrieve("day ticket", 3) == first.retrieve("day ticket", 3)


def test_the_registered_factory_needs_a_corpus(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match="needs a corpus: pass --corpus PATH"):
        build_retriever("goldeneval.lexical", RetrieverContext(corpus=None, cache_dir=tmp_path))


def test_the_registered_factory_passes_bm25_options(tmp_path: Path) -> None:
    context = RetrieverContext(corpus=CORPUS, cache_dir=tmp_path, options={"k1": "0.9", "b": "0.4"})
    retriever = build_retriever("goldeneval.lexical", context)
    assert isinstance(retriever, LexicalRetriever) and (retriever.k1, retriever.b) == (0.9, 0.4)


def test_a_non_numeric_option_is_a_clear_error(tmp_path: Path) -> None:
    context = RetrieverContext(corpus=CORPUS, cache_dir=tmp_path, options={"k1": "high"})
    with pytest.raises(
        RetrieverError, match=re.escape("retriever 'goldeneval.lexical': option 'k1': expected a number, got 'high'")
    ):
        build_retriever("goldeneval.lexical", context)
