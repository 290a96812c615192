"""The judging page: one person grades the pooled documents in a browser, on 127.0.0.1 only.

A Starlette app (served by uvicorn, both already installed with Dagster's webserver) with
one HTML page of plain JavaScript and three JSON endpoints:

* ``GET /api/state``: what the page needs to open, whatever the pool's size: per question (in
  pool order) its id, its number of pooled pairs and how many of them this assessor judged,
  and the totals; no question text and no document;
* ``GET /api/question?index=N``: the N-th question when it is shown, with its pooled
  documents (title, text cut into segments, the question's terms marked), this assessor's
  grades and any model's suggestion (grade, spread, samples, unstable: shown beside the grade
  buttons, the suggested one marked; the person accepts it by pressing that grade, which
  writes their own line, or gives another);
* ``POST /api/judgments``: one grade, appended to the file at once as a judgment line
  (:func:`goldeneval.judgments.judgments.append_lines`).

The file is read once when the page starts (:class:`PoolView`) and then only what was
appended to it since, on each request, so opening the page again (after a re-pool too) shows
the file as it is and starts at the first unjudged pair; the page keeps its progress counts
as grades are given, without asking again.

Only requests whose ``Host`` is 127.0.0.1 or localhost are answered, and a grade must come as
``application/json`` (which a page on another site cannot send without the browser asking
first), so another site open in the same browser cannot grade for the assessor.
"""

from __future__ import annotations

import errno
import json
import os
import re
import socket
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import GoldenEvalError, InputError
from goldeneval.core.text import ENGLISH_STOPWORDS, TOKEN_PATTERN, stemmer
from goldeneval.judgments.judgments import (
    DEFAULT_SCALE,
    DRAFT_SOURCE,
    SEARCH_SOURCE,
    JudgmentLine,
    Source,
    append_lines,
    parse_line,
    utc_now,
)

__all__ = [
    "DEFAULT_SCALE",
    "HIGHLIGHT_STOPWORDS",
    "HOST",
    "SEARCH_SOURCE",
    "PoolView",
    "Searcher",
    "grade_labels",
    "highlighted",
    "judging_app",
    "lexical_search",
    "listen",
    "marked_terms",
    "serve",
]

HOST = "127.0.0.1"
_NAMES = {0: "not relevant", 1: "relevant", 2: "highly relevant", 3: "perfect"}
_TOKEN = re.compile(TOKEN_PATTERN)
MAX_SHOWN_CHARS = 20_000
"""Longest document text the page shows (the rest is cut, with a note)."""


HIGHLIGHT_STOPWORDS = ENGLISH_STOPWORDS
"""Words never marked on the page (:data:`goldeneval.core.text.ENGLISH_STOPWORDS`: the lexical
analyser's stop words, which keep "can" and "my" as terms, and the rest of a common English
list), so that the marks fall on what the question is about."""


def marked_terms(question: str) -> set[str]:
    """The stems the page marks for ``question``: its words less :data:`HIGHLIGHT_STOPWORDS`,
    stemmed as the lexical analyser stems them."""
    words = [word for word in _TOKEN.findall(question.lower()) if word not in HIGHLIGHT_STOPWORDS]
    return set(stemmer().stemWords(words))


def grade_labels(scale: Sequence[int]) -> dict[int, str]:
    return {grade: _NAMES.get(grade, f"grade {grade}") for grade in scale}


def highlighted(text: str, terms: set[str]) -> list[tuple[str, bool]]:
    """``text`` as segments, each token whose stem is one of ``terms`` a marked segment of its
    own; a stop word (:data:`HIGHLIGHT_STOPWORDS`) is never marked."""
    matches = list(_TOKEN.finditer(text))
    stems = stemmer().stemWords([m.group().lower() for m in matches]) if matches else []
    segments: list[tuple[str, bool]] = []
    at = 0
    for match, stem in zip(matches, stems, strict=True):
        if match.group().lower() in HIGHLIGHT_STOPWORDS or stem not in terms:
            continue
        if match.start() > at:
            segments.append((text[at : match.start()], False))
        segments.append((match.group(), True))
        at = match.end()
    if at < len(text):
        segments.append((text[at:], False))
    return segments


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


