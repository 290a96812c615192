"""Small retrievers written against the real LangChain and LlamaIndex base classes, the way a
team writes its own: keyword overlap over a handful of documents, so that the adapters'
rules (the limit, the id field, errors) are tested without loading a model.  Each ``make_*``
is a factory a user would name with ``--option factory=tests.adapter_toys:make_...``; the
LlamaIndex ones are in tests/adapter_toys_llamaindex.py."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever as LangChainBase
from langchain_core.vectorstores import InMemoryVectorStore

DOCUMENTS = {
    "fares/day-ticket": "day ticket zones a and b price",
    "fares/single-ticket": "single ticket price one journey",
    "fares/monthly-pass": "monthly pass unlimited journeys price",
    "service/bikes-on-board": "bikes on board trains and trams",
    "service/lost-property": "lost property office found items",
}


def keyword_ranking(question: str) -> list[str]:
    """Documents sharing a word with the question, most shared first, ties by id."""
    words = set(re.findall(r"[a-z]+", question.lower()))
    scored = [(len(words & set(text.split())), doc) for doc, text in DOCUMENTS.items()]
    return [doc for score, doc in sorted(scored, key=lambda pair: (-pair[0], pair[1])) if score > 0]


# ------------------------------------------------------------------ LangChain

K_OF_CALLS: list[int] = []
"""The ``k`` each KeywordRetriever call ran with, in order."""


class KeywordRetriever(LangChainBase):
    """A retriever with a ``k`` field, as LangChain's BM25 and TF-IDF retrievers have."""

    k: int = 2
    metadata_field: str = "id"

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        K_OF_CALLS.append(self.k)
        return [
            Document(page_content=DOCUMENTS[doc], metadata={self.metadata_field: doc})
            for doc in keyword_ranking(query)[: self.k]
        ]


class EverythingRetriever(LangChainBase):
    """No limit setting at all: every document, in a fixed order, ids as ``Document.id``."""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        return [
            Document(page_content=text, id=doc, metadata={"n": i}) for i, (doc, text) in enumerate(DOCUMENTS.items())
        ]


class OddIdsRetriever(LangChainBase):
    """Document ids that are numbers, or a question whose first document has an object as id."""

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        if "object" in query:
            return [Document(page_content="x", metadata={"id": {"nested": 1}})]
        if "nothing" in query:
            return [Document(page_content="x", metadata={"source": "a.md"})]
        return [Document(page_content="x", metadata={"id": 17})]


class LetterCounts(Embeddings):
    """A deterministic toy embedding: how often each letter occurs."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self.embed_query(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return [float(text.count(letter)) + 0.01 for letter in "abcdefghijklmnopqrstuvwxyz"]


def make_keyword_retriever() -> KeywordRetriever:
    return KeywordRetriever()


def make_source_keyed_retriever() -> KeywordRetriever:
    return KeywordRetriever(metadata_field="source")


def make_everything_retriever() -> EverythingRetriever:
    return EverythingRetriever()


def make_odd_ids_retriever() -> OddIdsRetriever:
    return OddIdsRetriever()


def make_vector_store_retriever() -> Any:
    store = InMemoryVectorStore(LetterCounts())
    store.add_documents([Document(page_content=text, id=doc) for doc, text in DOCUMENTS.items()])
    return store.as_retriever(search_kwargs={"k": 1})


def make_noisy_retriever() -> KeywordRetriever:
    print("loading the index ...")  # a factory that talks must not break --format json
    return KeywordRetriever()


def make_nothing() -> None:
    return None


def make_failure() -> KeywordRetriever:
    raise ValueError("the index is not built yet\nrun make index first")
