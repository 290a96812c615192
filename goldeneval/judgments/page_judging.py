"""What the judging page does with the pooled pairs: show a question with its documents, search
the corpus, pool a found document, edit a draft's text and record a grade (:class:`Judging`)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import GoldenEvalError
from goldeneval.judgments.judgments import (
    DRAFT_SOURCE,
    SEARCH_SOURCE,
    JudgmentLine,
    Source,
    append_lines,
    utc_now,
)
from goldeneval.judgments.page_pool import PoolView
from goldeneval.judgments.page_text import grade_labels, highlighted, marked_terms, shown_text

__all__ = ["MAX_QUESTION_CHARS", "SEARCH_RESULTS", "Judging", "Searcher", "lexical_search"]

Searcher = Callable[[str, int], Sequence[str]]
"""A search over the corpus: (query, limit) -> up to ``limit`` document ids, best first."""
SEARCH_RESULTS = 10
MAX_QUESTION_CHARS = 2000
"""The longest question text a person may give a draft on the page."""


def lexical_search(corpus: Corpus, cache_dir: Path) -> Searcher:
    """The corpus searched with the lexical retriever (``goldeneval.lexical``: the BM25 index
    goldeneval already builds, cached in ``cache_dir``); chunk ids come back as document ids,
    and a returned id that is a document of the corpus itself (``faq#1``) stays whole."""
    from goldeneval.core.collector import plugin_collections
    from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR, RetrieverContext, document_id_mapper
    from goldeneval.retrieval.retrievers.registry import build_retriever

    with plugin_collections():
        retriever = build_retriever("goldeneval.lexical", RetrieverContext(corpus=corpus, cache_dir=cache_dir))
    cut = document_id_mapper(DEFAULT_CHUNK_SEPARATOR)
    ids = corpus.ids

    def to_document(returned: str) -> str:
        return returned if returned in ids else cut(returned)

    def search(query: str, limit: int) -> Sequence[str]:
        found = dict.fromkeys(to_document(returned) for returned in retriever.retrieve(query, limit * 3))
        return list(found)[:limit]

    return search


class Judging:
    """What the judging page's endpoints do, on the judgments file (:class:`PoolView`)."""

    def __init__(
        self,
        path: Path,
        corpus: Corpus,
        assessor: str,
        scale: Sequence[int],
        search: Callable[[], Searcher] | None = None,
    ) -> None:
        self.path = path
        self.corpus = corpus
        self.documents = {doc.id: doc for doc in corpus}
        self._make_search = search
        self._search: Searcher | None = None
        self.search_lock = threading.Lock()
        self.assessor = assessor
        self.scale = tuple(scale)
        self.lock = threading.Lock()
        self.pool = PoolView(path, assessor)
        self.pool.refresh()  # a bad file fails here, before the page is served

    def _document(self, terms: set[str], document: str) -> dict[str, Any]:
        doc = self.documents.get(document)
        if doc is None:
            return {"title": "", "segments": [["(this document is not in the corpus)", False]]}
        text = shown_text(doc.text)
        return {
            "title": doc.title,
            "title_segments": highlighted(doc.title, terms),
            "segments": highlighted(text, terms),
        }

    def state(self) -> dict[str, Any]:
        """What the page needs to open: per question its id, its pooled pairs and how many this
        assessor judged, in pool order; no question text and no document (:meth:`question`)."""
        with self.lock:
            self.pool.refresh()
            pool = self.pool
            questions = [[q, len(pool.documents[q]), pool.judged[q]] for q in pool.order]
            warnings = list(pool.warnings)
        labels = grade_labels(self.scale)
        return {
            "assessor": self.assessor,
            "file": str(self.path),
            "scale": [{"grade": g, "label": labels[g]} for g in self.scale],
            "questions": questions,
            "pairs": sum(n for _, n, _ in questions),
            "judged": sum(judged for _, _, judged in questions),
            "warnings": warnings,
        }

    def question(self, index: int) -> dict[str, Any] | None:
        """One question (by its position in pool order) with its documents, marked up, this
        assessor's grades and the models' suggestions."""
        with self.lock:
            self.pool.refresh()
            pool = self.pool
            if not 0 <= index < len(pool.order):
                return None
            question = pool.order[index]
            text = pool.texts.get(question, "")
            drafted = self._draft_pair(question) is not None
            listed = [
                (d, pool.mine.get((question, d)), list(pool.suggested.get((question, d), {}).values()))
                for d in pool.documents[question]
            ]
        terms = marked_terms(text)
        documents = [
            {"id": d, "grade": grade, "suggestions": suggestions, **self._document(terms, d)}
            for d, grade, suggestions in listed
        ]
        return {"index": index, "id": question, "text": text, "documents": documents, "draft": drafted}

    def search(self, query: str, index: int) -> tuple[int, dict[str, Any]]:
        """The corpus's best documents for ``query``, each with its title and whether the
        question at ``index`` has it pooled already."""
        if self._make_search is None:
            return 404, {"error": "search is not available on this page"}
        if not query.strip():
            return 400, {"error": "type what to search for"}
        with self.lock:
            self.pool.refresh()
            if not 0 <= index < len(self.pool.order):
                return 404, {"error": f"no question at index {index}"}
            question = self.pool.order[index]
            pooled = set(self.pool.documents[question])
        try:
            with self.search_lock:  # built on the first search: indexing a large corpus takes a while
                if self._search is None:
                    self._search = self._make_search()
                found = self._search(query, SEARCH_RESULTS)
        except GoldenEvalError as exc:  # the index cannot be built or read: one line, not a traceback
            return 500, {"error": f"search failed: {exc}"}
        results = [
            {"id": d, "title": self.documents[d].title if d in self.documents else "", "pooled": d in pooled}
            for d in found
        ]
        return 200, {"query": query, "results": results}

    def _draft_pair(self, question: str) -> tuple[str, str] | None:
        """The pair that pools a drafted question's own source document (source ``draft``), or
        None for a question no model drafted.  Called holding the lock."""
        for document in self.pool.documents.get(question, ()):
            pair = (question, document)
            if any(source.source == DRAFT_SOURCE for source in self.pool.sources.get(pair, ())):
                return pair
        return None

    def edit(self, body: Any) -> tuple[int, dict[str, Any]]:
        """A person's edit of a drafted question's text: a pool line that restates the draft's
        source pair, as pooled, with the new text (the file keeps the latest text of each
        question; ``judgments to-set`` writes an accepted draft with it).  Only a draft's text
        is edited here: a labelled question's text is its set file's."""
        if not isinstance(body, dict):
            return 400, {"error": "expected a JSON object with question and text"}
        question, text = body.get("question"), body.get("text")
        if not isinstance(text, str) or not text.strip():
            return 400, {"error": "the question's text must not be empty"}
        if len(text) > MAX_QUESTION_CHARS:
            return 400, {"error": f"the question's text is longer than {MAX_QUESTION_CHARS} characters"}
        text = " ".join(text.split())
        with self.lock:
            self.pool.refresh()
            pair = self._draft_pair(question) if isinstance(question, str) else None
            if pair is None:
                return 400, {
                    "error": f"{question!r} is not a drafted question of {self.path}: only a draft is edited here"
                }
            if self.pool.texts.get(pair[0]) != text:
                line = JudgmentLine(
                    question=pair[0], document=pair[1], sources=self.pool.sources[pair], question_text=text
                )
                append_lines(self.path, [line])
                self.pool.refresh()
        return 200, {"ok": True, "text": text}

    def add(self, body: Any) -> tuple[int, dict[str, Any]]:
        """Pool a document a search found for a question: a pool line whose source is
        ``search:<assessor>`` (at its rank among the results); the document must be in the
        corpus.  Returns the document's place among the question's documents."""
        if not isinstance(body, dict):
            return 400, {"error": "expected a JSON object with question and document"}
        question, document, rank = body.get("question"), body.get("document"), body.get("rank", 1)
        if not isinstance(rank, int) or isinstance(rank, bool) or rank < 1:
            return 400, {"error": f"rank must be a whole number from 1, got {rank!r}"}
        if not isinstance(document, str) or document not in self.documents:
            return 400, {"error": f"{document!r} is not a document of the corpus"}
        with self.lock:
            self.pool.refresh()
            if not isinstance(question, str) or question not in self.pool.documents:
                return 400, {"error": f"{question!r} is not a pooled question of {self.path}"}
            if (question, document) not in self.pool.sources:
                line = JudgmentLine(
                    question=question,
                    document=document,
                    sources=(Source(source=SEARCH_SOURCE + self.assessor, rank=rank),),
                    question_text=self.pool.texts.get(question),
                )
                append_lines(self.path, [line])
                self.pool.refresh()
            position = self.pool.documents[question].index(document)
        return 200, {"ok": True, "document": position}

    def judge(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict):
            return 400, {"error": "expected a JSON object with question, document and grade"}
        question, document, grade = body.get("question"), body.get("document"), body.get("grade")
        if not isinstance(grade, int) or isinstance(grade, bool) or grade not in self.scale:
            return 400, {"error": f"grade must be one of {list(self.scale)}, got {grade!r}"}
        with self.lock:
            self.pool.refresh()
            pair = (question, document)
            if not isinstance(question, str) or not isinstance(document, str) or pair not in self.pool.sources:
                return 400, {"error": f"({question!r}, {document!r}) is not a pooled pair of {self.path}"}
            line = JudgmentLine(
                question=question,
                document=document,
                grade=grade,
                assessor=self.assessor,
                judged_at=utc_now(),
                sources=self.pool.sources[(question, document)],
            )
            append_lines(self.path, [line])
            self.pool.refresh()
        return 200, {"ok": True, "judged_at": line.judged_at}