class PoolView:
    """The judgments file as the page needs it, held in memory: the questions in pool order,
    each question's documents, their sources, this assessor's grades and the models'
    suggestions, with this assessor's judged count per question.  :meth:`refresh` reads only
    the lines appended since the last read (this page's grades, a re-pool, another assessor),
    so no request reads the whole file again; a file that shrank (replaced) is read anew."""

    def __init__(self, path: Path, assessor: str) -> None:
        self.path = path
        self.assessor = assessor
        self._reset()

    def _reset(self) -> None:
        self.offset = 0
        self.lineno = 0
        self.order: list[str] = []
        self.documents: dict[str, list[str]] = {}
        self.sources: dict[tuple[str, str], tuple[Source, ...]] = {}
        self.texts: dict[str, str] = {}
        self.mine: dict[tuple[str, str], int] = {}
        self.judged: dict[str, int] = {}
        self.suggested: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.warnings: list[str] = []
        self._names: dict[str, str] = {}

    @property
    def pairs(self) -> int:
        return len(self.sources)

    def refresh(self) -> None:
        """Read what was appended since the last call (complete lines only)."""
        try:
            size = os.stat(self.path).st_size
        except FileNotFoundError:
            return
        if size < self.offset:
            self._reset()
        if size == self.offset:
            return
        with self.path.open("rb") as handle:
            handle.seek(self.offset)
            for raw in handle:
                if not raw.endswith(b"\n"):
                    break  # a line being written (or torn): read once it is whole
                self.offset += len(raw)
                self.lineno += 1
                line = parse_line(self.path, self.lineno, raw, self.warnings)
                if line is not None:
                    self._take(line)

    def _take(self, line: JudgmentLine) -> None:
        question = self._names.setdefault(line.question, line.question)
        pair = (question, self._names.setdefault(line.document, line.document))
        if pair not in self.sources:
            if question not in self.documents:
                self.order.append(question)
                self.documents[question] = []
                self.judged[question] = 0
            self.documents[question].append(pair[1])
            self.sources[pair] = ()
        if line.question_text is not None:
            self.texts[question] = line.question_text
        if line.assessor is None:
            self.sources[pair] = line.sources
        elif line.assessor == self.assessor:
            if line.grade is None:
                if self.mine.pop(pair, None) is not None:
                    self.judged[question] -= 1
            else:
                if pair not in self.mine:
                    self.judged[question] += 1
                self.mine[pair] = line.grade
        elif line.suggestion is not None and line.grade is not None:
            self.suggested.setdefault(pair, {})[line.assessor] = {
                "assessor": line.assessor,
                "grade": line.grade,
                "spread": line.suggestion.spread,
                "samples": len(line.suggestion.scores),
                "unstable": line.suggestion.unstable,
            }
        elif line.grade is None and pair in self.suggested:
            self.suggested[pair].pop(line.assessor, None)


class _Judging:
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
        text = doc.text if len(doc.text) <= MAX_SHOWN_CHARS else doc.text[:MAX_SHOWN_CHARS] + " [...]"
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


def judging_app(
    path: Path,
    corpus: Corpus,
    assessor: str,
    scale: Sequence[int] = DEFAULT_SCALE,
    search: Callable[[], Searcher] | None = None,
) -> Starlette:
    """The judging page's app for the judgments file at ``path``, read here once (a bad file
    is :class:`~goldeneval.judgments.judgments.JudgmentsError` here, not in the browser); what
    the read warned about is the app's ``state.warnings``."""
    judging = _Judging(path, corpus, assessor, scale, search)

    async def page(_request: Request) -> Response:
        config = json.dumps({"assessor": assessor}).replace("<", "\\u003c")
        return HTMLResponse(PAGE.replace("__CONFIG__", config))

    def state(_request: Request) -> Response:  # sync: Starlette runs it on a worker thread
        return JSONResponse(judging.state())

    def question(request: Request) -> Response:  # sync: Starlette runs it on a worker thread
        try:
            index = int(request.query_params.get("index", ""))
        except ValueError:
            return JSONResponse({"error": "index must be a whole number"}, status_code=400)
        found = judging.question(index)
        if found is None:
            return JSONResponse({"error": f"no question at index {index}"}, status_code=404)
        return JSONResponse(found)

    async def posted(request: Request, action: Callable[[Any], tuple[int, dict[str, Any]]]) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "send the grade as application/json"}, status_code=415)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        status, reply = await run_in_threadpool(action, body)
        return JSONResponse(reply, status_code=status)

    async def judge(request: Request) -> Response:
        return await posted(request, judging.judge)

    async def add(request: Request) -> Response:
        return await posted(request, judging.add)

    async def edited(request: Request) -> Response:
        return await posted(request, judging.edit)

    def searched(request: Request) -> Response:  # sync: Starlette runs it on a worker thread
        try:
            index = int(request.query_params.get("question", ""))
        except ValueError:
            return JSONResponse({"error": "question must be a whole number"}, status_code=400)
        status, reply = judging.search(request.query_params.get("q", ""), index)
        return JSONResponse(reply, status_code=status)

    app = Starlette(
        routes=[
            Route("/", page),
            Route("/api/state", state),
            Route("/api/question", question),
            Route("/api/judgments", judge, methods=["POST"]),
            Route("/api/search", searched),
            Route("/api/pool", add, methods=["POST"]),
            Route("/api/question-text", edited, methods=["POST"]),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=[HOST, "localhost"])],
    )
    app.state.warnings = tuple(judging.pool.warnings)  # what the first read of the file found
    return app


