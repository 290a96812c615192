"""The self-contained HTML report of a comparison: one file that opens offline.

:func:`write_report` renders a :class:`~goldeneval.report.model.RunComparison` into one
HTML file: the verdict and why, every measure with its change, the paired tests (McNemar p and
the bootstrap interval of each binary rate), the slices of both runs, the series' trend, and a
table of every question with both rankings side by side.  Nothing leaves the page: the styles,
the scripts (the table's own and Bokeh's, inline), the charts (Bokeh documents) and the data are
in the file, so a CI artifact or an e-mailed report shows what the terminal shows.  Like every
renderer it decides nothing: what it shows is the comparison's.

The questions are embedded once, as columns (:func:`question_columns`): one array per field,
document ids, titles and snippets in one dictionary that the rankings index into, so 100,000
questions stay a few megabytes.  The page's script shows them a page at a time; it never builds
a row per question.  Every piece of user data is escaped: the template autoescapes, and the JSON
in ``<script type="application/json">`` escapes ``<``, ``>`` and ``&`` (:func:`script_json`).
Under ``metadata_only`` the comparison holds no text, no document and no answer, and the page
says what it cannot show instead.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from importlib.resources import files
from pathlib import Path
from typing import Any

from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.stats import PairedComparison
from goldeneval.report.charts import CHART_SLICES, bokeh_js, slice_chart, trend_chart
from goldeneval.report.files import write_whole
from goldeneval.report.model import Flip, QuestionRow, RunComparison, Side
from goldeneval.report.text import number_text, run_label

__all__ = [
    "CHART_SLICES",
    "REPORT_FORMAT_VERSION",
    "question_columns",
    "render_report",
    "script_json",
    "write_report",
]

REPORT_FORMAT_VERSION = 1
"""The version of the page's embedded question columns (:func:`question_columns`)."""
_FLIPS = tuple(flip.value for flip in Flip)
_SIDES = ("earlier", "current")
_TEMPLATES = "templates"


# --------------------------------------------------------------------------- escaping


