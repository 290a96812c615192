"""``goldeneval.qdrant``: measure a Qdrant collection through ``qdrant-client``.

Where the collection is, exactly one of:

* ``url=http://host:6333`` — a Qdrant server (REST); ``api_key_env=NAME`` names the environment
  variable holding its API key (the key itself is never an option, never stored or printed);
* ``path=FOLDER`` — Qdrant's embedded local mode (``QdrantClient(path=...)``), the same client
  API a server answers, over a folder on disk (one process at a time may open it);
* ``location=:memory:`` — an empty in-process instance (for tests of the retriever itself).

``collection`` names the collection (required).  Each question is embedded, like
``goldeneval.dense`` embeds it — the same model (the bundled all-MiniLM-L6-v2, or option
``model=PATH``), the same L2 normalisation, the same batches when the evaluator asks many
questions at once (``retrieve_batch``) — and sent as one nearest-neighbour query of
``limit`` points (``query_points``; ``query_batch_points`` for a batch).  A collection indexed
with that model's embeddings therefore ranks as ``goldeneval.dense`` over the same texts.
``vector=NAME`` picks a named vector of the collection; ``exact=true`` asks the server for an
exact search instead of its approximate (HNSW) index (local mode is always exact).

The document id of each point is its payload field ``id_field``, or, without that option, the
point id as text (Qdrant point ids are integers or UUIDs, so most collections keep the
document id in the payload).  Before the first question the collection is checked: it must
exist (else one line listing the collections there), its vectors must have the model's
dimension, and its first point must have the payload field ``id_field``.  A point without it
is that question's error naming the point and the fields it has.

Provenance: the pipeline identity is the server URL without credentials (or ``local`` /
``:memory:``) and the collection, vector and search mode; the model revision is that of the
embedding model (as ``goldeneval.dense`` computes it); the corpus revision is declared by
option ``corpus_revision``, else unknown; the chunking identity is unknown (it is decided
where the collection was filled).  ``qdrant-client`` comes with the ``qdrant`` extra, the
model with the ``dense`` extra; both are imported only when the retriever is built.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from goldeneval.core.errors import RetrieverError, one_line
from goldeneval.core.provenance import Provenance
from goldeneval.retrieval.retrievers.adapters import document_id, missing_id, require_extra
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision, option_label
from goldeneval.retrieval.retrievers.dense import (
    DEFAULT_BATCH_SIZE,
    _encode_in_batches,
    default_model_path,
    load_sentence_transformer,
    model_revision,
    require_dense_extra,
)
from goldeneval.retrieval.retrievers.embedding_cache import Matrix
from goldeneval.retrieval.retrievers.external import (
    SearchError,
    bounded_identity,
    declared_revision,
    refuse_secret,
)
from goldeneval.retrieval.retrievers.http import split_server_url
from goldeneval.retrieval.retrievers.options import check_known_options, path_option, str_option

if TYPE_CHECKING:
    from qdrant_client import QdrantClient
    from sentence_transformers import SentenceTransformer

__all__ = ["QDRANT_OPTIONS", "QdrantRetriever", "build"]

RETRIEVER_ID = "goldeneval.qdrant"
QDRANT_OPTIONS = (
    "url",
    "path",
    "location",
    "collection",
    "id_field",
    "vector",
    "exact",
    "api_key_env",
    "model",
    "corpus_revision",
)
MEMORY = ":memory:"
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Connection:
    """An open client and what the retriever needs to know of it."""

    client: QdrantClient
    where: str
    """The server URL without credentials, ``local`` or ``:memory:``."""
    local: bool = False
    """Embedded local mode or ``:memory:``: the points live in this process."""
    secret: str | None = None
    """The API key, scrubbed from every message."""


class QdrantRetriever:
    """One Qdrant collection, queried with the dense model's embedding of each question."""

    def __init__(
        self,
        connection: Connection,
        collection: str,
        model: SentenceTransformer,
        *,
        model_revision: str,
        id_field: str | None = None,
        vector: str | None = None,
        exact: bool = False,
        corpus_revision: str | None = None,
    ) -> None:
        from qdrant_client import models

        local = connection.local
        self.client = connection.client
        self.collection = collection
        self.model = model
        self.model_revision = model_revision
        self.where = connection.where
        """The server URL without credentials, ``local`` or ``:memory:``."""
        self.id_field = id_field
        self.vector = vector
        self.exact = exact
        self.corpus_revision = corpus_revision
        self._secret = connection.secret
        self._params = models.SearchParams(exact=True) if exact and not local else None
        """Local mode always searches exactly (and warns when asked to)."""
        self._models = models
        self._lock = threading.Lock() if local else None
        """Local mode keeps its points in this process: its calls are made one at a time."""

    # -- the contract

    def retrieve(self, question: str, limit: int) -> list[str]:
        if limit <= 0:
            return []
        return self._ranked(self._encode([question])[0], limit)

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> list[list[str]]:
        """One ranking per question: the questions embedded together, as ``goldeneval.dense``
        embeds a batch, then one ``query_batch_points`` call."""
        if limit <= 0 or not questions:
            return [[] for _ in questions]
        models = self._models
        vectors = self._encode(list(questions))
        requests = [
            models.QueryRequest(
                query=[float(x) for x in vector],
                using=self.vector,
                limit=limit,
                params=self._params,
                with_payload=self._payload_selector(),
            )
            for vector in vectors
        ]
        responses = self._call(lambda: self.client.query_batch_points(self.collection, requests=requests))
        return [self._ids(response.points) for response in responses]

    def provenance(self) -> Provenance:
        return Provenance(
            corpus_revision=self.corpus_revision,
            model_revision=self.model_revision,
            pipeline_identity=self.pipeline_identity(),
            execution_revision=execution_revision("qdrant-client", "sentence-transformers", "transformers", "torch"),
        )

    def pipeline_identity(self) -> str:
        vector = f" vector={self.vector}" if self.vector else ""
        search = " exact" if self.exact else ""
        return bounded_identity(f"{RETRIEVER_ID}/{self.where} collection={self.collection}{vector}{search}")

    def close(self) -> None:
        """Release the client (in local mode: the folder's lock)."""
        self.client.close()

    # -- one question

    def _encode(self, questions: list[str]) -> Matrix:
        return _encode_in_batches(self.model, questions, DEFAULT_BATCH_SIZE, progress=False)

    def _payload_selector(self) -> bool | list[str]:
        return [self.id_field] if self.id_field else False

    def _ranked(self, vector: Matrix, limit: int) -> list[str]:
        query = [float(x) for x in np.asarray(vector, dtype=np.float32)]
        response = self._call(
            lambda: self.client.query_points(
                self.collection,
                query=query,
                using=self.vector,
                limit=limit,
                search_params=self._params,
                with_payload=self._payload_selector(),
            )
        )
        return self._ids(response.points)

    def _call(self, call: Any) -> Any:
        try:
            if self._lock is None:
                return call()
            with self._lock:
                return call()
        except SearchError:
            raise
        except Exception as exc:  # the client's transport or the server's answer: this question's error
            raise SearchError(
                self._scrubbed(f"Qdrant query failed: {type(exc).__name__}: {one_line(str(exc))}")
            ) from None

    def _ids(self, points: Sequence[Any]) -> list[str]:
        if self.id_field is None:
            return [str(point.id) for point in points]
        ids = []
        for position, point in enumerate(points):
            hit = f"hit {position} (point {point.id})"
            found = document_id(point.payload, self.id_field, hit)
            if found is None:
                raise missing_id(self._whole_payload(point), self.id_field, hit, "payload")
            ids.append(found)
        return ids

    def _whole_payload(self, point: Any) -> dict[str, Any] | None:
        """The point's whole payload (queries fetch only ``id_field``), for the error naming it."""
        try:
            (record,) = self._call(lambda: self.client.retrieve(self.collection, [point.id], with_payload=True))
        except (SearchError, ValueError):
            return None
        payload: dict[str, Any] | None = record.payload
        return payload

    def _scrubbed(self, message: str) -> str:
        return message.replace(self._secret, "***") if self._secret else message


