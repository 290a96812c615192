"""The Parquet embedding cache: what a cold, warm, changed-document, changed-model and
changed-chunking build encodes, with a tiny real model built from a config."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.retrieval.retrievers.chunking import TokenWindows
from goldeneval.retrieval.retrievers.dense import DenseRetriever
from goldeneval.retrieval.retrievers.embedding_cache import CacheCounters
from tests.tiny_models import tiny_sentence_transformer

pytestmark = pytest.mark.slow  # imports torch and sentence-transformers: seconds per process; CI runs it

CORPUS = Corpus(
    (
        Document("fares/day", "day ticket", "the day ticket is for the bus and tram"),
        Document("rights/delay", "delay", "a delay of the train gives a refund"),
        Document("service/bike", "bike", "a bike is free on the ferry at night"),
    )
)
CHANGED = Corpus((*CORPUS.documents[:2], Document("service/bike", "bike", "a bike and a dog travel on the ferry")))


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_sentence_transformer(tmp_path_factory.mktemp("tiny-encoder"), seed=0)


@pytest.fixture(scope="module")
def other_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_sentence_transformer(tmp_path_factory.mktemp("tiny-encoder-other"), seed=1)


def build(corpus: Corpus, cache: Path, model: Path, **kwargs: object) -> DenseRetriever:
    return DenseRetriever(corpus, cache, model_path=model, progress=False, **kwargs)  # type: ignore[arg-type]


def test_a_cold_build_encodes_every_chunk(tmp_path: Path, model: Path) -> None:
    assert build(CORPUS, tmp_path, model).counters == CacheCounters(encoded=3, cached=0)


def test_a_warm_rebuild_encodes_nothing(tmp_path: Path, model: Path) -> None:
    build(CORPUS, tmp_path, model)
    assert build(CORPUS, tmp_path, model).counters == CacheCounters(encoded=0, cached=3)


def test_a_warm_rebuild_returns_the_embeddings_it_stored(tmp_path: Path, model: Path) -> None:
    cold = build(CORPUS, tmp_path, model)
    warm = build(CORPUS, tmp_path, model)
    assert warm.retrieve("a bike on the ferry", 3) == cold.retrieve("a bike on the ferry", 3)
    np.testing.assert_array_equal(
        warm.cache.embed([c.text for c in warm.chunks], lambda texts: pytest.fail("encoded")),
        cold.cache.embed([c.text for c in cold.chunks], lambda texts: pytest.fail("encoded")),
    )


def test_a_changed_document_re_encodes_only_its_own_chunks(tmp_path: Path, model: Path) -> None:
    build(CORPUS, tmp_path, model)
    assert build(CHANGED, tmp_path, model).counters == CacheCounters(encoded=1, cached=2)


def test_a_changed_model_re_encodes_everything(tmp_path: Path, model: Path, other_model: Path) -> None:
    build(CORPUS, tmp_path, model)
    assert build(CORPUS, tmp_path, other_model).counters == CacheCounters(encoded=3, cached=0)


def test_a_changed_chunking_re_encodes_everything(tmp_path: Path, model: Path) -> None:
    build(CORPUS, tmp_path, model)
    windows = build(CORPUS, tmp_path, model, chunking=TokenWindows(size=5, overlap=1))
    assert windows.counters == CacheCounters(encoded=len(windows.chunks), cached=0)
    assert len(windows.chunks) > 3


def test_the_cache_is_plain_parquet_keyed_by_model_chunking_and_text_hash(tmp_path: Path, model: Path) -> None:
    retriever = build(CORPUS, tmp_path, model)
    relation = duckdb.sql(
        f"SELECT DISTINCT model_revision, chunking_identity, count(*) OVER () "
        f"FROM '{tmp_path / 'embeddings' / '*.parquet'}'"
    )
    assert relation is not None
    rows = relation.fetchall()
    assert rows == [(retriever.model_revision, "whole", 3)]


def test_a_write_leaves_no_temporary_file_behind(tmp_path: Path, model: Path) -> None:
    build(CORPUS, tmp_path, model)
    build(CHANGED, tmp_path, model)
    assert [
        p.name.endswith(".parquet") and not p.name.startswith(".") for p in (tmp_path / "embeddings").iterdir()
    ] == [True]


def test_an_unreadable_cache_file_is_rebuilt(tmp_path: Path, model: Path) -> None:
    retriever = build(CORPUS, tmp_path, model)
    assert retriever.cache.path is not None
    retriever.cache.path.write_bytes(b"not parquet")
    assert build(CORPUS, tmp_path, model).counters == CacheCounters(encoded=3, cached=0)
    assert build(CORPUS, tmp_path, model).counters == CacheCounters(encoded=0, cached=3)
