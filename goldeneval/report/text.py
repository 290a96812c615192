"""A comparison for terminals (a text table) and for machines (``--format json``).

Both read a :class:`~goldeneval.report.model.RunComparison` and decide nothing: the
verdict, the intervals and the flipped questions are the comparison's.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from goldeneval.core.errors import printable
from goldeneval.core.records import StoredRun
from goldeneval.core.report import verdict_lines
from goldeneval.report.model import (
    COMPARISON_FORMAT_VERSION,
    Flip,
    MeasureChange,
    QuestionRow,
    RunComparison,
    Side,
)

__all__ = [
    "DEFAULT_LISTED",
    "comparison_json",
    "document_label",
    "number_text",
    "render_comparison",
    "run_label",
    "side_json",
]

DEFAULT_LISTED = 50
"""Flipped questions the text lists in full (the JSON lists every question)."""


def number_text(value: float | None, signed: bool = False) -> str:
    """A rate or its change as every renderer shows it: three places, ``-`` when absent."""
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def run_label(run: StoredRun) -> str:
    """``<id prefix> <series> (<created>)``: how a comparison names a run."""
    return f"{run.id[:12]} {run.model} ({run.created_at:%Y-%m-%d %H:%M})"


def document_label(comparison: RunComparison, document: str) -> str:
    """A document id with its title where the corpus is at hand."""
    info = comparison.documents.get(document)
    return f"{document} ({info.title})" if info is not None and info.title else document


def _mark(value: bool | None) -> str:
    return "-" if value is None else ("hit" if value else "miss")


def _side_line(comparison: RunComparison, side: Side | None, who: str) -> str:
    if side is None:
        return f"    {who}: not in this run"
    if side.status == "error":
        return f"    {who}: ERROR {side.error or ''}".rstrip()
    outcomes = ", ".join(f"{name} {_mark(value)}" for name, value in zip(comparison.rates, side.outcomes, strict=True))
    parts = [outcomes]
    if side.first_relevant is not None:
        parts.append(f"first relevant at rank {side.first_relevant}")
    if side.unjudged:
        parts.append(f"unjudged ranks {', '.join(map(str, side.unjudged))}")
    if side.score is not None:
        parts.append(f"score {side.score:.3f}")
    line = f"    {who}: " + "; ".join(parts)
    if side.documents is not None:
        relevant = side.relevant or ()
        shown = [
            document_label(comparison, d) + (" [relevant]" if rank in relevant else "")
            for rank, d in enumerate(side.documents[:3], 1)
        ]
        line += "\n      top: " + (" | ".join(shown) if shown else "(nothing returned)")
    if side.answer is not None:
        line += f"\n      answer: {side.answer}"
    if side.reason:
        line += f"\n      reason: {side.reason}"
    return line


def _question_block(comparison: RunComparison, row: QuestionRow) -> list[str]:
    where = ", ".join(part for part in (row.form, row.hard_class) if part)
    head = f"  {row.id}" + (f" [{where}]" if where else "")
    if row.flipped:
        head += f" ({', '.join(row.flipped)})"
    lines = [head]
    if row.text is not None:
        lines.append(f"    {row.text}")
    if row.expected:
        lines.append("    expected: " + " | ".join(document_label(comparison, d) for d in row.expected))
    lines.append(_side_line(comparison, row.earlier, "before"))
    lines.append(_side_line(comparison, row.current, "now"))
    return [printable(line) if not line.isprintable() and "\n" not in line else line for line in lines]


def _measure_rows(measures: Sequence[MeasureChange]) -> list[str]:
    width = max((len(m.name) for m in measures), default=6)
    lines = [f"  {'measure'.ljust(width)}  {'before':>7}  {'now':>7}  {'change':>7}"]
    for m in measures:
        gated = "  (gated)" if m.gated else ""
        lines.append(
            f"  {m.name.ljust(width)}  {number_text(m.earlier):>7}  {number_text(m.current):>7}  "
            f"{number_text(m.change, signed=True):>7}{gated}"
        )
    return lines


def render_comparison(comparison: RunComparison, *, limit: int = DEFAULT_LISTED) -> str:
    """The comparison as a person reads it in a terminal: the verdict and why, every measure
    with its change, the slices that moved, and the flipped questions with their text and
    both rankings (at most ``limit`` of each kind of flip; the JSON has every question)."""
    c = comparison
    verdict = c.verdict
    lines = [f"goldeneval compare: set {c.current.set_id!r}"]
    if c.earlier is not None:
        lines.append(f"  before: {run_label(c.earlier)}")
    lines.append(f"  now:    {run_label(c.current)}")
    lines += ["", f"Verdict: {verdict.summary}", *verdict_lines(verdict, limit=limit)]
    lines += [f"Note: {note}" for note in c.notes]
    lines += ["", "Measures:", *_measure_rows(c.measures)]
    moved = [
        s
        for s in c.slices
        if s.earlier is not None
        and s.current is not None
        and (s.earlier.pass_rate != s.current.pass_rate or s.earlier.mean_score != s.current.mean_score)
    ]
    if moved:
        rate0, rate1 = c.rate_names["pass_rate"], c.rate_names["mean_score"]
        lines += ["", f"Slices that moved ({rate0}, {rate1}):"]
        for s in moved:
            assert s.earlier is not None and s.current is not None
            lines.append(
                f"  {s.kind} {s.value}: {number_text(s.earlier.pass_rate)} -> {number_text(s.current.pass_rate)}, "
                f"{number_text(s.earlier.mean_score)} -> {number_text(s.current.mean_score)} "
                f"({s.current.scored} scored)"
            )
    if c.earlier is not None:
        for flip, title in ((Flip.NEWLY_FAILING, "Newly failing"), (Flip.NEWLY_PASSING, "Newly passing")):
            rows = c.flipped(flip)
            marker = " (informational)" if c.informational else ""
            lines += ["", f"{title}{marker}: {len(rows)}"]
            for row in rows[:limit]:
                lines += _question_block(c, row)
            if len(rows) > limit:
                lines.append(f"  ... and {len(rows) - limit} more (--limit, or --format json for every question)")
        others = [r for r in c.questions if r.flip in (Flip.ONLY_CURRENT, Flip.ONLY_EARLIER)]
        if others:
            lines += ["", f"Scored by one run only: {', '.join(r.id for r in others[:limit])}"]
    return "\n".join(lines)


def side_json(side: Side | None, rates: Sequence[str]) -> dict[str, Any] | None:
    if side is None:
        return None
    document: dict[str, Any] = {
        "status": side.status,
        "outcomes": dict(zip(rates, side.outcomes, strict=True)),
        "documents": None if side.documents is None else list(side.documents),
        "first_relevant_rank": side.first_relevant,
        "depth": side.depth,
        "unjudged_ranks": None if side.unjudged is None else list(side.unjudged),
        "relevant_ranks": None if side.relevant is None else list(side.relevant),
    }
    if side.answer is not None or side.score is not None or side.reason is not None:
        document.update({"answer": side.answer, "score": side.score, "reason": side.reason})
    if side.error is not None:
        document["error"] = side.error
    return document


def _run_json(run: StoredRun | None) -> dict[str, Any] | None:
    if run is None:
        return None
    return {
        "id": run.id,
        "created_at": run.created_at.isoformat(),
        "set_id": run.set_id,
        "series": run.model,
        "retriever_id": run.retriever_id,
        "grader": run.grader,
        "status": run.status,
        "pass_rate": run.pass_rate,
        "mean_score": run.mean_score,
        "questions": run.question_count,
        "benchmark_fingerprint": run.benchmark_fingerprint,
        "variant_fingerprint": run.variant_fingerprint,
        "privacy": run.privacy,
    }


def comparison_json(comparison: RunComparison) -> dict[str, Any]:
    """The ``--format json`` document of a comparison (docs/reference/json-output.md)."""
    c = comparison
    return {
        "format_version": COMPARISON_FORMAT_VERSION,
        "kind": c.kind,
        "earlier": _run_json(c.earlier),
        "current": _run_json(c.current),
        "verdict": c.verdict.to_dict(),
        "informational": c.informational,
        "privacy": c.privacy.value,
        "notes": list(c.notes),
        "rates": list(c.rates),
        "measures": [
            {"name": m.name, "earlier": m.earlier, "current": m.current, "change": m.change, "gated": m.gated}
            for m in c.measures
        ],
        "paired": [p.to_dict() for p in c.paired],
        "slices": [
            {
                "kind": s.kind,
                "value": s.value,
                **{
                    who: None
                    if rates is None
                    else {
                        "questions": rates.questions,
                        "scored": rates.scored,
                        "pass_rate": rates.pass_rate,
                        "mean_score": rates.mean_score,
                    }
                    for who, rates in (("earlier", s.earlier), ("current", s.current))
                },
                "paired": [p.to_dict() for p in s.paired],
            }
            for s in c.slices
        ],
        "questions": [
            {
                "id": row.id,
                "text": row.text,
                "form": row.form,
                "hard_class": row.hard_class,
                "flip": row.flip.value,
                "flipped_rates": list(row.flipped),
                "informational": row.informational,
                "rank_change": row.rank_change,
                "expected": None if row.expected is None else list(row.expected),
                "earlier": side_json(row.earlier, c.rates),
                "current": side_json(row.current, c.rates),
            }
            for row in c.questions
        ],
        "documents": {doc: {"title": info.title, "snippet": info.snippet} for doc, info in c.documents.items()},
        "trend": [
            {
                "run_id": p.run_id,
                "created_at": p.created_at.isoformat(),
                "status": p.status,
                "pass_rate": p.pass_rate,
                "mean_score": p.mean_score,
                "benchmark_fingerprint": p.benchmark_fingerprint,
                "break_before": p.break_before,
            }
            for p in c.trend
        ],
    }
