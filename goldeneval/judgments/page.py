"""The judging page: one person grades the pooled documents in a browser, on 127.0.0.1 only.

A Starlette app (served by uvicorn, both already installed with Dagster's webserver) with
one HTML page of plain JavaScript and two JSON endpoints:

* ``GET /api/state``: the questions in pool order, each with its pooled documents (title,
  text cut into segments, the question's terms marked), this assessor's grades and any
  model's suggestion (grade, spread, samples, unstable: shown beside the grade buttons, the
  suggested one marked; the person accepts it by pressing that grade, which writes their own
  line, or gives another), read
  from the judgments file on every call, so opening the page again starts at the first unjudged pair;
* ``POST /api/judgments``: one grade, appended to the file at once as a judgment line
  (:func:`goldeneval.judgments.judgments.append_lines`).

Only requests whose ``Host`` is 127.0.0.1 or localhost are answered, and a grade must come as
``application/json`` (which a page on another site cannot send without the browser asking
first), so another site open in the same browser cannot grade for the assessor.
"""

from __future__ import annotations

import errno
import json
import re
import socket
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import InputError
from goldeneval.core.text import STOPWORDS, TOKEN_PATTERN, stemmer
from goldeneval.judgments.judgments import DEFAULT_SCALE, JudgmentLine, append_lines, read_judgments, utc_now

__all__ = [
    "DEFAULT_SCALE",
    "HIGHLIGHT_STOPWORDS",
    "HOST",
    "grade_labels",
    "highlighted",
    "judging_app",
    "listen",
    "marked_terms",
    "serve",
]

HOST = "127.0.0.1"
_NAMES = {0: "not relevant", 1: "relevant", 2: "highly relevant", 3: "perfect"}
_TOKEN = re.compile(TOKEN_PATTERN)
MAX_SHOWN_CHARS = 20_000
"""Longest document text the page shows (the rest is cut, with a note)."""


HIGHLIGHT_STOPWORDS: frozenset[str] = STOPWORDS | frozenset(
    """
    about above after again against all am any because been before being below between both can
    cannot could did do does doing don down during each few from further had has have having he her
    here hers herself him himself his how i its itself just me more most my myself nor now off once
    only other ought our ours ourselves out over own same she should so some than theirs them
    themselves those through too under until up very we were what when where which while who whom
    why would you your yours yourself yourselves
    """.split()  # noqa: SIM905 - a word list reads best as words
)
"""Words never marked on the page: the lexical analyser's stop words (:data:`STOPWORDS`, which
keeps "can" and "my" as terms) and the rest of a common English list (NLTK's), so that the
marks fall on what the question is about."""


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