def listen(port: int) -> socket.socket:
    """A socket listening on 127.0.0.1:``port``, bound before the page is announced, so that a
    port in use is one line of invalid input naming ``--port`` (not the server's own error)."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a port in TIME_WAIT is free
    try:
        sock.bind((HOST, port))
        sock.listen(128)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise InputError(
                f"port {port} on {HOST} is in use (another goldeneval judge?): pass another --port"
            ) from None
        raise InputError(f"cannot listen on {HOST}:{port}: {exc.strerror}; pass another --port") from None
    sock.set_inheritable(True)
    return sock


def serve(app: Starlette, sock: socket.socket) -> None:
    """Serve ``app`` on the listening socket ``sock`` (:func:`listen`) until interrupted."""
    import uvicorn

    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>goldeneval judge</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem; color: #222; }
header { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
#question { font-size: 1.3rem; margin: .5rem 0 1rem; padding: .75rem; background: #f3f6fa; border-radius: 6px; }
#doc { border: 1px solid #ccd; border-radius: 6px; padding: 1rem; }
#doc h2 { margin-top: 0; font-size: 1.1rem; }
#doc .id { color: #667; font-family: monospace; font-size: .85rem; }
#text { white-space: pre-wrap; line-height: 1.45; max-height: 55vh; overflow-y: auto; }
mark { background: #ffe27a; }
#controls { margin: 1rem 0; display: flex; gap: .5rem; flex-wrap: wrap; }
button { font-size: 1rem; padding: .4rem .8rem; cursor: pointer; }
button.chosen { outline: 3px solid #2a6; }
button.suggested { border: 2px dashed #c80; }
#suggestion { color: #845; font-size: .95rem; min-height: 1.2rem; }
#pairs span { display: inline-block; margin: 2px; padding: 1px 6px; border-radius: 4px; background: #eee;
  font-size: .8rem; cursor: pointer; }
#pairs span.judged { background: #cfe8d4; }
#pairs span.current { outline: 2px solid #36c; }
#status { color: #a33; min-height: 1.2rem; }
#search { margin: 1rem 0 .3rem; }
#results div { margin: .2rem 0; font-size: .9rem; }
.muted { color: #667; font-size: .9rem; }
</style>
</head>
<body>
<header><strong>goldeneval judge</strong><span id="progress" class="muted"></span></header>
<div id="question"></div>
<form id="edit" hidden><span class="muted">a draft: accept it by judging its source relevant, reject it with 0, or
  edit it first:</span> <input id="edited" size="70"> <button type="submit">save the question's text</button></form>
<div id="pairs"></div>
<div id="doc"><div class="id" id="docid"></div><h2 id="title"></h2><div id="text"></div></div>
<div id="controls"></div>
<div id="suggestion"></div>
<label class="muted"><input type="checkbox" id="review"> review judged pairs too (r)</label>
<form id="search"><input id="query" type="search" size="50"
  placeholder="a document the pool missed? search the corpus (/)"> <button type="submit">search</button></form>
<div id="results"></div>
<p class="muted" id="keys"></p>
<p id="status"></p>
<script>
"use strict";
const CONFIG = __CONFIG__;
// state: the summary (/api/state); loaded: question index -> its documents (/api/question), when shown
let state = null, at = {q: 0, d: 0}, judgedOverall = 0;
const loaded = new Map();
const $ = (id) => document.getElementById(id);

function fill(node, segments) {
  node.textContent = "";
  for (const [text, marked] of segments) {
    if (marked) { const m = document.createElement("mark"); m.textContent = text; node.appendChild(m); }
    else node.appendChild(document.createTextNode(text));
  }
}
function reviewing() { return $("review").checked; }
function count(q) { return state.questions[q][1]; }
function judgedIn(q) { return state.questions[q][2]; }
async function question(q) {
  if (!loaded.has(q)) {
    const reply = await fetch("/api/question?index=" + q);
    if (!reply.ok) throw new Error((await reply.json()).error);
    loaded.set(q, await reply.json());
  }
  return loaded.get(q);
}
function firstUnjudgedIn(data, from) {
  for (let d = from; d < data.documents.length; d++) if (data.documents[d].grade === null) return d;
  return -1;
}
// the next pair to show after `from` (a {q, d}); by default only unjudged pairs, from here on and then
// from the start; reviewing: every pair in order.  Questions whose pairs are all judged are passed over
// by their counts, without loading them.
async function next(from) {
  const n = state.questions.length;
  if (reviewing()) {
    if (from.d + 1 < count(from.q)) return {q: from.q, d: from.d + 1};
    return from.q + 1 < n ? {q: from.q + 1, d: 0} : null;
  }
  const here = firstUnjudgedIn(await question(from.q), from.d + 1);
  if (here >= 0) return {q: from.q, d: here};
  for (let step = 1; step <= n; step++) {
    const q = (from.q + step) % n;
    if (judgedIn(q) >= count(q)) continue;
    const d = firstUnjudgedIn(await question(q), 0);
    if (d >= 0 && !(q === from.q && d === from.d)) return {q, d};
  }
  return null;
}
async function previous(from) {
  if (from.d > 0) return {q: from.q, d: from.d - 1};
  if (from.q === 0) return null;
  return {q: from.q - 1, d: count(from.q - 1) - 1};
}
let searchedFor = null;  // the question the search results on screen were found for
async function show(where) {
  if (searchedFor !== null && where.q !== searchedFor) { $("results").textContent = ""; searchedFor = null; }
  at = where;
  const data = await question(at.q), d = data.documents[at.d];
  $("question").textContent = data.text || "(question " + data.id + ": its text is not in the file)";
  $("edit").hidden = !data.draft;
  if (data.draft && document.activeElement !== $("edited")) $("edited").value = data.text;
  fill($("title"), d.title_segments || [[d.title, false]]);
  fill($("text"), d.segments);
  $("docid").textContent = data.id + " / " + d.id;
  $("progress").textContent = "Question " + (at.q + 1) + " of " + state.questions.length +
    " \u00b7 document " + (at.d + 1) + " of " + data.documents.length +
    " \u00b7 " + judgedIn(at.q) + " of " + data.documents.length + " judged here" +
    " \u00b7 " + judgedOverall + " of " + state.pairs + " judged overall \u00b7 assessor " + state.assessor;
  const pairs = $("pairs"); pairs.textContent = "";
  data.documents.forEach((x, i) => {
    const s = document.createElement("span");
    s.textContent = x.id + (x.grade === null ? "" : " = " + x.grade);
    if (x.grade !== null) s.classList.add("judged");
    if (i === at.d) s.classList.add("current");
    s.onclick = () => show({q: at.q, d: i});
    pairs.appendChild(s);
  });
  const offered = (d.suggestions || []);
  for (const b of document.querySelectorAll("#controls button[data-grade]")) {
    b.classList.toggle("chosen", Number(b.dataset.grade) === d.grade);
    b.classList.toggle("suggested", offered.some((s) => s.grade === Number(b.dataset.grade)));
  }
  $("suggestion").textContent = offered.map((s) => "Suggested by " + s.assessor + ": " + s.grade +
    (s.samples > 1 ? " (spread " + s.spread + " over " + s.samples + " samples" +
      (s.unstable ? ", unstable" : "") + ")" : "") + " \u2014 press " + s.grade + " to accept").join("; ");
}
let queue = Promise.resolve();
function act(action) {  // keys in turn: a grade is saved, and the page moved on, before the next key acts
  if (!state || !state.questions.length) return;
  queue = queue.then(action).catch((error) => { $("status").textContent = String(error); });
}
async function grade(value) {
  const data = await question(at.q), d = data.documents[at.d];
  if (d.grade !== null && !reviewing()) {  // a stray key never re-grades a judged pair: reviewing is a mode
    $("status").textContent = "judged already (" + d.grade + "): press r to review judged pairs and grade it again";
    return;
  }
  const reply = await fetch("/api/judgments", {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({question: data.id, document: d.id, grade: value}),
  });
  if (!reply.ok) { $("status").textContent = "not saved: " + (await reply.json()).error; return; }
  $("status").textContent = "";
  if (d.grade === null) { state.questions[at.q][2] += 1; judgedOverall += 1; }
  d.grade = value;
  const to = await next(at);
  if (to) await show(to);
  else {
    if (judgedOverall >= state.pairs) $("status").textContent = "All judged.";
    await show(at);
  }
}
async function searchCorpus() {
  const query = $("query").value;
  if (!query.trim()) return;
  const reply = await fetch("/api/search?question=" + at.q + "&q=" + encodeURIComponent(query));
  const found = await reply.json();
  if (!reply.ok) { $("status").textContent = found.error; return; }
  const list = $("results"); list.textContent = "";
  searchedFor = at.q;
  if (!found.results.length) list.textContent = "Nothing found for " + query + ".";
  found.results.forEach((r, i) => {
    const row = document.createElement("div");
    const b = document.createElement("button");
    b.textContent = r.pooled ? "show" : "add and judge";
    b.dataset.document = r.id;
    b.onclick = () => act(() => addDocument(r.id, i + 1));
    row.appendChild(b);
    row.appendChild(document.createTextNode(" " + r.id + " \u2014 " + r.title + (r.pooled ? " (pooled)" : "")));
    list.appendChild(row);
  });
}
async function addDocument(id, rank) {  // pooled with the source search:<assessor>, then shown to be judged
  const data = await question(at.q);
  const reply = await fetch("/api/pool", {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({question: data.id, document: id, rank}),
  });
  const added = await reply.json();
  if (!reply.ok) { $("status").textContent = "not added: " + added.error; return; }
  if (added.document >= count(at.q)) { state.questions[at.q][1] = added.document + 1; state.pairs += 1; }
  loaded.delete(at.q);
  $("results").textContent = ""; $("query").value = ""; $("query").blur();
  await show({q: at.q, d: added.document});
}
async function editDraft() {  // a draft's question as the person words it, kept in the judgments file
  const data = await question(at.q);
  const reply = await fetch("/api/question-text", {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({question: data.id, text: $("edited").value}),
  });
  const saved = await reply.json();
  if (!reply.ok) { $("status").textContent = "not saved: " + saved.error; return; }
  loaded.delete(at.q);
  $("edited").blur();
  $("status").textContent = "question text saved";
  await show(at);
}
async function skip() { const to = await next(at); if (to) await show(to); }
async function back() { const to = await previous(at); if (to) await show(to); }
async function load() {
  const reply = await fetch("/api/state");
  state = await reply.json();
  judgedOverall = state.judged;
  const controls = $("controls"); controls.textContent = "";
  for (const {grade: g, label} of state.scale) {
    const b = document.createElement("button");
    b.dataset.grade = g; b.textContent = g + " " + label; b.onclick = () => act(() => grade(g));
    controls.appendChild(b);
  }
  for (const [label, action] of [["skip (s)", skip], ["back (b)", back]]) {
    const b = document.createElement("button"); b.textContent = label; b.onclick = () => act(action);
    controls.appendChild(b);
  }
  $("keys").textContent = "Keys: " + state.scale.map((s) => s.grade + " " + s.label).join(", ") +
    "; s or \u2192 next (unjudged only, unless reviewing); b or \u2190 back; r review judged pairs too;" +
    " / search the corpus.";
  if (state.warnings.length) $("status").textContent = state.warnings.join(" ");
  if (!state.questions.length) { $("question").textContent = "Nothing pooled in " + state.file + " yet."; return; }
  // the first unjudged pair: its question found by the counts, only that question loaded
  let q = state.questions.findIndex((x) => x[2] < x[1]);
  if (q < 0) { q = 0; $("status").textContent = "All judged."; }
  const d = Math.max(firstUnjudgedIn(await question(q), 0), 0);
  await show({q, d});
  performance.mark("goldeneval-judge-ready");  // the first pair on screen (benchmarks/judge_page.py)
}
$("search").addEventListener("submit", (event) => { event.preventDefault(); act(searchCorpus); });
$("edit").addEventListener("submit", (event) => { event.preventDefault(); act(editDraft); });
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || !state) return;
  if (event.target === $("query") || event.target === $("edited")) return;
  if (event.key === "/") { $("query").focus(); event.preventDefault(); return; }
  const g = state.scale.find((s) => String(s.grade) === event.key);
  if (g) { act(() => grade(g.grade)); event.preventDefault(); }
  else if (event.key === "s" || event.key === "ArrowRight") act(skip);
  else if (event.key === "b" || event.key === "ArrowLeft") act(back);
  else if (event.key === "r") { $("review").checked = !$("review").checked; }
});
load();
</script>
</body>
</html>
"""
