"""``goldeneval.qdrant`` against real Qdrant collections in qdrant-client's embedded local mode
(the client API a server answers): where the collection is, which field holds the document
id, and one line for each way a collection can be wrong.  The checks of the collection come
before the model loads, so most of these need no model; the rest use a tiny random model
(tests/tiny_models.py).  The bundled-sample comparison with goldeneval.dense is in
tests/test_adapters_sample.py."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest

from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.external import SearchError
from goldeneval.retrieval.retrievers.qdrant import QdrantRetriever
from tests.tiny_models import tiny_sentence_transformer

DOCS = ["fares/day-ticket", "fares/single-ticket", "service/bikes", "service/lost-property", "about/contact"]
TINY_DIMS = 16


def fill(folder: Path, collection: str = "docs", *, size: int = TINY_DIMS, named: bool = False) -> None:
    """A local-mode collection of ``DOCS`` (point ``i`` is ``DOCS[i]``), payload ``doc_id`` and ``title``."""
    rng = np.random.default_rng(3)
    from qdrant_client import QdrantClient, models  # 1 s: imported by the tests that run, not at collection

    client = QdrantClient(path=str(folder))
    try:
        params = models.VectorParams(size=size, distance=models.Distance.COSINE)
        config = {"text": params, "title": params} if named else params
        client.create_collection(collection, vectors_config=config)
        points = []
        for i, doc in enumerate(DOCS):
            vector = rng.standard_normal(size).tolist()
            payload = {"doc_id": doc, "title": doc.title()}
            points.append(
                models.PointStruct(id=i, vector={"text": vector, "title": vector} if named else vector, payload=payload)
            )
        client.upsert(collection, points=points)
    finally:
        client.close()


def build(tmp_path: Path, **options: str) -> QdrantRetriever:
    retriever = build_retriever("goldeneval.qdrant", RetrieverContext(corpus=None, cache_dir=tmp_path, options=options))
    assert isinstance(retriever, QdrantRetriever)
    return retriever


def refused(tmp_path: Path, **options: str) -> str:
    with pytest.raises(RetrieverError) as caught:
        build(tmp_path, **options)
    message = str(caught.value)
    assert message.startswith("retriever 'goldeneval.qdrant'") and "\n" not in message
    return message


@pytest.fixture
def store(tmp_path: Path) -> Path:
    fill(tmp_path / "qdrant")
    return tmp_path / "qdrant"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tiny_sentence_transformer(tmp_path_factory.mktemp("tiny"), seed=0)


@pytest.fixture
def closed_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield sock.getsockname()[1]  # bound, never listening: connections are refused


# ------------------------------------------------------------------ options, before anything opens


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"path": "x"}, r"needs option collection=NAME"),
        ({"collection": "docs"}, r"needs exactly one of url=http://host:6333, path=FOLDER .* \(got none\)"),
        ({"collection": "docs", "path": "x", "url": "http://h:6333"}, r"needs exactly one of .* \(got url, path\)"),
        ({"collection": "docs", "location": "somewhere"}, r"option 'location': only :memory: is a location"),
        ({"collection": "docs", "url": "http://me:pw@h:6333"}, r"option 'url': holds credentials; .* api_key_env=NAME"),
        ({"collection": "docs", "url": "ftp://h"}, r"option 'url': expected an http\(s\) URL"),
        ({"collection": "docs", "url": "http://h", "api_key_env": "NOT_SET_XYZ"}, r"variable NOT_SET_XYZ is not set"),
        ({"collection": "docs", "url": "http://h", "api_key_env": "a key!"}, r"expected the name of an environment"),
        (
            {"collection": "docs", "path": "x", "api_key_env": "KEY"},
            r"option 'api_key_env': applies to url=\.\.\. only",
        ),
        ({"collection": "docs", "path": "x", "exact": "maybe"}, r"option 'exact': expected true or false"),
        ({"collection": "docs", "path": "/no/such/folder"}, r"option 'path': /no/such/folder does not exist"),
        ({"collection": "docs", "path": "x", "limit": "5"}, r"unknown option\(s\) limit \(known: api_key_env"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, options: dict[str, str], message: str) -> None:
    found = refused(tmp_path, **options)
    assert re.search(message, found), found


# ------------------------------------------------------------------ the collection, before the model


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_missing_collection_names_those_there(tmp_path: Path, store: Path) -> None:
    assert refused(tmp_path, path=str(store), collection="transit") == (
        "retriever 'goldeneval.qdrant': collection 'transit' at local does not exist (collections there: docs)"
    )
    assert refused(tmp_path, location=":memory:", collection="docs").endswith(
        "collection 'docs' at :memory: does not exist (collections there: none)"
    )


def test_a_missing_payload_field_is_one_line_naming_the_point_and_its_fields(tmp_path: Path, store: Path) -> None:
    assert refused(tmp_path, path=str(store), collection="docs", id_field="document") == (
        "retriever 'goldeneval.qdrant': collection 'docs' at local: point 0 has no payload field 'document' "
        "(its payload has: doc_id, title); name the field that holds the document id with --option id_field=..."
    )


def test_named_vectors_need_a_choice_and_a_known_name(tmp_path: Path) -> None:
    fill(tmp_path / "named", named=True)
    assert refused(tmp_path, path=str(tmp_path / "named"), collection="docs").endswith(
        "has named vectors (text, title): pick one with --option vector=NAME"
    )
    assert refused(tmp_path, path=str(tmp_path / "named"), collection="docs", vector="body").endswith(
        "has no vector 'body' (it has: text, title)"
    )


def test_a_folder_another_client_holds_is_one_line(tmp_path: Path, store: Path) -> None:
    from qdrant_client import QdrantClient

    holder = QdrantClient(path=str(store))
    try:
        assert "cannot open Qdrant: " in refused(tmp_path, path=str(store), collection="docs")
    finally:
        holder.close()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_server_that_is_not_there_is_one_line_with_its_url(tmp_path: Path, closed_port: int) -> None:
    message = refused(tmp_path, url=f"http://127.0.0.1:{closed_port}", collection="docs")
    assert message.startswith(
        f"retriever 'goldeneval.qdrant': cannot read collection 'docs' at http://127.0.0.1:{closed_port}: "
    )


# ------------------------------------------------------------------ querying (a tiny model)


@pytest.mark.slow  # loads a (tiny) sentence-transformers model
def test_ids_come_from_the_payload_or_the_point_and_a_batch_ranks_as_single_questions(
    tmp_path: Path, store: Path, tiny: Path
) -> None:
    retriever = build(tmp_path, path=str(store), collection="docs", id_field="doc_id", model=str(tiny))
    questions = ["day ticket price", "lost my bike", "contact the office"]
    single = [retriever.retrieve(question, 3) for question in questions]
    assert retriever.retrieve_batch(questions, 3) == single
    assert all(len(ranking) == 3 and set(ranking) <= set(DOCS) for ranking in single)
    assert retriever.retrieve("anything", 0) == [] and retriever.retrieve_batch([], 3) == []
    retriever.close()
    by_point = build(tmp_path, path=str(store), collection="docs", model=str(tiny), exact="true")
    assert [DOCS[int(i)] for i in by_point.retrieve(questions[0], 3)] == single[0]
    provenance = by_point.provenance()
    assert provenance.pipeline_identity == "goldeneval.qdrant/local collection=docs exact"
    assert provenance.model_revision is not None and provenance.model_revision.startswith("sha256:")
    assert provenance.corpus_revision is None and provenance.chunking_identity is None
    by_point.close()


@pytest.mark.slow  # loads a (tiny) sentence-transformers model
def test_a_point_without_the_id_field_is_its_questions_error(tmp_path: Path, tiny: Path) -> None:
    fill(tmp_path / "partial")
    from qdrant_client import QdrantClient

    client = QdrantClient(path=str(tmp_path / "partial"))
    client.delete_payload("docs", keys=["doc_id"], points=[3])  # not the first point: the build check passes
    client.close()
    retriever = build(tmp_path, path=str(tmp_path / "partial"), collection="docs", id_field="doc_id", model=str(tiny))
    with pytest.raises(
        SearchError, match=r"^hit \d \(point 3\) has no payload field 'doc_id' \(its payload has: title\)"
    ):
        retriever.retrieve("anything at all", 5)
    retriever.close()


@pytest.mark.slow  # loads a (tiny) sentence-transformers model
def test_vectors_of_another_dimension_are_one_line(tmp_path: Path, tiny: Path) -> None:
    fill(tmp_path / "wide", size=384)
    assert refused(tmp_path, path=str(tmp_path / "wide"), collection="docs", model=str(tiny)).endswith(
        "collection 'docs' at local holds 384-dimensional vectors, the query model makes 16: index it with the "
        "same model, or pass that model as --option model=PATH"
    )


def test_corpus_revision_is_declared_and_checked(tmp_path: Path, store: Path) -> None:
    assert "option 'corpus_revision': cannot be the corpus_revision" in refused(
        tmp_path, path=str(store), collection="docs", corpus_revision="ghp_" + "a" * 36
    )


@pytest.mark.slow  # loads a (tiny) sentence-transformers model
def test_local_mode_answers_many_threads_as_it_answers_one(tmp_path: Path, store: Path, tiny: Path) -> None:
    retriever = build(tmp_path, path=str(store), collection="docs", id_field="doc_id", model=str(tiny))
    questions = [f"ticket {i} bike river bank" * (i % 3 + 1) for i in range(24)]
    alone = [retriever.retrieve(question, 4) for question in questions]
    with ThreadPoolExecutor(max_workers=6) as pool:
        together = list(pool.map(lambda question: retriever.retrieve(question, 4), questions))
        batches = list(pool.map(lambda i: retriever.retrieve_batch(questions[i : i + 6], 4), range(0, 24, 6)))
    assert together == alone
    assert [ranking for batch in batches for ranking in batch] == alone
    retriever.close()