class _Judging:
    def __init__(self, path: Path, corpus: Corpus, assessor: str, scale: Sequence[int]) -> None:
        self.path = path
        self.documents = {doc.id: doc for doc in corpus}
        self.assessor = assessor
        self.scale = tuple(scale)
        self.lock = threading.Lock()
        self.shown: dict[tuple[str, str], dict[str, Any]] = {}

    def _document(self, question_text: str, document: str) -> dict[str, Any]:
        key = (question_text, document)
        if key not in self.shown:
            doc = self.documents.get(document)
            if doc is None:
                self.shown[key] = {"title": "", "segments": [["(this document is not in the corpus)", False]]}
            else:
                terms = marked_terms(question_text)
                text = doc.text if len(doc.text) <= MAX_SHOWN_CHARS else doc.text[:MAX_SHOWN_CHARS] + " [...]"
                self.shown[key] = {
                    "title": doc.title,
                    "title_segments": highlighted(doc.title, terms),
                    "segments": highlighted(text, terms),
                }
        return self.shown[key]

    def state(self) -> dict[str, Any]:
        judgments = read_judgments(self.path, missing_ok=True)
        mine = judgments.by_assessor(self.assessor)
        suggested: dict[tuple[str, str], list[dict[str, Any]]] = {}
        for (question, document, model), suggestion in judgments.suggestions.items():
            grade = judgments.grades[(question, document, model)]
            suggested.setdefault((question, document), []).append(
                {
                    "assessor": model,
                    "grade": grade,
                    "spread": suggestion.spread,
                    "samples": len(suggestion.scores),
                    "unstable": suggestion.unstable,
                }
            )
        questions = []
        for question in judgments.questions():
            text = judgments.texts.get(question, "")
            documents = [
                {
                    "id": document,
                    "grade": mine.get((question, document)),
                    "suggestions": suggested.get((question, document), []),
                    **self._document(text, document),
                }
                for document in judgments.documents(question)
            ]
            questions.append({"id": question, "text": text, "documents": documents})
        labels = grade_labels(self.scale)
        return {
            "assessor": self.assessor,
            "file": str(self.path),
            "scale": [{"grade": g, "label": labels[g]} for g in self.scale],
            "questions": questions,
            "warnings": list(judgments.warnings),
        }

    def judge(self, body: Any) -> tuple[int, dict[str, Any]]:
        if not isinstance(body, dict):
            return 400, {"error": "expected a JSON object with question, document and grade"}
        question, document, grade = body.get("question"), body.get("document"), body.get("grade")
        if not isinstance(grade, int) or isinstance(grade, bool) or grade not in self.scale:
            return 400, {"error": f"grade must be one of {list(self.scale)}, got {grade!r}"}
        with self.lock:
            judgments = read_judgments(self.path, missing_ok=True)
            pair = (question, document)
            if not isinstance(question, str) or not isinstance(document, str) or pair not in judgments.pairs:
                return 400, {"error": f"({question!r}, {document!r}) is not a pooled pair of {self.path}"}
            line = JudgmentLine(
                question=question,
                document=document,
                grade=grade,
                assessor=self.assessor,
                judged_at=utc_now(),
                sources=judgments.pairs[(question, document)],
            )
            append_lines(self.path, [line])
        return 200, {"ok": True, "judged_at": line.judged_at}


