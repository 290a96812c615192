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

:func:`answer_judging_app` is the page of answer judgments (``goldeneval judgments
judge-answers``, :mod:`goldeneval.judgments.page_answers`): a stored run's answers, each
person's verdict appended to an answer judgments file, through ``GET /api/answers/state``,
``GET /api/answers/item?index=N`` and ``POST /api/answers/verdicts``.

The modules of the page: :mod:`~goldeneval.judgments.page_text` (marked text, grade labels),
:mod:`~goldeneval.judgments.page_pool` (the judgments file as read), :mod:`~goldeneval.judgments.page_judging`
(what the grading endpoints do), :mod:`~goldeneval.judgments.page_html` and
:mod:`~goldeneval.judgments.page_answers_html` (the pages); this module serves them.

Only requests whose ``Host`` is 127.0.0.1 or localhost are answered, and a grade must come as
``application/json`` (which a page on another site cannot send without the browser asking
first), so another site open in the same browser cannot grade for the assessor.
"""

from __future__ import annotations

import errno
import json
import socket
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
from goldeneval.core.errors import InputError
from goldeneval.judgments.judgments import DEFAULT_SCALE, SEARCH_SOURCE
from goldeneval.judgments.page_answers import AnswerJudging, AnswerReview
from goldeneval.judgments.page_answers_html import ANSWER_PAGE
from goldeneval.judgments.page_html import PAGE
from goldeneval.judgments.page_judging import Judging, Searcher, lexical_search
from goldeneval.judgments.page_pool import PoolView
from goldeneval.judgments.page_text import HIGHLIGHT_STOPWORDS, grade_labels, highlighted, marked_terms

__all__ = [
    "DEFAULT_SCALE",
    "HIGHLIGHT_STOPWORDS",
    "HOST",
    "SEARCH_SOURCE",
    "PoolView",
    "Searcher",
    "answer_judging_app",
    "grade_labels",
    "highlighted",
    "judging_app",
    "lexical_search",
    "listen",
    "marked_terms",
    "serve",
]

HOST = "127.0.0.1"


async def posted(request: Request, action: Callable[[Any], tuple[int, dict[str, Any]]]) -> Response:
    """A POST endpoint: the body must come as ``application/json`` (which a page on another site
    cannot send without the browser asking first); ``action`` runs on a worker thread."""
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return JSONResponse({"error": "send the grade as application/json"}, status_code=415)
    try:
        body = await request.json()
    except ValueError:
        return JSONResponse({"error": "the body is not JSON"}, status_code=400)
    status, reply = await run_in_threadpool(action, body)
    return JSONResponse(reply, status_code=status)


def _index(request: Request, name: str) -> int | None:
    try:
        return int(request.query_params.get(name, ""))
    except ValueError:
        return None


def _local_app(routes: list[Route]) -> Starlette:
    """An app that answers only requests whose ``Host`` is 127.0.0.1 or localhost."""
    return Starlette(routes=routes, middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=[HOST, "localhost"])])


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
    judging = Judging(path, corpus, assessor, scale, search)

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

    app = _local_app(
        [
            Route("/", page),
            Route("/api/state", state),
            Route("/api/question", question),
            Route("/api/judgments", judge, methods=["POST"]),
            Route("/api/search", searched),
            Route("/api/pool", add, methods=["POST"]),
            Route("/api/question-text", edited, methods=["POST"]),
        ]
    )
    app.state.warnings = tuple(judging.pool.warnings)  # what the first read of the file found
    return app


def answer_judging_app(review: AnswerReview, path: Path, assessor: str) -> Starlette:
    """The answer judging page (:mod:`goldeneval.judgments.page_answers`): a stored run's
    answers, each verdict appended to the answer judgments file at ``path`` (read here once: a
    bad file is invalid input here, not in the browser)."""
    judging = AnswerJudging(review, path, assessor)

    async def page(_request: Request) -> Response:
        return HTMLResponse(ANSWER_PAGE)

    def state(_request: Request) -> Response:  # sync: Starlette runs it on a worker thread
        return JSONResponse(judging.state())

    def item(request: Request) -> Response:
        index = _index(request, "index")
        if index is None:
            return JSONResponse({"error": "index must be a whole number"}, status_code=400)
        found = judging.item(index)
        if found is None:
            return JSONResponse({"error": f"no answer at index {index}"}, status_code=404)
        return JSONResponse(found)

    async def record(request: Request) -> Response:
        return await posted(request, judging.record)

    return _local_app(
        [
            Route("/", page),
            Route("/api/answers/state", state),
            Route("/api/answers/item", item),
            Route("/api/answers/verdicts", record, methods=["POST"]),
        ]
    )


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