_SCRIPT_ESCAPES = (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"), ("\u2029", "\\u2029"))


def script_json(value: object) -> str:
    """``value`` as JSON that is safe inside ``<script type="application/json">``: no ``</``,
    no ``<!--``, no ``&`` left for the HTML parser to read (each as a JSON ``\\u`` escape, which
    ``JSON.parse`` reads back unchanged)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    for character, escaped in _SCRIPT_ESCAPES:
        if character in text:
            text = text.replace(character, escaped)
    return text


# --------------------------------------------------------------------------- the questions


class _Dictionary:
    """Strings as indexes into one list, each string stored once."""

    def __init__(self) -> None:
        self._index: dict[str, int] = {}

    @property
    def values(self) -> list[str]:
        return list(self._index)  # in the order the codes were given

    def code(self, value: str | None) -> int:
        if value is None:
            return -1
        index = self._index
        return index.setdefault(value, len(index))

    def codes(self, values: Iterable[str]) -> list[int]:
        index = self._index
        return [index.setdefault(value, len(index)) for value in values]


def _outcome(value: bool | None) -> int | None:
    return None if value is None else int(value)


def _ranks_mask(ranks: Iterable[int] | None) -> int | None:
    """Ranks (1-based) as a bit mask: rank r is bit r - 1."""
    if ranks is None:
        return None
    mask = 0
    for rank in ranks:
        mask |= 1 << (rank - 1)
    return mask


def _sparse(values: list[Any]) -> list[Any] | None:
    """The column, or None where every value is None (a column the page then leaves out)."""
    return values if any(value is not None for value in values) else None


def _side_columns(
    rows: Sequence[QuestionRow],
    pick: Callable[[QuestionRow], Side | None],
    rates: int,
    documents: _Dictionary,
    statuses: _Dictionary,
) -> dict[str, Any]:
    status: list[int] = []
    outcomes: list[list[int | None]] = [[] for _ in range(rates)]
    docs: list[list[int] | None] = []
    first: list[int | None] = []
    depth: list[int | None] = []
    unjudged: list[int | None] = []
    relevant: list[int | None] = []
    answer: list[str | None] = []
    score: list[float | None] = []
    reason: list[str | None] = []
    error: list[str | None] = []
    for row in rows:
        side = pick(row)
        if side is None:
            status.append(-1)
            for column in outcomes:
                column.append(None)
            for values in (docs, first, depth, unjudged, relevant, answer, score, reason, error):
                values.append(None)
            continue
        status.append(statuses.code(side.status))
        for column, value in zip(outcomes, side.outcomes, strict=True):
            column.append(_outcome(value))
        docs.append(None if side.documents is None else documents.codes(side.documents))
        first.append(side.first_relevant)
        depth.append(side.depth)
        unjudged.append(_ranks_mask(side.unjudged))
        relevant.append(_ranks_mask(side.relevant))
        answer.append(side.answer)
        score.append(None if side.score is None or not math.isfinite(side.score) else side.score)
        reason.append(side.reason)
        error.append(side.error)
    return {
        "status": status,
        "outcomes": outcomes,
        "documents": _sparse(docs),
        "first_relevant": _sparse(first),
        "depth": _sparse(depth),
        "unjudged": _sparse(unjudged),
        "relevant": _sparse(relevant),
        "answer": _sparse(answer),
        "score": _sparse(score),
        "reason": _sparse(reason),
        "error": _sparse(error),
    }


def question_columns(comparison: RunComparison) -> dict[str, Any]:
    """Every question of the comparison as the page reads it: one array per field, aligned
    with ``id``; forms, hard classes, flips, statuses and documents as indexes into their
    dictionaries (-1: none); a rank set as a bit mask (rank r is bit r - 1); a column whose
    every value is None as null.  Titles and snippets are aligned with ``document_ids``."""
    c = comparison
    rows = c.questions
    forms, hard_classes, documents, statuses = _Dictionary(), _Dictionary(), _Dictionary(), _Dictionary()
    rate_bits = {name: 1 << i for i, name in enumerate(c.rates)}
    columns: dict[str, Any] = {
        "version": REPORT_FORMAT_VERSION,
        "rates": list(c.rates),
        "flips": list(_FLIPS),
        "id": [row.id for row in rows],
        "text": _sparse([row.text for row in rows]),
        "form": [forms.code(row.form) for row in rows],
        "hard_class": [hard_classes.code(row.hard_class) for row in rows],
        "flip": [_FLIPS.index(row.flip.value) for row in rows],
        "flipped": [sum(rate_bits.get(rate, 0) for rate in row.flipped) for row in rows],
        "rank_change": [row.rank_change for row in rows],
        "expected": _sparse([None if row.expected is None else documents.codes(row.expected) for row in rows]),
        "earlier": _side_columns(rows, lambda row: row.earlier, len(c.rates), documents, statuses),
        "current": _side_columns(rows, lambda row: row.current, len(c.rates), documents, statuses),
    }
    document_ids = documents.values
    infos = [c.documents.get(document) for document in document_ids]
    columns.update(
        forms=forms.values,
        hard_classes=hard_classes.values,
        statuses=statuses.values,
        document_ids=document_ids,
        titles=[None if info is None else info.title for info in infos],
        snippets=[None if info is None else info.snippet for info in infos],
    )
    return columns


# --------------------------------------------------------------------------- the page


@cache
def _environment() -> Any:
    import jinja2

    return jinja2.Environment(
        loader=jinja2.PackageLoader("goldeneval.report", _TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


@cache
def _asset(name: str) -> str:
    text = (files("goldeneval.report") / _TEMPLATES / name).read_text(encoding="utf-8")
    if "</script" in text.lower() or "</style" in text.lower():
        raise ValueError(f"{name} must not close its own element")
    return text


def _interval(paired: PairedComparison) -> str:
    """A slice's 95% bootstrap interval of the change and McNemar's p, as one cell shows them."""
    low, high = paired.interval
    return f"[{low:+.3f}, {high:+.3f}] p={paired.p_value:.3g}"


def _slice_rows(comparison: RunComparison) -> list[dict[str, Any]]:
    rows = []
    for row in comparison.slices:
        cells: dict[str, Any] = {"kind": row.kind, "value": row.value, "rates": []}
        tested = {paired.rate: paired for paired in row.paired}
        for column in ("pass_rate", "mean_score"):
            then_value = None if row.earlier is None else getattr(row.earlier, column)
            now_value = None if row.current is None else getattr(row.current, column)
            change = None if then_value is None or now_value is None else now_value - then_value
            paired = tested.get(comparison.rate_names[column])
            interval = "" if paired is None else _interval(paired)
            cells["rates"].append(
                (number_text(then_value), number_text(now_value), number_text(change, signed=True), interval)
            )
        cells["scored"] = "-" if row.current is None else f"{row.current.scored} of {row.current.questions}"
        cells["scored_before"] = "-" if row.earlier is None else f"{row.earlier.scored} of {row.earlier.questions}"
        rows.append(cells)
    return rows


def _page_context(comparison: RunComparison) -> dict[str, Any]:
    c = comparison
    verdict = c.verdict
    withheld = c.privacy is PrivacyMode.METADATA_ONLY
    coverage = None
    if verdict.coverage is not None:
        note = verdict.coverage
        coverage = {
            "before": number_text(note.baseline),
            "now": number_text(note.candidate),
            "newly_unjudged": note.newly_unjudged,
            "hint": note.hint if note.newly_unjudged else None,
        }
    charts = {"trend": trend_chart(c), "slices": slice_chart(c)}
    return {
        "c": c,
        "title": f"goldeneval report: {c.current.set_id}",
        "earlier_label": None if c.earlier is None else run_label(c.earlier),
        "current_label": run_label(c.current),
        "verdict": verdict,
        "status": verdict.status.value,
        "regressed_slices": [change.describe() for change in verdict.slice_changes if change.regressed],
        "coverage": coverage,
        "withheld": withheld,
        "measures": [
            {
                "name": m.name,
                "before": number_text(m.earlier),
                "now": number_text(m.current),
                "change": number_text(m.change, signed=True),
                "gated": m.gated,
            }
            for m in c.measures
        ],
        "paired": [
            {
                "rate": p.rate,
                "questions": p.questions,
                "failing": len(p.newly_failing),
                "passing": len(p.newly_passing),
                "p": f"{p.p_value:.3g}",
                "low": f"{p.interval[0]:+.3f}",
                "high": f"{p.interval[1]:+.3f}",
            }
            for p in c.paired
        ],
        "rate_names": (c.rate_names.get("pass_rate", "pass_rate"), c.rate_names.get("mean_score", "mean_score")),
        "slices": _slice_rows(c),
        "trend_count": len(c.trend),
        "trend_breaks": sum(point.break_before for point in c.trend),
        "counts": {flip.value: len(c.flipped(flip)) for flip in Flip},
        "question_count": len(c.questions),
        "css": _asset("report.css"),
        "report_js": _asset("report.js"),
        "bokeh_js": bokeh_js() if any(charts.values()) else "",
        "charts_json": script_json(charts),
        "data_json": script_json(question_columns(c)),
        "meta_json": script_json(
            {
                "withheld": withheld,
                "informational": c.informational,
                "has_earlier": c.earlier is not None,
                "kind": c.kind,
            }
        ),
    }


def render_report(comparison: RunComparison) -> str:
    """The report's HTML (:func:`write_report` writes it)."""
    from markupsafe import Markup

    context = _page_context(comparison)
    for key in ("css", "report_js", "bokeh_js", "charts_json", "data_json", "meta_json"):
        context[key] = Markup(context[key])  # our own files, and JSON escaped by script_json
    html: str = _environment().get_template("report.html.j2").render(context)
    return html


def write_report(comparison: RunComparison, out: Path) -> Path:
    """Write the comparison's self-contained HTML report to ``out`` whole or not at all (its
    folder is created: :func:`goldeneval.report.files.write_whole`); returns ``out``."""
    return write_whole(out, render_report(comparison).encode("utf-8"))
