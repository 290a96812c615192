"""Rendering an evaluated run for people (a text table) and for machines (JSON).

The JSON document is the CLI's ``--format json`` output; README.md documents each field.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from goldeneval.core.errors import printable
from goldeneval.core.regression import RegressionVerdict
from goldeneval.core.report import verdict_lines
from goldeneval.retrieval.details import (
    JUDGED_CUTOFF,
    QuestionColumns,
    RateDetail,
    RetrievalDetails,
    retrieval_details,
)
from goldeneval.retrieval.metrics import parse_metric
from goldeneval.retrieval.protocol import TOP_K
from goldeneval.store import Acceptance, StoredRun, StoreLocation

__all__ = [
    "JSON_FORMAT_VERSION",
    "JUDGED_DEFINITION",
    "MEAN_OVER",
    "MEAN_OVER_ALL_JUDGED",
    "judged_measurement",
    "judged_values",
    "measurement",
    "outcome_json",
    "render_outcome",
    "render_runs",
    "runs_json",
    "verdict_lines",
]

JSON_FORMAT_VERSION = 1


def _rate(value: float | None) -> str:
    return "   n/a" if value is None else f"{value:6.3f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in headers]
    return _column_table(headers, columns)


def _column_table(headers: Sequence[str], columns: Sequence[list[str]]) -> list[str]:
    """A text table from its columns (a 100,000-question run is 700,000 cells: each column is
    checked for control characters in one pass, and padded in one comprehension)."""
    cells = [column if "".join(column).isprintable() else [printable(c) for c in column] for column in columns]
    widths = [max(len(h), max(map(len, column), default=0)) for h, column in zip(headers, cells, strict=True)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    padded = [[c.ljust(w) for c in column] for column, w in zip(cells[:-1], widths[:-1], strict=True)]
    out += [("  ".join(row)).rstrip() for row in zip(*padded, cells[-1], strict=True)]
    return out


Cells = Callable[[int, int], list[str]]
"""The cells of one column for the rows ``[start, stop)``."""

_BLOCK_ROWS = 8192
"""Rows of a large table made at a time."""


def _streamed_table(headers: Sequence[str], columns: Sequence[Cells], rows: int) -> str:
    """The lines of :func:`_column_table` joined by newlines, for ``rows`` rows whose cells
    ``columns`` make a block at a time: a run's per-question table (100,000 questions: 700,000 cells)
    never holds every cell, every padded cell and every line at once.  The widths are taken
    in a first pass; the second makes each block's lines and appends them to the text, which
    grows in place (the one object the table is at the end)."""
    blocks = [(start, min(start + _BLOCK_ROWS, rows)) for start in range(0, rows, _BLOCK_ROWS)]
    widths = [len(header) for header in headers]
    for start, stop in blocks:
        for c, cells in enumerate(columns):
            widths[c] = max(widths[c], max(map(len, _printable_cells(cells(start, stop))), default=0))
    last = len(columns) - 1
    text = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    text += "\n" + "  ".join("-" * w for w in widths)
    for start, stop in blocks:
        padded = [
            [c.ljust(w) for c in _printable_cells(cells(start, stop))]
            for cells, w in zip(columns[:-1], widths[:-1], strict=True)
        ]
        block = [
            ("  ".join(row)).rstrip() for row in zip(*padded, _printable_cells(columns[last](start, stop)), strict=True)
        ]
        text += "\n" + "\n".join(block)
        del padded, block
    return text


def _printable_cells(cells: list[str]) -> list[str]:
    """:func:`_column_table`'s escaping, block by block (a printable cell is left as it is)."""
    return cells if "".join(cells).isprintable() else [printable(c) for c in cells]


def _summary_rows(groups: Mapping[str, RateDetail]) -> list[list[str]]:
    return [
        [name, str(s.questions), str(s.scored), str(s.errors), _rate(s.top1_rate), _rate(s.top3_rate)]
        for name, s in groups.items()
    ]


_MARKS = {None: "-", True: "yes", False: "no"}
"""A verdict as the table shows it (an error has none)."""