def judging_app(path: Path, corpus: Corpus, assessor: str, scale: Sequence[int] = DEFAULT_SCALE) -> Starlette:
    """The judging page's app for the judgments file at ``path``."""
    judging = _Judging(path, corpus, assessor, scale)

    async def page(_request: Request) -> Response:
        config = json.dumps({"assessor": assessor}).replace("<", "\\u003c")
        return HTMLResponse(PAGE.replace("__CONFIG__", config))

    def state(_request: Request) -> Response:  # sync: Starlette runs it on a worker thread
        return JSONResponse(judging.state())

    async def judge(request: Request) -> Response:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "send the grade as application/json"}, status_code=415)
        try:
            body = await request.json()
        except ValueError:
            return JSONResponse({"error": "the body is not JSON"}, status_code=400)
        status, reply = judging.judge(body)
        return JSONResponse(reply, status_code=status)

    return Starlette(
        routes=[
            Route("/", page),
            Route("/api/state", state),
            Route("/api/judgments", judge, methods=["POST"]),
        ],
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=[HOST, "localhost"])],
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
.muted { color: #667; font-size: .9rem; }
</style>
</head>
<body>
<header><strong>goldeneval judge</strong><span id="progress" class="muted"></span></header>
<div id="question"></div>
<div id="pairs"></div>
<div id="doc"><div class="id" id="docid"></div><h2 id="title"></h2><div id="text"></div></div>
<div id="controls"></div>
<div id="suggestion"></div>
<label class="muted"><input type="checkbox" id="review"> review judged pairs too (r)</label>
<p class="muted" id="keys"></p>
<p id="status"></p>
<script>
"use strict";
const CONFIG = __CONFIG__;
let state = null, items = [], at = 0;
const $ = (id) => document.getElementById(id);

function fill(node, segments) {
  node.textContent = "";
  for (const [text, marked] of segments) {
    if (marked) { const m = document.createElement("mark"); m.textContent = text; node.appendChild(m); }
    else node.appendChild(document.createTextNode(text));
  }
}
function doc(item) { return state.questions[item.q].documents[item.d]; }
function reviewing() { return $("review").checked; }
function next(from) {
  // by default only unjudged pairs, from here on and then from the start; reviewing: every pair in order
  if (reviewing()) return from + 1 < items.length ? from + 1 : -1;
  for (let i = from + 1; i < items.length; i++) if (doc(items[i]).grade === null) return i;
  for (let i = 0; i < from; i++) if (doc(items[i]).grade === null) return i;
  return -1;
}
function firstUnjudged() {
  const i = items.findIndex((item) => doc(item).grade === null);
  return i < 0 ? 0 : i;
}
function render() {
  if (!items.length) { $("question").textContent = "Nothing pooled in " + state.file + " yet."; return; }
  const item = items[at], question = state.questions[item.q], d = doc(item);
  $("question").textContent = question.text || "(question " + question.id + ": its text is not in the file)";
  fill($("title"), d.title_segments || [[d.title, false]]);
  fill($("text"), d.segments);
  $("docid").textContent = question.id + " / " + d.id;
  const judgedHere = question.documents.filter((x) => x.grade !== null).length;
  const judged = items.filter((x) => doc(x).grade !== null).length;
  $("progress").textContent = "Question " + (item.q + 1) + " of " + state.questions.length +
    " \\u00b7 document " + (item.d + 1) + " of " + question.documents.length +
    " \\u00b7 " + judgedHere + " of " + question.documents.length + " judged here" +
    " \\u00b7 " + judged + " of " + items.length + " judged overall \\u00b7 assessor " + state.assessor;
  const pairs = $("pairs"); pairs.textContent = "";
  question.documents.forEach((x, i) => {
    const s = document.createElement("span");
    s.textContent = x.id + (x.grade === null ? "" : " = " + x.grade);
    if (x.grade !== null) s.classList.add("judged");
    if (i === item.d) s.classList.add("current");
    s.onclick = () => { at = items.findIndex((y) => y.q === item.q && y.d === i); render(); };
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
async function grade(value) {
  if (!items.length) return;
  const item = items[at], question = state.questions[item.q], d = doc(item);
  const reply = await fetch("/api/judgments", {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({question: question.id, document: d.id, grade: value}),
  });
  if (!reply.ok) { $("status").textContent = "not saved: " + (await reply.json()).error; return; }
  $("status").textContent = "";
  d.grade = value;
  const i = next(at);
  if (i >= 0) at = i; else if (items.every((x) => doc(x).grade !== null)) $("status").textContent = "All judged.";
  render();
}
function skip() { const i = next(at); if (i >= 0) { at = i; render(); } }
function back() { if (at > 0) { at -= 1; render(); } }
async function load() {
  const reply = await fetch("/api/state");
  state = await reply.json();
  items = [];
  state.questions.forEach((q, qi) => q.documents.forEach((_, di) => items.push({q: qi, d: di})));
  const controls = $("controls"); controls.textContent = "";
  for (const {grade: g, label} of state.scale) {
    const b = document.createElement("button");
    b.dataset.grade = g; b.textContent = g + " " + label; b.onclick = () => grade(g);
    controls.appendChild(b);
  }
  for (const [label, action] of [["skip (s)", skip], ["back (b)", back]]) {
    const b = document.createElement("button"); b.textContent = label; b.onclick = action; controls.appendChild(b);
  }
  $("keys").textContent = "Keys: " + state.scale.map((s) => s.grade + " " + s.label).join(", ") +
    "; s or \\u2192 next (unjudged only, unless reviewing); b or \\u2190 back; r review judged pairs too.";
  if (state.warnings.length) $("status").textContent = state.warnings.join(" ");
  at = firstUnjudged();
  render();
}
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey || !state) return;
  const g = state.scale.find((s) => String(s.grade) === event.key);
  if (g) { grade(g.grade); event.preventDefault(); }
  else if (event.key === "s" || event.key === "ArrowRight") skip();
  else if (event.key === "b" || event.key === "ArrowLeft") back();
  else if (event.key === "r") { $("review").checked = !$("review").checked; }
});
load();
</script>
</body>
</html>
"""