# ---------------------------------------------------------------------------------- factory


def _server_url(raw: str) -> str:
    """The URL as given, checked: http(s), no credentials, no query or fragment."""
    label = option_label("url", RETRIEVER_ID)
    parts, _ = split_server_url(
        raw,
        label,
        "http://127.0.0.1:6333",
        "put the API key in an environment variable and pass --option api_key_env=NAME",
    )
    if parts.query or parts.fragment:
        raise RetrieverError(f"{label}: the server URL takes no query or #fragment, got {raw!r}")
    refuse_secret(raw, label, "pass the API key through --option api_key_env=NAME")
    return raw.strip().rstrip("/")


def _api_key(context: RetrieverContext) -> str | None:
    name = str_option(context, "api_key_env", retriever_id=RETRIEVER_ID)
    if name is None:
        return None
    label = option_label("api_key_env", RETRIEVER_ID)
    name = name.strip()
    if not _ENV_NAME.fullmatch(name):
        raise RetrieverError(
            f"{label}: expected the name of an environment variable (e.g. QDRANT_API_KEY), got a value"
        )
    if "url" not in context.options:
        raise RetrieverError(f"{label}: applies to url=... only (local mode has no API key)")
    value = os.environ.get(name)
    if not value:
        raise RetrieverError(f"{label}: environment variable {name} is not set (or is empty)")
    return value


