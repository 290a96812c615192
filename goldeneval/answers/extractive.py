"""``goldeneval.extractive``: the offline, retrieval-augmented baseline model.

It answers with the best passage of the best documents: given retrieved context (the
``answers`` flow) it reads those documents; otherwise it asks its own retriever (option
``retriever``, default ``goldeneval.lexical``) over its corpus (the prompt set's ``corpus``
or ``--corpus``) for the top ``depth`` documents.  A passage is a paragraph (a block between
blank lines; a lone Markdown heading is not one); the best is the one holding the largest
share of the question's content terms, ties going to the better-ranked document and the
earlier paragraph.  No network, no model download, no randomness: a real baseline for the
demo and for end-to-end tests.

Options: ``retriever`` (id), ``depth`` (3), and ``retriever.<KEY>=<VALUE>`` for the retriever.
"""

from __future__ import annotations

import hashlib

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import InputError
from goldeneval.core.provenance import NOT_APPLICABLE, Provenance, retriever_provenance
from goldeneval.core.text import content_terms
from goldeneval.prompts.models import ChatRequest, ModelConfigError, ModelContext, ModelError
from goldeneval.retrieval.retrievers.base import Retriever, RetrieverContext, document_id_mapper
from goldeneval.retrieval.retrievers.registry import build_retriever

__all__ = ["MODEL_ID", "ExtractiveModel", "best_passage", "build", "passages"]

MODEL_ID = "goldeneval.extractive"
REVISION = "goldeneval.extractive/best-passage-v1"
DEFAULT_RETRIEVER = "goldeneval.lexical"
DEFAULT_DEPTH = 3
MAX_IDENTITY = 200


def passages(document: Document) -> list[str]:
    """The paragraphs of a document's text, without lone Markdown headings."""
    blocks = [block.strip() for block in document.text.replace("\r\n", "\n").split("\n\n")]
    return [b for b in blocks if b and not (b.startswith("#") and "\n" not in b)]


def best_passage(question: str, documents: list[Document]) -> str:
    """The passage with the largest share of the question's content terms ('' when none shares one)."""
    wanted = content_terms(question)
    best, best_score = "", 0.0
    for document in documents:
        for passage in passages(document):
            if not wanted:
                return passage
            score = len(wanted & content_terms(passage)) / len(wanted)
            if score > best_score:
                best, best_score = passage, score
    return best


def _bounded(identity: str) -> str:
    if len(identity) <= MAX_IDENTITY:
        return identity
    return identity[:120] + "...sha256:" + hashlib.sha256(identity.encode("utf-8")).hexdigest()[:32]


class ExtractiveModel:
    """Answers with the best passage of the retrieved documents."""

    def __init__(
        self, corpus: Corpus | None, retriever: Retriever | None, retriever_id: str, depth: int = DEFAULT_DEPTH
    ) -> None:
        self.corpus = corpus
        self.retriever = retriever
        self.retriever_id = retriever_id
        self.depth = depth
        self._by_id = {doc.id: doc for doc in corpus} if corpus is not None else {}
        self._to_document = document_id_mapper()

    def _retrieve(self, question: str) -> list[Document]:
        if self.retriever is None:
            raise ModelError(f"{MODEL_ID}: no corpus to retrieve from and no context given")
        found: list[Document] = []
        for returned in self.retriever.retrieve(question, self.depth * 10):
            document = self._by_id.get(self._to_document(returned))
            if document is not None and document not in found:
                found.append(document)
            if len(found) == self.depth:
                break
        return found

    def complete(self, request: ChatRequest) -> str:
        documents = list(request.context[: self.depth]) if request.context else self._retrieve(request.question)
        return best_passage(request.question, documents)

    def provenance(self) -> Provenance:
        if self.retriever is None:  # answers from the context it is given: the retriever is the caller's
            return Provenance(
                corpus_revision=NOT_APPLICABLE,
                model_revision=REVISION,
                chunking_identity="paragraphs",
                pipeline_identity=f"{MODEL_ID}(depth={self.depth})",
            )
        declared = retriever_provenance(self.retriever, self.retriever_id)
        return Provenance(
            corpus_revision=self.corpus.revision if self.corpus is not None else None,
            model_revision=REVISION,
            chunking_identity="paragraphs",
            pipeline_identity=_bounded(
                f"{MODEL_ID}(depth={self.depth})[{declared.pipeline_identity or self.retriever_id}]"
            ),
            execution_revision=declared.execution_revision,
        )


def build(context: ModelContext) -> ExtractiveModel:
    known = ["retriever", "depth"]
    context.check_known([*known, *(k for k in context.options if k.startswith("retriever."))])
    retriever_id = context.string("retriever", DEFAULT_RETRIEVER) or DEFAULT_RETRIEVER
    depth = context.integer("depth", DEFAULT_DEPTH, minimum=1, maximum=100)
    if context.corpus is None:
        if not context.context_supplied:
            raise ModelConfigError(
                f"model {MODEL_ID!r} needs a corpus: give the prompt set a 'corpus' entry, or pass --corpus"
            )
        return ExtractiveModel(None, None, retriever_id, depth)
    options = {k.removeprefix("retriever."): v for k, v in context.options.items() if k.startswith("retriever.")}
    try:
        retriever = build_retriever(
            retriever_id, RetrieverContext(corpus=context.corpus, cache_dir=context.cache_dir, options=options)
        )
    except InputError as exc:
        raise ModelConfigError(f"model {MODEL_ID!r}: {exc}") from None
    return ExtractiveModel(context.corpus, retriever, retriever_id, depth)
