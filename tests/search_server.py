"""A real search service on 127.0.0.1 for the tests of ``goldeneval.http``.

It ranks the bundled ``transit-sample`` corpus with goldeneval's own BM25
(:class:`~goldeneval.retrieval.retrievers.lexical.LexicalRetriever`), so a run measured through
it must find exactly what ``goldeneval.lexical`` finds, and answers in the shape its path names:

* ``POST /search`` — the default contract: ``{"question", "limit"}`` in, ``{"results": [{"id", "score"}]}`` out;
* ``POST /ids`` — a bare list of ids; ``POST /ids-object`` — ``{"ids": [...]}``; ``POST /hits`` —
  ``{"hits": [{"id"}]}``;
* ``POST /es/_search`` (any path ending ``/_search``) — Elasticsearch's shape, ``{"took", "hits":
  {"total", "hits": [{"_id", "_score"}]}}``, for the default body or Elasticsearch's own
  ``{"query": {"match": {"text": ...}}, "size": ...}``;
* ``GET /select?q=...&rows=...`` (any path ending ``/select``) — Solr's shape,
  ``{"responseHeader", "response": {"docs": [{"id"}]}}``;
* ``POST /points`` — Qdrant's points, ``{"result": [{"id", "score", "payload": {"doc_id"}}], "status", "time"}``;
* ``POST /echo`` — a careless service that echoes the credentials it was sent (the bearer token,
  then the ``api_key`` query parameter) where the question says: ``"status 37"`` puts them after
  37 characters of an HTTP 401 body, ``reason`` of the status line's reason phrase, ``html`` of a
  body that is not JSON, ``string`` of a JSON string answer, ``key`` of an object's only key.

A ``GET`` takes the question in ``q`` and the limit in ``rows`` (Solr) or ``limit``.  These are
the dialects of step 6 of docs/guide/tutorial-search-api.md, which its test runs row by row.

Every response carries ``X-Index-Version`` (:attr:`SearchServer.revision`).  A test can script
replies (a status, a body, headers, a delay) that a path gives before it searches again,
require a bearer token, or make the first requests wait for each other at a barrier (to prove
that they are in flight together).
Every request is recorded.
"""

from __future__ import annotations

import functools
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from goldeneval.core.corpus import load_corpus
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever
from tests.chat_server import SHUTDOWN_POLL_S, LocalTestServer

TRANSIT_CORPUS = Path(__file__).resolve().parents[1] / "goldeneval" / "sample" / "transit" / "corpus"


@dataclass(frozen=True)
class Reply:
    """A scripted reply: a status, a body, headers, and a delay before it."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    hang_up: bool = False
    """Close the connection after this reply without saying so (as a server dropping idle connections does)."""
    reason: str | None = None
    """The status line's reason phrase (None: the standard one)."""


def json_reply(document: Any, status: int = 200, headers: tuple[tuple[str, str], ...] = ()) -> Reply:
    return Reply(status, json.dumps(document).encode(), (("Content-Type", "application/json"), *headers))


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: Any


@dataclass
class SearchServer:
    base_url: str = ""
    revision: str = "transit-index-1"
    """The ``X-Index-Version`` header of every response."""
    token: str | None = None
    """When set, a request without ``Authorization: Bearer <token>`` gets HTTP 401."""
    barrier: threading.Barrier | None = None
    """When set, the first searches wait there (5 s at most) until as many as it has parties arrive."""
    script: dict[str, list[Reply]] = field(default_factory=dict)
    requests: list[Request] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def url(self, path: str = "/search") -> str:
        return self.base_url + path

    def reply_next(self, path: str, *replies: Reply) -> None:
        """Give ``replies`` (in order) to the next requests for ``path``, then search again."""
        with self.lock:
            self.script.setdefault(path, []).extend(replies)

    def requests_for(self, path: str) -> list[Request]:
        with self.lock:
            return [request for request in self.requests if request.path == path]


@functools.cache
def _ranker() -> LexicalRetriever:
    return LexicalRetriever(load_corpus(TRANSIT_CORPUS))


_RANK_LOCK = threading.Lock()


def rank(question: str, limit: int) -> list[str]:
    """The transit-sample corpus ranked by goldeneval.lexical (k1=1.5, b=0.75)."""
    with _RANK_LOCK:
        return list(_ranker().retrieve(question, limit))