def render_outcome(stored: StoredRun, verdict: RegressionVerdict, store_path: StoreLocation | Path) -> str:
    """The per-question table, the aggregate rates with both breakdowns, and the verdict.

    The table is made a block of questions at a time (:func:`_streamed_table`) and the text
    grows in place: a large run's report is, at its peak, about the text itself."""
    details = retrieval_details(stored)
    aggregates = details.aggregates
    questions = details.columns
    columns: list[Cells] = [
        lambda a, b: questions.id[a:b],
        lambda a, b: questions.form[a:b],
        lambda a, b: [hard_class or "" for hard_class in questions.hard_class[a:b]],
        lambda a, b: [_MARKS[hit] for hit in questions.top1_hit[a:b]],
        lambda a, b: [_MARKS[hit] for hit in questions.top3_hit[a:b]],
        _documents_cells(questions),
        lambda a, b: [f"{ms:.1f}" for ms in questions.latency_ms[a:b]],
    ]
    headers = ["question", "form", "hard class", "top1", "top3", "top-3 documents", "ms"]
    shares = (questions.judged_at or {}).get(f"judged@{JUDGED_CUTOFF}")
    if shares is not None:  # a set with judged negatives: how much of each top-3 was judged
        judged_shares = shares
        columns.insert(5, lambda a, b: [_rate(share).strip() for share in judged_shares[a:b]])
        headers.insert(5, f"judged@{JUDGED_CUTOFF}")
    text = f"goldeneval retrieval: set {stored.set_id!r}, {_series_label(stored)}\n\n"
    text += _streamed_table(headers, columns, len(questions))
    lines: list[str] = []
    headers = ["", "questions", "scored", "errors", "top-1", "top-3"]
    for title, groups in (
        ("Overall", {"all": aggregates.overall}),
        ("By form", aggregates.by_form),
        ("By hard class", aggregates.by_hard_class),
    ):
        lines += ["", f"{title}:"]
        lines += _table(headers, _summary_rows(groups))
    lines += _measurement_lines(details)
    lines += _judged_lines(details)
    lines += [
        "",
        f"Run {stored.id} stored in {store_path} ({stored.status}, privacy {stored.privacy or 'full'}).",
        f"Benchmark fingerprint: {stored.benchmark_fingerprint or 'unknown'}",
        f"Variant fingerprint: {stored.variant_fingerprint or 'unknown'}",
        f"Regression verdict: {verdict.summary}",
        *verdict_lines(verdict),
    ]
    text += "\n" + "\n".join(lines)
    return text


def _listed(ids: Sequence[str], limit: int = 10) -> str:
    shown = printable(", ".join(ids[:limit]))  # ids come from a set file: no escape sequences
    return shown + (f", ... ({len(ids) - limit} more)" if len(ids) > limit else "")


MEAN_OVER = (
    "the judged questions (measurement.questions): those with an expected document; no-answer "
    "questions and queries their source judged only with grade 0 (measurement.unjudged) are left "
    "out, where trec_eval averages over every query of its qrels"
)
"""Which questions a metric's value is the mean of, stated next to each metric in the JSON."""
MEAN_OVER_ALL_JUDGED = (
    "every query of the qrels, as trec_eval averages (--average-over all-judged): the judged "
    "questions (measurement.questions counts them all), a no-answer question with judged negatives "
    "scoring 0, and each query the set's source judged only with grade 0 (measurement.unjudged) "
    "counting 0"
)
"""The same under trec_eval's rule."""