def _exact(context: RetrieverContext) -> bool:
    raw = str_option(context, "exact", retriever_id=RETRIEVER_ID)
    if raw is None:
        return False
    value = raw.strip().lower()
    if value not in ("true", "false"):
        raise RetrieverError(f"{option_label('exact', RETRIEVER_ID)}: expected true or false, got {raw!r}")
    return value == "true"


def _connect(context: RetrieverContext, api_key: str | None) -> Connection:
    """The client, where it points (for the identity and messages) and whether it is local."""
    given = [name for name in ("url", "path", "location") if name in context.options]
    if len(given) != 1:
        found = f"got {', '.join(given)}" if given else "got none"
        raise RetrieverError(
            f"retriever {RETRIEVER_ID!r} needs exactly one of url=http://host:6333, path=FOLDER "
            f"(embedded local mode) or location=:memory: ({found})"
        )
    from qdrant_client import QdrantClient

    (name,) = given
    label = option_label(name, RETRIEVER_ID)
    try:
        if name == "url":
            url = _server_url(context.options["url"])
            # no version probe: it only warns (a second line on stderr when the server is down);
            # the collection check that follows reads the server anyway
            return Connection(QdrantClient(url=url, api_key=api_key, check_compatibility=False), url, secret=api_key)
        if name == "path":
            folder = path_option(context, "path", retriever_id=RETRIEVER_ID)
            assert folder is not None
            if not folder.is_dir():
                raise RetrieverError(f"{label}: {folder} is not a folder (a Qdrant local-mode storage folder)")
            return Connection(QdrantClient(path=str(folder)), "local", local=True)
        location = context.options["location"].strip()
        if location != MEMORY:
            raise RetrieverError(f"{label}: only {MEMORY} is a location; give a server as url=... instead")
        return Connection(QdrantClient(location=MEMORY), MEMORY, local=True)
    except RetrieverError:
        raise
    except Exception as exc:  # e.g. a local folder another process holds
        raise RetrieverError(f"{label}: cannot open Qdrant: {one_line(str(exc) or type(exc).__name__)}") from None


