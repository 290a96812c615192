"""A comparison as the description of a regression check (the Dagster ``no_regression`` check).

The description is what the Dagster UI shows beside a check's execution (the checks tab and
its execution history render it as Markdown, with "show more" past a few lines), so it is
short: the verdict in one line, then at most ``limit`` newly failing questions, each with its
text and what came back instead (both runs' top documents with their titles, or an answer),
then ``... and N more`` and where the HTML report of the run is.  It reads a
:class:`~goldeneval.report.model.RunComparison` and decides nothing.

Question text, titles, document ids and answers are user data: each is escaped and flattened
to one line (:func:`goldeneval.report.markdown.escape_markdown`), so it renders as text.  Under
``metadata_only`` (``comparison.privacy``) none of them is shown, only question ids (ADR-215
allows them), the rates that flipped and ranks, and the description says what is withheld.
"""

from __future__ import annotations

from goldeneval.core.manifest import listed
from goldeneval.core.privacy import PrivacyMode
from goldeneval.report.markdown import escape_markdown
from goldeneval.report.model import QuestionRow, RunComparison, Side

__all__ = ["CHECK_LIMIT", "CHECK_TOP_DOCUMENTS", "WITHHELD", "check_description"]

CHECK_LIMIT = 5
"""Newly failing questions a check's description lists by default."""
CHECK_TOP_DOCUMENTS = 3
"""Top documents of each run shown per question."""
_TEXT_CHARS = 200
_LABEL_CHARS = 80
_ANSWER_CHARS = 160
_NOTE_CHARS = 300
WITHHELD = "Question text, document ids, titles and answers are withheld (metadata_only): question ids only."


def _code(text: str) -> str:
    """``text`` as a Markdown code span (a path: shown as it is, and copied as it is)."""
    return f"`` {text} ``" if "`" in text else f"`{text}`"


def _document(comparison: RunComparison, document: str) -> str:
    """A document id with its title (cut to fit) where the corpus is at hand."""
    info = comparison.documents.get(document)
    label = escape_markdown(document, limit=_LABEL_CHARS)
    return f"{label} ({escape_markdown(info.title, limit=_LABEL_CHARS)})" if info is not None and info.title else label


def _side(comparison: RunComparison, side: Side | None, content: bool) -> str:
    """What one run returned for a question: its top documents and its answer (``content``
    only), its score; empty when nothing of it may be shown."""
    if side is None:
        return "not in this run"
    if side.status == "error":
        return "error" + (f" ({escape_markdown(side.error, limit=_NOTE_CHARS)})" if side.error and content else "")
    parts: list[str] = []
    if content and side.documents is not None:
        shown = [_document(comparison, d) for d in side.documents[:CHECK_TOP_DOCUMENTS]]
        parts.append(", ".join(shown) if shown else "nothing")
    if content and side.answer is not None:
        parts.append(f'answer "{escape_markdown(side.answer, limit=_ANSWER_CHARS)}"')
    if side.score is not None:
        parts.append(f"score {side.score:.3f}")
    return "; ".join(parts)


def _at(rank: int | None) -> str:
    return "not found" if rank is None else f"rank {rank}"


def _rank(row: QuestionRow) -> str:
    before = row.earlier.first_relevant if row.earlier is not None else None
    now = row.current.first_relevant if row.current is not None else None
    if before is None and now is None:
        return ""
    return f" First relevant document: {_at(now)} (was {_at(before)})."


def _question(comparison: RunComparison, row: QuestionRow, content: bool) -> str:
    line = f"- {escape_markdown(row.id, limit=_LABEL_CHARS)}"
    if content and row.text is not None:
        line += f' "{escape_markdown(row.text, limit=_TEXT_CHARS)}"'
    if row.flipped:
        line += f" ({escape_markdown(', '.join(row.flipped), limit=_NOTE_CHARS)})"
    now, before = _side(comparison, row.current, content), _side(comparison, row.earlier, content)
    if now or before:
        line += f": now {now or '-'}; before {before or '-'}."
    return line + _rank(row)


def check_description(comparison: RunComparison, *, limit: int = CHECK_LIMIT, report_path: str | None) -> str:
    """The check's description: the verdict's summary line (on a mismatch, then the
    informational comparison of the unchanged questions, marked so), at most ``limit`` newly failing
    questions with their text and both runs' top documents (``... and N more`` after them), and
    where the HTML report is (``report_path``; None: none was written)."""
    c = comparison
    content = c.privacy is PrivacyMode.FULL
    lines = [c.verdict.summary]
    unchanged = c.verdict.informational
    if unchanged is not None:
        lines += ["", f"{escape_markdown(unchanged.heading[0].upper() + unchanged.heading[1:])}:", ""]
        for rate in unchanged.rates:
            line = f"- {escape_markdown(rate.describe(), limit=_NOTE_CHARS)}"
            if rate.newly_failing:
                ids = listed(rate.newly_failing, max(limit, 0))
                line += f"; newly failing: {escape_markdown(ids, limit=_NOTE_CHARS)}"
            lines.append(line)
    if c.earlier is not None:
        failing = c.newly_failing
        count = f"{len(failing)} question{'' if len(failing) == 1 else 's'}"
        informational = " (informational: no numeric verdict)" if c.informational else ""
        against = f"run {escape_markdown(c.earlier.id[:12])}"
        if failing:
            lines += ["", f"Newly failing against {against}: {count}{informational}.", ""]
            lines += [_question(c, row, content) for row in failing[: max(limit, 0)]]
            if len(failing) > limit:
                lines.append(f"- ... and {len(failing) - max(limit, 0)} more")
        else:
            lines += ["", f"No question fails now that passed in {against}."]
    notes = [note for note in c.notes if not (c.informational and note.startswith("no numeric verdict"))]
    if not content:
        notes = [WITHHELD]
    for note in notes:
        lines += ["", f"Note: {escape_markdown(note, limit=_NOTE_CHARS)}"]
    if report_path is not None:
        lines += ["", f"HTML report: {_code(report_path)}"]
    return "\n".join(lines)