def measurement(details: RetrievalDetails) -> dict[str, Any]:
    """What the rank metrics measured and what they left out, from a run's details: the
    metrics with their definitions, the depth and relevance level, and the questions that
    are not in them (no-answer questions, questions the set's source left unjudged) or whose
    ranking ended before the depth."""
    questions = details.columns
    count = len(questions)
    scored = np.fromiter((status == "ok" for status in questions.status), dtype=np.bool_, count=count)
    depth = details.measurement_depth
    names = details.metrics or list(details.aggregates.metrics)
    metrics = []
    for name in names:
        metric = parse_metric(name)
        metrics.append(
            {
                "name": metric.name,
                "value": details.aggregates.metrics.get(metric.name),
                "graded": metric.kind.graded,
                "definition": metric.kind.definition,
                "trec_eval": metric.trec_eval,
                "mean_over": MEAN_OVER if details.average_over is None else MEAN_OVER_ALL_JUDGED,
            }
        )
    measured = np.zeros(count, dtype=np.bool_)
    for values in questions.metrics.values():
        measured |= ~np.isnan(np.asarray(values, dtype=np.float64))  # None (undefined) becomes NaN
    no_answer = [questions.id[i] for i in np.flatnonzero(scored & ~measured).tolist()]
    # Each scored question's depth (-1 where none was recorded: formats before 3), as one array.
    reached = np.fromiter((-1 if d is None else d for d in questions.depth), dtype=np.int64, count=count)
    short_rows: list[int] = (
        np.flatnonzero(scored & (reached >= 0) & (reached < depth)).tolist() if depth is not None else []
    )
    short_depths = {questions.id[i]: int(reached[i]) for i in short_rows}
    short = list(short_depths)
    averaged = int(scored.sum()) - len(no_answer)
    rule: dict[str, Any] = {}
    if details.average_over is not None:  # trec_eval's rule: the source's grade-0-only queries count 0
        averaged += len(details.unjudged)
        rule = {"average_over": details.average_over}
    if details.judged_only:  # trec_eval -J: every rank metric on the rankings without their unjudged documents
        rule["judged_only"] = True
    return {
        "metrics": metrics,
        "depth": depth,
        "relevance_level": details.relevance_level,
        **rule,
        "questions": averaged,
        "no_answer": {"count": len(no_answer), "ids": no_answer},
        "unjudged": {"count": len(details.unjudged), "ids": list(details.unjudged)},
        "short_rankings": {
            "count": len(short),
            "ids": short,
            "shortest": min(short_depths.values(), default=None),
        },
    }


def _measurement_lines(details: RetrievalDetails) -> list[str]:
    summary = measurement(details)
    if not summary["metrics"]:
        return []
    depth = summary["depth"]
    over = (
        f"{summary['questions']} judged questions"
        if "average_over" not in summary
        else f"{summary['questions']} judged queries (all-judged, as trec_eval)"
    )
    lines = [
        "",
        f"Rank metrics (reported, not gated) over {over}"
        + (f", depth {depth}" if depth is not None else "")
        + f", relevance level {summary['relevance_level']}"
        + (", on condensed lists (judged documents only, as trec_eval -J)" if summary.get("judged_only") else "")
        + ":",
    ]
    rows = [
        [m["name"], "n/a" if m["value"] is None else f"{m['value']:.4f}", m["definition"]] for m in summary["metrics"]
    ]
    lines += ["  " + line for line in _table(["metric", "value", "definition"], rows)]
    no_answer, unjudged, short = summary["no_answer"], summary["unjudged"], summary["short_rankings"]
    if no_answer["count"]:
        lines.append(
            f"  Not in the rank metrics: {no_answer['count']} no-answer questions (no expected document; "
            f"top-1/top-3 count them): {_listed(no_answer['ids'])}"
        )
    if unjudged["count"]:
        counted = ", each counting 0 in the means (all-judged)" if "average_over" in summary else ""
        lines.append(
            f"  Left out of the set: {unjudged['count']} questions of its source without a relevant judgement"
            f"{counted}: {_listed(unjudged['ids'])}"
        )
    if short["count"]:
        lines.append(
            f"  Shorter than the depth {depth}: {short['count']} rankings (shortest {short['shortest']} documents; "
            f"missing ranks count as misses): {_listed(short['ids'])}"
        )
    return lines


JUDGED_DEFINITION = (
    "the share of the first k distinct documents that carry a judgment, relevant or judged not "
    "relevant (ir_measures' Judged@k: over min(k, depth) documents), averaged over the scored "
    "questions with a judgment and a non-empty ranking"
)
"""What judged@k means, stated next to it in the JSON and the table."""
BOUNDS_DEFINITION = (
    "each rank metric's mean with every unjudged document of its top k counted not relevant (the "
    "metric as reported) and with every one counted relevant: how far judging them could move it "
    "(for every metric but hit, MRR, precision and recall the second is that one case, not a bound of every mix)"
)
"""What the bounds under unjudged documents mean, stated next to them in the JSON and the table."""