def _checked_collection(
    client: QdrantClient, collection: str, where: str, vector: str | None
) -> tuple[str | None, int | None]:
    """The vector to query (a collection's only named vector needs no option) and its size,
    once the collection is known to exist and to have that vector; else one line."""
    label = f"retriever {RETRIEVER_ID!r}: collection {collection!r} at {where}"
    if not client.collection_exists(collection):
        names = sorted(c.name for c in client.get_collections().collections)
        there = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "") if names else "none"
        raise RetrieverError(f"{label} does not exist (collections there: {there})")
    vectors = client.get_collection(collection).config.params.vectors
    params: Any
    if isinstance(vectors, dict):
        if vector is None and len(vectors) == 1:
            ((vector, params),) = vectors.items()
        elif vector is None:
            raise RetrieverError(
                f"{label} has named vectors ({', '.join(sorted(vectors))}): pick one with --option vector=NAME"
            )
        elif vector not in vectors:
            raise RetrieverError(f"{label} has no vector {vector!r} (it has: {', '.join(sorted(vectors)) or 'none'})")
        else:
            params = vectors[vector]
    elif vector is not None:
        raise RetrieverError(f"{label} has one unnamed vector: drop option vector")
    else:
        params = vectors
    size = getattr(params, "size", None)
    return vector, size if isinstance(size, int) else None


def _checked_id_field(client: QdrantClient, collection: str, where: str, id_field: str) -> None:
    points, _ = client.scroll(collection, limit=1, with_payload=True)
    if points and document_id(points[0].payload, id_field, "its first point") is None:
        error = missing_id(points[0].payload, id_field, f"point {points[0].id}", "payload")
        raise RetrieverError(f"retriever {RETRIEVER_ID!r}: collection {collection!r} at {where}: {error}")


def build(context: RetrieverContext) -> QdrantRetriever:
    """Entry-point factory for ``goldeneval.qdrant`` (module docstring): every option is checked,
    then the collection, before the model loads (a wrong name fails in a second, not after it)."""
    check_known_options(context, RETRIEVER_ID, QDRANT_OPTIONS)
    collection = str_option(context, "collection", retriever_id=RETRIEVER_ID)
    if collection is None:
        raise RetrieverError(f"retriever {RETRIEVER_ID!r} needs option collection=NAME")
    for name in ("collection", "id_field", "vector", "path", "location"):
        if name in context.options:
            refuse_secret(context.options[name], option_label(name, RETRIEVER_ID))
    id_field = (str_option(context, "id_field", retriever_id=RETRIEVER_ID) or "").strip() or None
    vector = (str_option(context, "vector", retriever_id=RETRIEVER_ID) or "").strip() or None
    collection = collection.strip()
    exact = _exact(context)
    model_path: Path | None = path_option(context, "model", retriever_id=RETRIEVER_ID)
    corpus_revision = declared_revision(context, "corpus_revision", RETRIEVER_ID)
    api_key = _api_key(context)
    require_extra(RETRIEVER_ID, "qdrant_client", "qdrant")
    connection = _connect(context, api_key)
    client, where = connection.client, connection.where
    try:
        vector, size = _checked_collection(client, collection, where, vector)
        if id_field is not None:
            _checked_id_field(client, collection, where, id_field)
        require_dense_extra(RETRIEVER_ID)
        folder = model_path or default_model_path()
        revision = model_revision(folder)
        model = load_sentence_transformer(folder)
        dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
        dims = dimension()
        if size is not None and dims and size != dims:
            raise RetrieverError(
                f"retriever {RETRIEVER_ID!r}: collection {collection!r} at {where} holds {size}-dimensional "
                f"vectors, the query model makes {dims}: index it with the same model, or pass that model "
                "as --option model=PATH"
            )
    except RetrieverError:
        client.close()
        raise
    except Exception as exc:  # the server is down, refuses the key, answers something else ...
        client.close()
        message = f"retriever {RETRIEVER_ID!r}: cannot read collection {collection!r} at {where}: "
        message += f"{type(exc).__name__}: {one_line(str(exc))}"
        raise RetrieverError(message.replace(api_key, "***") if api_key else message) from None
    return QdrantRetriever(
        connection,
        collection,
        model,
        model_revision=revision,
        id_field=id_field,
        vector=vector,
        exact=exact,
        corpus_revision=corpus_revision,
    )
