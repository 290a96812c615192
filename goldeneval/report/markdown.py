"""A comparison as Markdown: a GitHub job summary (``$GITHUB_STEP_SUMMARY``) or a pull-request comment.

It reads a :class:`~goldeneval.report.model.RunComparison` and decides nothing: the
verdict, the gate's decision, the p-values, the intervals and the newly failing questions are
the comparison's.  It shows the verdict in one line and which runs were compared, every rate
and rank metric with its change (the gated ones marked, the paired test of each binary rate
beside it), and the newly failing questions with their text and both runs' top documents.

Question text, titles and ids are user data: every piece of it is escaped (pipes, backticks,
emphasis, links, HTML, ``$`` math) and flattened to one line, so it renders as text inside its
table cell and never as markup.  The output stays bounded whatever the run's size: at most
``limit`` questions, each cell at most :data:`MAX_CELL_CHARS` characters, and the whole under
:data:`MAX_SUMMARY_BYTES` (GitHub refuses a job summary over 1 MiB).

Under ``metadata_only`` (``comparison.privacy``) no question text, document id, title or answer
is shown, only question ids (ADR-215 allows them) and counts; the notes say what is withheld.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from goldeneval.core.errors import printable
from goldeneval.core.gate import GateDecision
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.stats import PairedComparison
from goldeneval.report.files import write_whole
from goldeneval.report.model import MeasureChange, QuestionRow, RunComparison, Side
from goldeneval.report.text import document_label, number_text, run_label

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_CELL_CHARS",
    "MAX_SUMMARY_BYTES",
    "TOP_DOCUMENTS",
    "escape_markdown",
    "summary_markdown",
    "write_summary_md",
]

DEFAULT_LIMIT = 20
"""Newly failing questions listed in full by default."""
TOP_DOCUMENTS = 3
"""Top documents of each run shown per question (what the terminal report shows too)."""
MAX_CELL_CHARS = 300
"""Longest piece of user data (a question's text, a title, an answer) shown, in characters."""
MAX_SUMMARY_BYTES = 1_000_000
"""The summary's size limit in UTF-8 bytes, under GitHub's 1 MiB job-summary limit."""

_TRAILER_RESERVE = 4_000
"""Bytes kept free for what follows the question table (the ``... and N more`` line)."""
_MARKUP = re.compile(r"([\\`*_{}\[\]<>&|~!$#])")
"""What could make markup of inline text: emphasis, code, links and images, HTML and entities,
table cells, strikethrough, math (GitHub renders ``$...$``)."""


_MENTION = re.compile(r"(?<!\w)@(?=\w)")
"""An ``@`` where GitHub would read a mention (not inside a word: ``hit@10`` is no mention)."""


def escape_markdown(text: str, limit: int = MAX_CELL_CHARS) -> str:
    """``text`` as inline Markdown that renders as exactly that text, on one line: whitespace
    runs (newlines included) become one space, control characters are shown escaped, at most
    ``limit`` characters are kept (``…`` marks a cut), and every character that could start
    markup is backslash-escaped, ``|`` included, so it is safe inside a table cell; an ``@``
    that starts a mention is followed by a word joiner (U+2060), so a comment pings nobody."""
    raw = text[: limit * 8]  # bounded work for a huge text (a long whitespace run may hide its tail)
    line = printable(" ".join(raw.split()))
    if len(line) > limit or len(raw) < len(text):
        line = line[: limit - 1].rstrip() + "…"
    # a word joiner after each @ keeps GitHub from mentioning a person or a team a question names
    return _MENTION.sub("@\u2060", _MARKUP.sub(r"\\\1", line))


def _p_value(value: float) -> str:
    return f"{value:.3g}"


def _shows_content(comparison: RunComparison) -> bool:
    """Whether text, documents and answers may be shown: never under ``metadata_only``, even
    where a comparison built elsewhere still holds some."""
    return comparison.privacy is PrivacyMode.FULL


def _header(comparison: RunComparison) -> list[str]:
    c = comparison
    verdict = c.verdict
    gate = verdict.gate(c.current.complete)
    lines = [
        f"## goldeneval: {escape_markdown(c.kind)} run on set {escape_markdown(c.current.set_id)}",
        "",
        f"**{verdict.status.value}**: {escape_markdown(verdict.reason, limit=2_000)}",
        "",
    ]
    if c.earlier is not None:
        lines.append(
            f"- compared: {escape_markdown(run_label(c.current))} against {escape_markdown(run_label(c.earlier))}"
        )
        lines.append(f"- comparison state: {verdict.state.value}")
    else:
        lines.append(f"- run: {escape_markdown(run_label(c.current))} (no earlier run to compare with)")
    if verdict.treatment_change:
        lines.append(f"- treatment changed: {escape_markdown(verdict.treatment_change, limit=2_000)}")
    gate_words = "passes" if gate is GateDecision.PASS else f"fails ({gate.value})"
    lines.append(f"- regression gate: **{gate_words}**")
    if c.informational:
        lines.append(
            f"- no numeric verdict ({verdict.state.value}): the questions below are compared for information only"
        )
    notes = [note for note in c.notes if not (c.informational and note.startswith("no numeric verdict"))]
    lines += [f"- note: {escape_markdown(note, limit=2_000)}" for note in notes]
    return lines


def _measure_table(comparison: RunComparison) -> list[str]:
    paired = {p.rate: p for p in comparison.paired}
    lines = [
        "### Rates",
        "",
        "| measure | before | now | change | newly failing / passing | McNemar p "
        "| 95% bootstrap interval of the change |",
        "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
    ]
    for measure in comparison.measures:
        lines.append(_measure_row(measure, paired.get(measure.name)))
    if any(m.gated for m in comparison.measures):
        lines += ["", "(gated): a rate the regression gate reads."]
    if comparison.informational and comparison.paired:
        lines.append("The paired tests are computed for information: there is no numeric verdict.")
    return lines


def _measure_row(measure: MeasureChange, paired: PairedComparison | None) -> str:
    name = escape_markdown(measure.name) + (" **(gated)**" if measure.gated else "")
    cells = [name, number_text(measure.earlier), number_text(measure.current), number_text(measure.change, signed=True)]
    if paired is None:
        cells += ["", "", ""]
    else:
        low, high = paired.interval
        cells += [
            f"{len(paired.newly_failing)} / {len(paired.newly_passing)} of {paired.questions}",
            _p_value(paired.p_value),
            f"[{low:+.3f}, {high:+.3f}]",
        ]
    return "| " + " | ".join(cells) + " |"


def _outcomes(comparison: RunComparison, side: Side) -> str:
    marks = ("-" if value is None else ("hit" if value else "miss") for value in side.outcomes)
    return ", ".join(f"{escape_markdown(name)} {mark}" for name, mark in zip(comparison.rates, marks, strict=True))


def _side_cell(comparison: RunComparison, side: Side | None) -> str:
    """One run's view of a question in one table cell (``<br>`` between its lines)."""
    if side is None:
        return "not in this run"
    if side.status == "error":
        return "**error**" + (f": {escape_markdown(side.error)}" if side.error else "")
    parts = [_outcomes(comparison, side)]
    if side.first_relevant is not None:
        parts.append(f"first relevant at rank {side.first_relevant}")
    if side.score is not None:
        parts.append(f"score {side.score:.3f}")
    if _shows_content(comparison):
        if side.documents is not None:
            shown = side.documents[:TOP_DOCUMENTS]
            if shown:
                parts += [
                    f"{rank}\\. {escape_markdown(document_label(comparison, document))}"
                    for rank, document in enumerate(shown, 1)
                ]
            else:
                parts.append("(nothing returned)")
        if side.answer is not None:
            parts.append(f"answer: {escape_markdown(side.answer)}")
    return "<br>".join(parts)


def _question_table(comparison: RunComparison, rows: Sequence[QuestionRow], budget: int) -> tuple[list[str], int]:
    """The table of ``rows`` as far as ``budget`` bytes allow, and how many rows it holds."""
    text = _shows_content(comparison)
    head = ["question", *(["text"] if text else []), "rates that flipped", "before", "now"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    used = sum(len(line.encode()) + 1 for line in lines)
    shown = 0
    for row in rows:
        cells = [escape_markdown(row.id)]
        if text:
            cells.append("-" if row.text is None else escape_markdown(row.text))
        cells += [
            escape_markdown(", ".join(row.flipped)),
            _side_cell(comparison, row.earlier),
            _side_cell(comparison, row.current),
        ]
        line = "| " + " | ".join(cells) + " |"
        size = len(line.encode()) + 1
        if used + size > budget:
            break
        lines.append(line)
        used += size
        shown += 1
    return (lines if shown else []), shown


def _errored(comparison: RunComparison, limit: int) -> list[str]:
    errored = [row for row in comparison.questions if row.current is not None and row.current.status == "error"]
    if not errored:
        return []
    ids = ", ".join(escape_markdown(row.id, limit=200) for row in errored[:limit])
    more = f" and {len(errored) - limit} more" if len(errored) > limit else ""
    return ["", f"Errored in this run: {len(errored)}: {ids}{more}"]


def _questions(comparison: RunComparison, limit: int, budget: int) -> list[str]:
    c = comparison
    if c.earlier is None:
        return _errored(c, limit)
    failing = c.newly_failing
    title = f"### Newly failing questions: {len(failing)}"
    if c.informational:
        title += " (informational: no numeric verdict)"
    lines = [title, ""]
    if not failing:
        lines.append("No question fails now that passed before.")
    else:
        if not _shows_content(c):
            lines += ["Question text and documents are not shown (metadata_only): ids and outcomes only.", ""]
        table, shown = _question_table(c, failing[:limit], budget)
        lines += table
        if len(failing) > shown:
            why = "" if shown == min(len(failing), limit) else " (the summary's size limit)"
            lines += ["", f"... and {len(failing) - shown} more{why}"]
    passing = len(c.newly_passing)
    if passing:
        lines += ["", f"Newly passing: {passing} question{'s' if passing != 1 else ''}."]
    return lines + _errored(c, limit)


def summary_markdown(comparison: RunComparison, *, limit: int = DEFAULT_LIMIT) -> str:
    """The comparison as a Markdown summary: the verdict and which runs were compared, the rates
    table, and at most ``limit`` newly failing questions (then ``... and N more``).  Never more
    than :data:`MAX_SUMMARY_BYTES` UTF-8 bytes."""
    c = comparison
    limit = max(limit, 0)
    top = [*_header(c), "", *_measure_table(c), ""]
    head = "\n".join(top) + "\n"
    budget = MAX_SUMMARY_BYTES - len(head.encode()) - _TRAILER_RESERVE
    body = _questions(c, limit, budget)
    return (head + "\n".join(body)).rstrip("\n") + "\n"


def write_summary_md(comparison: RunComparison, path: Path | str, limit: int = DEFAULT_LIMIT) -> Path:
    """Write :func:`summary_markdown` to ``path`` atomically (a failed write leaves the file as
    it was); returns the path.  GitHub's ``$GITHUB_STEP_SUMMARY`` is appended to by convention:
    a caller that must keep earlier content there appends the text itself."""
    return write_whole(Path(path), summary_markdown(comparison, limit=limit).encode())