def judged_measurement(details: RetrievalDetails) -> dict[str, Any] | None:
    """judged@k of a run as the JSON (and the Dagster metadata) show it: the means overall
    and by form, the questions they cover, and the definition; None when the run did not
    measure it (its set records no judged negatives)."""
    judged = details.judged
    if judged is None:
        return None
    return {
        "cutoffs": judged.cutoffs,
        "overall": judged.overall,
        "by_form": judged.by_form,
        "questions": judged.measured,
        "definition": JUDGED_DEFINITION,
        **(
            {
                "bounds": {
                    name: {"unjudged_not_relevant": low, "unjudged_relevant": high}
                    for name, (low, high) in judged.bounds.items()
                },
                "bounds_definition": BOUNDS_DEFINITION,
            }
            if judged.bounds
            else {}
        ),
    }


def judged_values(details: RetrievalDetails) -> dict[str, float | None]:
    """judged@k as flat named values, for materialisation metadata that plots them over time:
    ``judged/judged@3`` overall and ``form=GAP/judged@3`` by form (the names the summary's
    metrics and slice rates use); empty when the run did not measure judged@k."""
    judged = details.judged
    if judged is None:
        return {}
    values: dict[str, float | None] = {f"judged/{name}": value for name, value in judged.overall.items()}
    for form, shares in judged.by_form.items():
        values.update({f"form={form}/{name}": value for name, value in shares.items()})
    for name, (low, high) in (judged.bounds or {}).items():
        values[f"bounds/{name}/unjudged_not_relevant"] = low
        values[f"bounds/{name}/unjudged_relevant"] = high
    return values


def _judged_lines(details: RetrievalDetails) -> list[str]:
    judged = details.judged
    if judged is None:
        return []
    names = list(judged.overall)
    rows = [["all", *(_rate(judged.overall[name]).strip() for name in names)]]
    rows += [[form, *(_rate(values.get(name)).strip() for name in names)] for form, values in judged.by_form.items()]
    lines = ["", f"Judged (label coverage, reported, not gated) over {judged.measured} questions:"]
    lines += ["  " + line for line in _table(["", *names], rows)]
    lines.append("  judged@k: " + JUDGED_DEFINITION + ".")
    if judged.bounds:
        lines.append("  Bounds under unjudged documents (unjudged not relevant .. unjudged relevant):")
        rows = [[name, _bound(low), _bound(high)] for name, (low, high) in judged.bounds.items()]
        lines += ["    " + line for line in _table(["metric", "not relevant", "relevant"], rows)]
        lines.append("  bounds: " + BOUNDS_DEFINITION + ".")
    return lines


