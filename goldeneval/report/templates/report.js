/* goldeneval report: the question table. The questions are columns (goldeneval.report.html
   question_columns); a page of rows is built at a time, never a row per question. Every value
   reaches the page as text (textContent), never as markup. */
(function () {
  "use strict";
  var PAGE = 100;
  var SHOWN_TOP = 3;
  var meta = JSON.parse(document.getElementById("ge-meta").textContent);
  var d = JSON.parse(document.getElementById("ge-data").textContent);
  var n = d.id.length;
  var FLIP = {};
  d.flips.forEach(function (name, i) { FLIP[name] = i; });
  var state = { flip: "all", unjudged: false, form: -1, hard: -1, sort: "set", find: "", page: 0 };
  var open = {};
  var order = null;

  function el(tag, text, cls) {
    var e = document.createElement(tag);
    if (text !== undefined && text !== null) { e.textContent = String(text); }
    if (cls) { e.className = cls; }
    return e;
  }
  function column(side, name) { return d[side][name]; }
  function at(side, name, i) { var c = column(side, name); return c ? c[i] : null; }
  function present(side, i) { return d[side].status[i] >= 0; }
  function unjudgedAt(i) {
    var a = at("earlier", "unjudged", i), b = at("current", "unjudged", i);
    return (a !== null && a !== 0) || (b !== null && b !== 0);
  }
  function mark(v) { return v === null ? "–" : (v ? "✓" : "✗"); }
  function outcomes(side, i) {
    if (!present(side, i)) { return "not in this run"; }
    var status = d.statuses[d[side].status[i]];
    if (status === "error") { return "error"; }
    var parts = d[side].outcomes.map(function (c) { return mark(c[i]); });
    return parts.join(" ") + (status !== "ok" ? " (" + status + ")" : "");
  }
  function rankText(side, i) {
    if (!present(side, i)) { return "–"; }
    var r = at(side, "first_relevant", i);
    return r === null ? "none" : String(r);
  }

  function fill(select, names) {
    names.forEach(function (name, i) {
      var o = el("option", name); o.value = String(i); select.appendChild(o);
    });
  }

  function matches(i) {
    var f = d.flip[i];
    switch (state.flip) {
      case "flipped": if (f !== FLIP.newly_failing && f !== FLIP.newly_passing) { return false; } break;
      case "newly_failing": if (f !== FLIP.newly_failing) { return false; } break;
      case "newly_passing": if (f !== FLIP.newly_passing) { return false; } break;
      case "one_run": if (f !== FLIP.only_in_current && f !== FLIP.only_in_earlier) { return false; } break;
      default: break;
    }
    if (state.unjudged && !unjudgedAt(i)) { return false; }
    if (state.form >= 0 && d.form[i] !== state.form) { return false; }
    if (state.hard >= 0 && d.hard_class[i] !== state.hard) { return false; }
    if (state.find) {
      var needle = state.find;
      var hay = d.id[i].toLowerCase();
      if (hay.indexOf(needle) < 0 && !(d.text && d.text[i] && d.text[i].toLowerCase().indexOf(needle) >= 0)) {
        return false;
      }
    }
    return true;
  }

  function compute() {
    var picked = [];
    for (var i = 0; i < n; i++) { if (matches(i)) { picked.push(i); } }
    if (state.sort !== "set") {
      var sign = state.sort === "rank_worse" ? -1 : 1;
      picked.sort(function (a, b) {
        var x = d.rank_change[a], y = d.rank_change[b];
        if (x === null && y === null) { return a - b; }
        if (x === null) { return 1; }
        if (y === null) { return -1; }
        return sign * (x - y) || a - b;
      });
    }
    order = picked;
  }

  function documentRow(side, i, k, docIndex) {
    var li = el("li");
    var first = at(side, "first_relevant", i);
    var unjudged = at(side, "unjudged", i);
    var relevant = at(side, "relevant", i);
    var head = el("div", null, "doc-head");
    head.appendChild(el("span", "#" + (k + 1), "rank"));
    head.appendChild(el("code", d.document_ids[docIndex]));
    if (first === k + 1) { head.appendChild(el("span", "relevant (first)", "badge relevant")); }
    else if (relevant !== null && (relevant & (1 << k))) { head.appendChild(el("span", "relevant", "badge relevant")); }
    if (unjudged !== null && k < SHOWN_TOP) {
      if (unjudged & (1 << k)) { head.appendChild(el("span", "unjudged", "badge unjudged")); }
      else { head.appendChild(el("span", "judged", "badge judged")); }
    }
    li.appendChild(head);
    var title = d.titles[docIndex], snippet = d.snippets[docIndex];
    if (title) { li.appendChild(el("div", title, "doc-title")); }
    if (snippet) { li.appendChild(el("div", snippet, "doc-snippet")); }
    return li;
  }

  function sideBlock(side, who, i) {
    var box = el("div", null, "side");
    box.appendChild(el("h4", who));
    if (!present(side, i)) { box.appendChild(el("p", "not in this run")); return box; }
    var status = d.statuses[d[side].status[i]];
    var facts = el("p", null, "facts");
    facts.textContent = d.rates.map(function (name, r) { return name + " " + mark(d[side].outcomes[r][i]); }).join("; ");
    var first = at(side, "first_relevant", i), depth = at(side, "depth", i);
    if (first !== null) { facts.textContent += "; first relevant at rank " + first; }
    else if (meta.kind === "retrieval") { facts.textContent += "; no relevant document found"; }
    if (depth !== null) { facts.textContent += " (ranking of " + depth + " documents)"; }
    var score = at(side, "score", i);
    if (score !== null) { facts.textContent += "; score " + score.toFixed(3); }
    if (status !== "ok") { facts.textContent += "; status " + status; }
    box.appendChild(facts);
    var error = at(side, "error", i);
    if (error) { box.appendChild(el("p", "error: " + error, "error")); }
    var docs = at(side, "documents", i);
    if (docs === null) {
      if (meta.withheld) { box.appendChild(el("p", "Documents withheld (metadata_only): not shown.", "withheld")); }
    } else if (docs.length === 0) {
      box.appendChild(el("p", "nothing returned"));
    } else {
      var list = el("ol", null, "docs");
      docs.forEach(function (docIndex, k) { list.appendChild(documentRow(side, i, k, docIndex)); });
      box.appendChild(list);
      if (first !== null && first > docs.length) {
        box.appendChild(el("p", "first relevant document at rank " + first + ", below the " + docs.length + " shown", "note"));
      }
    }
    var answer = at(side, "answer", i), reason = at(side, "reason", i);
    if (answer !== null) { box.appendChild(el("h5", "answer")); box.appendChild(el("p", answer, "answer")); }
    else if (meta.withheld && meta.kind !== "retrieval") { box.appendChild(el("p", "Answer withheld (metadata_only): not shown.", "withheld")); }
    if (reason) { box.appendChild(el("h5", "reason")); box.appendChild(el("p", reason, "reason")); }
    return box;
  }

  function detailRow(i) {
    var tr = el("tr", null, "detail");
    var td = el("td"); td.colSpan = 8;
    if (d.text && d.text[i]) { td.appendChild(el("p", d.text[i], "question-text")); }
    else if (meta.withheld) { td.appendChild(el("p", "Question text withheld (metadata_only): not shown.", "withheld")); }
    var expected = d.expected ? d.expected[i] : null;
    if (expected && expected.length) {
      var wanted = el("p", "expected: ", "note");
      expected.forEach(function (docIndex, k) {
        if (k) { wanted.appendChild(document.createTextNode(" | ")); }
        wanted.appendChild(el("code", d.document_ids[docIndex]));
        if (d.titles[docIndex]) { wanted.appendChild(document.createTextNode(" " + d.titles[docIndex])); }
      });
      td.appendChild(wanted);
    }
    var flipped = [];
    d.rates.forEach(function (name, r) { if (d.flipped[i] & (1 << r)) { flipped.push(name); } });
    if (flipped.length) { td.appendChild(el("p", "flipped: " + flipped.join(", "), "note")); }
    var both = el("div", null, "sides");
    if (meta.has_earlier) { both.appendChild(sideBlock("earlier", "before", i)); }
    both.appendChild(sideBlock("current", "now", i));
    td.appendChild(both);
    tr.appendChild(td);
    return tr;
  }

  function render() {
    var body = document.querySelector("#question-table tbody");
    var pages = Math.max(1, Math.ceil(order.length / PAGE));
    if (state.page >= pages) { state.page = pages - 1; }
    var start = state.page * PAGE, end = Math.min(order.length, start + PAGE);
    var fragment = document.createDocumentFragment();
    for (var p = start; p < end; p++) {
      var i = order[p];
      var tr = el("tr", null, "q-row flip-" + d.flips[d.flip[i]]);
      tr.dataset.index = String(i);
      tr.dataset.id = d.id[i];
      var first = el("td", null, "qid");
      var toggle = el("button", open[i] ? "▾" : "▸", "toggle");
      toggle.type = "button";
      toggle.setAttribute("aria-label", "show both rankings");
      first.appendChild(toggle);
      first.appendChild(el("code", d.id[i]));
      if (d.text && d.text[i]) { first.appendChild(el("div", d.text[i], "qtext")); }
      tr.appendChild(first);
      tr.appendChild(el("td", d.form[i] >= 0 ? d.forms[d.form[i]] : "–"));
      tr.appendChild(el("td", d.hard_class[i] >= 0 ? d.hard_classes[d.hard_class[i]] : "–"));
      tr.appendChild(el("td", d.flips[d.flip[i]].replace(/_/g, " "), "flip"));
      tr.appendChild(el("td", outcomes("earlier", i)));
      tr.appendChild(el("td", outcomes("current", i)));
      tr.appendChild(el("td", rankText("earlier", i) + " → " + rankText("current", i)));
      var change = d.rank_change[i];
      tr.appendChild(el("td", change === null ? "–" : (change > 0 ? "+" + change : String(change)), "num"));
      if (unjudgedAt(i)) { tr.classList.add("has-unjudged"); }
      fragment.appendChild(tr);
      if (open[i]) { fragment.appendChild(detailRow(i)); }
    }
    body.replaceChildren(fragment);
    document.getElementById("page").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
    document.getElementById("table-status").textContent = order.length === 0
      ? "No question matches."
      : "Showing " + (start + 1) + "–" + end + " of " + order.length + " matching questions (" + n + " in all). Click a row for both rankings.";
  }

  function update() { state.page = 0; compute(); render(); }

  var rateList = d.rates.join(", ");
  document.getElementById("before-head").textContent = "before (" + rateList + ")";
  document.getElementById("now-head").textContent = "now (" + rateList + ")";
  fill(document.getElementById("form-filter"), d.forms);
  fill(document.getElementById("hard-filter"), d.hard_classes);
  var measured = column("earlier", "unjudged") !== null || column("current", "unjudged") !== null;
  var unjudgedBox = document.getElementById("unjudged-filter");
  if (!measured) {
    unjudgedBox.disabled = true;
    unjudgedBox.parentNode.title = "neither run measured which of its top-3 documents were judged";
  }
  if (!meta.has_earlier) { document.getElementById("flip-filter").disabled = true; }
  document.getElementById("flip-filter").addEventListener("change", function (e) { state.flip = e.target.value; update(); });
  unjudgedBox.addEventListener("change", function (e) { state.unjudged = e.target.checked; update(); });
  document.getElementById("form-filter").addEventListener("change", function (e) { state.form = e.target.value === "" ? -1 : Number(e.target.value); update(); });
  document.getElementById("hard-filter").addEventListener("change", function (e) { state.hard = e.target.value === "" ? -1 : Number(e.target.value); update(); });
  document.getElementById("sort").addEventListener("change", function (e) { state.sort = e.target.value; update(); });
  document.getElementById("find").addEventListener("input", function (e) { state.find = e.target.value.trim().toLowerCase(); update(); });
  document.getElementById("prev").addEventListener("click", function () { if (state.page > 0) { state.page--; render(); } });
  document.getElementById("next").addEventListener("click", function () { state.page++; render(); });
  document.querySelector("#question-table tbody").addEventListener("click", function (e) {
    var row = e.target.closest("tr.q-row");
    if (!row) { return; }
    var i = Number(row.dataset.index);
    if (open[i]) { delete open[i]; } else { open[i] = true; }
    render();
  });
  compute();
  render();
  if (window.performance && performance.mark) { performance.mark("goldeneval-table-ready"); }
})();
