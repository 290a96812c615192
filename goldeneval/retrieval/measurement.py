"""What a run's rank metrics measured and what they left out (``measurement`` in the JSON), and
its judged@k coverage with the bounds of its metrics (``judged``): for the JSON, the text table and
Dagster's metadata alike."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from goldeneval.core.errors import printable
from goldeneval.retrieval.details import (
    RetrievalDetails,
)
from goldeneval.retrieval.metrics import parse_metric
from goldeneval.retrieval.text_table import rate_text, text_table

__all__ = [
    "BOUNDS_DEFINITION",
    "JUDGED_DEFINITION",
    "MEAN_OVER",
    "MEAN_OVER_ALL_JUDGED",
    "judged_lines",
    "judged_measurement",
    "judged_values",
    "measurement",
    "measurement_lines",
]


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


def measurement_lines(details: RetrievalDetails) -> list[str]:
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
    lines += ["  " + line for line in text_table(["metric", "value", "definition"], rows)]
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


def judged_lines(details: RetrievalDetails) -> list[str]:
    judged = details.judged
    if judged is None:
        return []
    names = list(judged.overall)
    rows = [["all", *(rate_text(judged.overall[name]).strip() for name in names)]]
    rows += [
        [form, *(rate_text(values.get(name)).strip() for name in names)] for form, values in judged.by_form.items()
    ]
    lines = ["", f"Judged (label coverage, reported, not gated) over {judged.measured} questions:"]
    lines += ["  " + line for line in text_table(["", *names], rows)]
    lines.append("  judged@k: " + JUDGED_DEFINITION + ".")
    if judged.bounds:
        lines.append("  Bounds under unjudged documents (unjudged not relevant .. unjudged relevant):")
        rows = [[name, _bound(low), _bound(high)] for name, (low, high) in judged.bounds.items()]
        lines += ["    " + line for line in text_table(["metric", "not relevant", "relevant"], rows)]
        lines.append("  bounds: " + BOUNDS_DEFINITION + ".")
    return lines


def _bound(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4f}"