def _bound(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"


def _series_label(stored: StoredRun) -> str:
    retriever = stored.retriever_id or stored.model
    return (
        f"retriever {retriever!r}"
        if retriever == stored.model
        else f"series {stored.model!r} (retriever {retriever!r})"
    )


def _documents_cells(questions: QuestionColumns) -> Cells:
    """Each question's top documents, its error, or that the documents were withheld: the
    top documents read once, as codes, and joined a block at a time."""
    top = questions.top_codes(TOP_K)
    vocabulary = questions.documents.vocabulary if questions.documents is not None else []

    def cells(start: int, stop: int) -> list[str]:
        statuses, errors = questions.status[start:stop], questions.error[start:stop]
        if top is None:
            return [
                f"ERROR: {error}" if status != "ok" else "(withheld: metadata_only)"
                for status, error in zip(statuses, errors, strict=True)
            ]
        bounds = top[0][start : stop + 1].tolist()
        codes = top[1][bounds[0] : bounds[-1]].tolist()
        base = bounds[0]
        return [
            f"ERROR: {error}"
            if status != "ok"
            else ", ".join([vocabulary[c] for c in codes[bounds[i] - base : bounds[i + 1] - base]])
            for i, (status, error) in enumerate(zip(statuses, errors, strict=True))
        ]

    return cells


def _run_json(run: StoredRun, acceptance: Acceptance | None = None) -> dict[str, Any]:
    return {
        "id": run.id,
        "created_at": run.created_at.isoformat(),
        "set_id": run.set_id,
        "retriever": run.model,
        "retriever_id": run.retriever_id,
        "grader": run.grader,
        "status": run.status,
        "top1_rate": run.pass_rate,
        "top3_rate": run.mean_score,
        "questions": run.question_count,
        "scored": run.scored_count,
        "errors": run.error_count,
        "provenance": dict(run.provenance),
        "label_digest": run.label_digest,
        "benchmark_fingerprint": run.benchmark_fingerprint,
        "variant_fingerprint": run.variant_fingerprint,
        "privacy": run.privacy,
        "accepted": _acceptance_json(acceptance),
    }


def outcome_json(
    stored: StoredRun,
    verdict: RegressionVerdict,
    store_path: StoreLocation | Path,
    *,
    warnings: Sequence[str] = (),
    streamed: bool = False,
) -> dict[str, Any]:
    """The ``--format json`` document of a run.  ``streamed``: ``questions`` is an iterator of
    plain records, for :func:`goldeneval.core.json_stream.write_json` to write one at a time
    (the CLI); otherwise a list (a document nested in another, as ``answers`` does)."""
    details = retrieval_details(stored)  # not dumped whole: its questions are written one at a time
    questions: Iterator[dict[str, Any]] = itertools.chain(details.question_json(), unjudged_rows(details))
    return {
        "format_version": JSON_FORMAT_VERSION,
        "store": str(store_path),
        "run": _run_json(stored),
        "protocol": {
            "revision": details.protocol,
            "top_k": details.top_k,
            "overfetch_multiplier": details.overfetch_multiplier,
            "hit_cutoffs": list(details.hit_cutoffs),
        },
        "measurement": measurement(details),
        **_judged_json(details),
        "questions": questions if streamed else list(questions),
        "aggregates": details.aggregates.model_dump(mode="json"),
        "verdict": verdict.to_dict(),
        "warnings": list(warnings),
    }


UNJUDGED_STATUS = "unjudged"
"""The status of a per-question row of a query the set's source judged only with grade 0."""


def unjudged_rows(details: RetrievalDetails) -> Iterator[dict[str, Any]]:
    """Under ``all-judged``, one row per query the set's source judged only with grade 0 (the
    set's ``unjudged``): never asked, it scores 0 on every rank metric, as trec_eval scores it
    and as the means count it; so the rows' mean of each metric is the run's.  Nothing under
    the default averaging, which leaves these queries out."""
    if details.average_over != "all-judged":
        return
    names = details.metrics or list(details.aggregates.metrics)
    for query_id in details.unjudged:
        yield {
            "id": query_id,
            "form": None,
            "hard_class": None,
            "depth": None,
            "top1_hit": None,
            "top3_hit": None,
            "latency_ms": None,
            "status": UNJUDGED_STATUS,
            "error": None,
            "metrics": dict.fromkeys(names, 0.0),
        }


def _judged_json(details: RetrievalDetails) -> dict[str, Any]:
    """``{"judged": ...}`` for a run that measured judged@k, else nothing (the document of
    every other run stays as it was)."""
    judged = judged_measurement(details)
    return {} if judged is None else {"judged": judged}


def render_runs(runs: Sequence[StoredRun], accepted: Mapping[str, Acceptance] | None = None) -> str:
    """The ``goldeneval runs`` table; a run a person accepted is marked ``by <who>`` in its
    ``accepted`` column."""
    if not runs:
        return "No runs stored."
    accepted = accepted or {}
    rows = [
        [
            r.id[:12],
            r.created_at.strftime("%Y-%m-%d %H:%M:%S"),
            r.set_id,
            r.model,
            r.grader,
            r.status,
            f"{r.scored_count}/{r.question_count}",
            _rate(r.pass_rate).strip(),
            _rate(r.mean_score).strip(),
            f"by {accepted[r.id].accepted_by}" if r.id in accepted else "",
        ]
        for r in runs
    ]
    headers = [
        "run",
        "created (UTC)",
        "set",
        "model",
        "grader",
        "status",
        "scored",
        "pass/top-1",
        "mean/top-3",
        "accepted",
    ]
    return "\n".join(_table(headers, rows))


def runs_json(runs: Sequence[StoredRun], accepted: Mapping[str, Acceptance] | None = None) -> list[dict[str, Any]]:
    """``goldeneval runs --format json``: each run as a verdict's ``run`` shows it, its
    ``accepted`` filled in (who accepted it, when and why; null when nobody did)."""
    accepted = accepted or {}
    return [_run_json(r, accepted.get(r.id)) for r in runs]


def _acceptance_json(acceptance: Acceptance | None) -> dict[str, str] | None:
    if acceptance is None:
        return None
    return {"by": acceptance.accepted_by, "at": acceptance.accepted_at.isoformat(), "reason": acceptance.reason}
