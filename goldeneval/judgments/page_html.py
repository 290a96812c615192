"""The judging page's HTML: one page of plain JavaScript over the JSON endpoints of
:mod:`goldeneval.judgments.page`."""

__all__ = ["PAGE"]

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