def _shaped(path: str, ids: list[str]) -> Any:
    if path == "/ids":
        return ids
    if path == "/ids-object":
        return {"ids": ids}
    if path == "/hits":
        return {"hits": [{"id": doc} for doc in ids]}
    if path.endswith("/_search"):
        hits = [{"_index": "transit", "_id": doc, "_score": 10.0 - i} for i, doc in enumerate(ids)]
        return {"took": 1, "timed_out": False, "hits": {"total": {"value": len(ids)}, "hits": hits}}
    if path.endswith("/select"):
        return {"responseHeader": {"status": 0}, "response": {"numFound": len(ids), "docs": [{"id": d} for d in ids]}}
    if path == "/points":
        points = [{"id": i, "score": 10.0 - i, "payload": {"doc_id": doc}} for i, doc in enumerate(ids)]
        return {"result": points, "status": "ok", "time": 0.001}
    return {"results": [{"id": doc, "score": 10.0 - i} for i, doc in enumerate(ids)]}


def _question_and_limit(request: Request) -> tuple[str, int] | None:
    """What a request asks, in any dialect the module docstring lists; None: none of them."""
    if request.method == "GET":
        limit = request.query.get("rows", request.query.get("limit", ["10"]))[0]
        return request.query.get("q", [""])[0], int(limit)
    body = request.body
    if isinstance(body, dict) and "question" in body:
        return str(body["question"]), int(body.get("limit", 10))
    match = body.get("query", {}).get("match", {}) if isinstance(body, dict) else {}
    if isinstance(match, dict) and isinstance(match.get("text"), str):  # Elasticsearch's match query
        return match["text"], int(body.get("size", 10))
    return None


def _handler(state: SearchServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            self._answer()

        def do_POST(self) -> None:
            self._answer()

        def _answer(self) -> None:
            parts = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            request = Request(self.command, parts.path, parse_qs(parts.query), dict(self.headers.items()), body)
            with state.lock:
                state.requests.append(request)
                scripted = state.script.get(parts.path)
                reply = scripted.pop(0) if scripted else None
            if reply is None:
                reply = self._search(request)
            time.sleep(reply.delay_s)
            self.send_response(reply.status, reply.reason)
            for name, value in reply.headers:
                self.send_header(name, value)
            self.send_header("X-Index-Version", state.revision)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            self.wfile.write(reply.body)
            if reply.hang_up:
                self.close_connection = True

        def _search(self, request: Request) -> Reply:
            if request.path == "/echo":
                return _echo(request)
            if state.token is not None and request.headers.get("Authorization") != f"Bearer {state.token}":
                return json_reply({"error": "unauthorized"}, 401)
            asked = _question_and_limit(request)
            if asked is None:
                return json_reply({"error": f"expected {{question, limit}}, got {request.body!r}"}, 400)
            question, limit = asked
            barrier = state.barrier
            if barrier is not None:
                barrier.wait(timeout=5.0)
                state.barrier = None  # the first requests met there: the rest are answered at once
            return json_reply(_shaped(request.path, rank(question, limit)))

    return Handler


ECHO_KINDS = ("status", "reason", "html", "string", "key")


def _echo(request: Request) -> Reply:
    """What ``POST /echo`` answers: the credentials sent, after as many characters as the question says."""
    asked = _question_and_limit(request)
    kind, _, offset = (asked[0] if asked else "status 0").partition(" ")
    sent = [request.headers.get("Authorization", "").removeprefix("Bearer "), *request.query.get("api_key", [])]
    echoed = "abcdefghij" * (int(offset) // 10) + "abcdefghij"[: int(offset) % 10] + " ".join(sent) + " was refused"
    if kind == "reason":
        return Reply(400, b"", reason=echoed)
    if kind == "html":
        return Reply(200, echoed.encode() + b"</p>", (("Content-Type", "text/html"),))
    if kind == "string":
        return json_reply(echoed)
    if kind == "key":
        return json_reply({echoed: 1})
    return Reply(401, echoed.encode(), (("Content-Type", "text/plain"),))


@contextmanager
def search_server(**settings: Any) -> Iterator[SearchServer]:
    """A :class:`SearchServer` answering on an ephemeral port of 127.0.0.1 until the block ends."""
    state = SearchServer(**settings)
    server = LocalTestServer(("127.0.0.1", 0), _handler(state))
    state.base_url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL_S,), name="search-server", daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def main(argv: list[str] | None = None) -> None:
    """Serve the stand-in until Ctrl-C, for following the tutorial by hand:
    ``.venv/bin/python -m tests.search_server --port 8080``."""
    import argparse

    parser = argparse.ArgumentParser(description="The tutorial's stand-in search service on 127.0.0.1.")
    parser.add_argument("--port", type=int, default=8080)
    port = parser.parse_args(argv).port
    server = ThreadingHTTPServer(("127.0.0.1", port), _handler(SearchServer(base_url=f"http://127.0.0.1:{port}")))
    print(f"stand-in search service at http://127.0.0.1:{port}/search (Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
