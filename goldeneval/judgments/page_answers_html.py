"""The answer judging page's HTML (:mod:`goldeneval.judgments.page_answers`): one answer at a
time, a verdict by button or key (c, i, a), the next answer after each verdict."""

__all__ = ["ANSWER_PAGE"]

ANSWER_PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>goldeneval judge answers</title>
<style>
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 60rem; padding: 1rem; color: #222; }
header { display: flex; justify-content: space-between; align-items: baseline; gap: 1rem; flex-wrap: wrap; }
.box { margin: .5rem 0; padding: .75rem; border-radius: 6px; white-space: pre-wrap; }
#question { font-size: 1.2rem; background: #f3f6fa; }
#reference { background: #f6f6ee; }
#answer { border: 1px solid #ccd; }
#passages div { border-left: 3px solid #ccd; margin: .5rem 0; padding: .3rem .6rem; white-space: pre-wrap;
  font-size: .9rem; max-height: 12rem; overflow-y: auto; }
#controls { margin: 1rem 0; display: flex; gap: .5rem; flex-wrap: wrap; }
button { font-size: 1rem; padding: .4rem .8rem; cursor: pointer; }
button.chosen { outline: 3px solid #2a6; }
#answers span { display: inline-block; margin: 2px; padding: 1px 6px; border-radius: 4px; background: #eee;
  font-size: .8rem; cursor: pointer; }
#answers span.judged { background: #cfe8d4; }
#answers span.current { outline: 2px solid #36c; }
#status { color: #a33; min-height: 1.2rem; }
#withheld { font-size: 1.1rem; padding: 1rem; background: #fdecea; border-radius: 6px; }
.label { color: #667; font-size: .85rem; }
</style>
</head>
<body>
<header><strong>goldeneval judge answers</strong><span id="progress" class="label"></span></header>
<div id="withheld" hidden></div>
<main id="main" hidden>
<div id="answers"></div>
<div class="label">question</div><div id="question" class="box"></div>
<div class="label">reference answer</div><div id="reference" class="box"></div>
<div class="label">the model's answer</div><div id="answer" class="box"></div>
<div id="controls"></div>
<div id="status"></div>
<div class="label" id="passages-label">passages the model answered from</div><div id="passages"></div>
</main>
<script>
"use strict";
let state = null, at = 0, shown = null;
const KEYS = {c: "correct", i: "incorrect", a: "abstained"};
function text(id, value) { document.getElementById(id).textContent = value; }
async function load() {
  state = await (await fetch("/api/answers/state")).json();
  text("progress", "run " + state.run.slice(0, 12) + " (" + state.kind + ", set " + state.set + ") as " +
    state.assessor + ": " + state.judged + " of " + state.answers.length + " judged");
  if (state.withheld) {
    const box = document.getElementById("withheld");
    box.textContent = state.withheld;
    box.hidden = false;
    return;
  }
  document.getElementById("main").hidden = false;
  const first = state.answers.findIndex(a => a[1] === null);
  await show(first < 0 ? 0 : first);
}
function strip() {
  const list = document.getElementById("answers");
  list.replaceChildren(...state.answers.map((a, n) => {
    const span = document.createElement("span");
    span.textContent = a[0];
    span.className = (a[1] ? "judged" : "") + (n === at ? " current" : "");
    span.title = a[1] || "not judged";
    span.onclick = () => show(n);
    return span;
  }));
}
async function show(n) {
  if (!state.answers.length) { text("status", "this run has no answer to judge"); return; }
  at = n;
  shown = await (await fetch("/api/answers/item?index=" + n)).json();
  text("question", shown.question);
  text("reference", shown.reference === null ? "(no reference)" : shown.reference);
  text("answer", shown.answer);
  const passages = document.getElementById("passages");
  passages.replaceChildren(...shown.passages.map((p, k) => {
    const div = document.createElement("div");
    div.textContent = "[" + (k + 1) + "] " + (p.title || p.id) + "\\n" + p.text;
    return div;
  }));
  document.getElementById("passages-label").hidden = !shown.passages.length;
  const controls = document.getElementById("controls");
  controls.replaceChildren(...state.verdicts.map(v => {
    const button = document.createElement("button");
    button.textContent = v + " (" + v[0] + ")";
    button.dataset.verdict = v;
    if (shown.verdict === v) button.className = "chosen";
    button.onclick = () => record(v);
    return button;
  }));
  text("status", "");
  strip();
}
async function record(verdict) {
  const reply = await fetch("/api/answers/verdicts", {
    method: "POST", headers: {"Content-Type": "application/json"},
    body: JSON.stringify({question: shown.id, verdict: verdict})});
  const body = await reply.json();
  if (!reply.ok) { text("status", body.error); return; }
  if (state.answers[at][1] === null) state.judged += 1;
  state.answers[at][1] = verdict;
  text("progress", "run " + state.run.slice(0, 12) + " as " + state.assessor + ": " + state.judged + " of " +
    state.answers.length + " judged");
  await show(at + 1 < state.answers.length ? at + 1 : at);
}
document.addEventListener("keydown", e => {
  if (e.target.tagName === "INPUT" || !shown || state.withheld) return;
  if (KEYS[e.key]) record(KEYS[e.key]);
  else if (e.key === "ArrowRight" && at + 1 < state.answers.length) show(at + 1);
  else if (e.key === "ArrowLeft" && at > 0) show(at - 1);
});
load();
</script>
</body>
</html>
"""
