"""The LlamaIndex toys of tests/adapter_toys.py, in a module of their own: llama-index-core takes
1.4 s to import, paid only by the tests that build one (through their factory path), not by every
test worker collecting tests/test_adapters_frameworks.py."""

from __future__ import annotations

from llama_index.core.retrievers import BaseRetriever as LlamaIndexBase
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from tests.adapter_toys import DOCUMENTS, keyword_ranking


class KeywordNodes(LlamaIndexBase):
    """A LlamaIndex retriever with ``similarity_top_k``, ids in ``metadata['doc_id']``, and as
    each node's ``ref_doc_id`` (the source document)."""

    def __init__(self, similarity_top_k: int = 2) -> None:
        super().__init__()
        self.similarity_top_k = similarity_top_k

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        nodes = []
        for rank, doc in enumerate(keyword_ranking(query_bundle.query_str)[: self.similarity_top_k]):
            node = TextNode(text=DOCUMENTS[doc], id_=f"chunk-{rank}", metadata={"doc_id": doc})
            node.relationships = {}
            nodes.append(NodeWithScore(node=_with_source(node, doc), score=1.0 / (rank + 1)))
        return nodes


class AllNodes(LlamaIndexBase):
    """No limit setting: every document as a node whose ``node_id`` is the document id."""

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [NodeWithScore(node=TextNode(text=text, id_=doc), score=0.5) for doc, text in DOCUMENTS.items()]


def _with_source(node: TextNode, doc: str) -> TextNode:
    from llama_index.core.schema import NodeRelationship, RelatedNodeInfo

    node.relationships[NodeRelationship.SOURCE] = RelatedNodeInfo(node_id=doc)
    return node


def make_keyword_nodes() -> KeywordNodes:
    return KeywordNodes()


def make_all_nodes() -> AllNodes:
    return AllNodes()
