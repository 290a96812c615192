"""Rendering an evaluated run for people (a text table) and for machines (JSON).

The JSON document is the CLI's ``--format json`` output; README.md documents each field.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from goldeneval.core.regression import RegressionVerdict
from goldeneval.core.report import verdict_lines
from goldeneval.retrieval.details import (
    JUDGED_CUTOFF,
    QuestionColumns,
    RateDetail,
    RetrievalDetails,
    retrieval_details,
)
from goldeneval.retrieval.measurement import judged_lines, judged_measurement, measurement, measurement_lines
from goldeneval.retrieval.protocol import TOP_K
from goldeneval.retrieval.text_table import Cells, rate_text, streamed_table, text_table
from goldeneval.store import Acceptance, StoredRun, StoreLocation

__all__ = [
    "JSON_FORMAT_VERSION",
    "outcome_json",
    "render_outcome",
    "render_runs",
    "runs_json",
    "verdict_lines",
]

JSON_FORMAT_VERSION = 1


def _summary_rows(groups: Mapping[str, RateDetail]) -> list[list[str]]:
    return [
        [name, str(s.questions), str(s.scored), str(s.errors), rate_text(s.top1_rate), rate_text(s.top3_rate)]
        for name, s in groups.items()
    ]


_MARKS = {None: "-", True: "yes", False: "no"}
"""A verdict as the table shows it (an error has none)."""


def render_outcome(stored: StoredRun, verdict: RegressionVerdict, store_location: StoreLocation | Path) -> str:
    """The per-question table, the aggregate rates with both breakdowns, and the verdict.

    The table is made a block of questions at a time (:func:`streamed_table`) and the text
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
        columns.insert(5, lambda a, b: [rate_text(share).strip() for share in judged_shares[a:b]])
        headers.insert(5, f"judged@{JUDGED_CUTOFF}")
    text = f"goldeneval retrieval: set {stored.set_id!r}, {_series_label(stored)}\n\n"
    text += streamed_table(headers, columns, len(questions))
    lines: list[str] = []
    headers = ["", "questions", "scored", "errors", "top-1", "top-3"]
    for title, groups in (
        ("Overall", {"all": aggregates.overall}),
        ("By form", aggregates.by_form),
        ("By hard class", aggregates.by_hard_class),
    ):
        lines += ["", f"{title}:"]
        lines += text_table(headers, _summary_rows(groups))
    lines += measurement_lines(details)
    lines += judged_lines(details)
    lines += [
        "",
        f"Run {stored.id} stored in {store_location} ({stored.status}, privacy {stored.privacy or 'full'}).",
        f"Benchmark fingerprint: {stored.benchmark_fingerprint or 'unknown'}",
        f"Variant fingerprint: {stored.variant_fingerprint or 'unknown'}",
        f"Regression verdict: {verdict.summary}",
        *verdict_lines(verdict),
    ]
    text += "\n" + "\n".join(lines)
    return text


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
    store_location: StoreLocation | Path,
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
        "store": str(store_location),
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


def render_runs(
    runs: Sequence[StoredRun],
    accepted: Mapping[str, Acceptance] | None = None,
    rate_headers: tuple[str, str] = ("pass_rate", "mean_score"),
) -> str:
    """The ``goldeneval runs`` table; a run a person accepted is marked ``by <who>`` in its
    ``accepted`` column.  The stored ``pass_rate`` and ``mean_score`` columns are headed by
    ``rate_headers`` (the command names what each means for the kinds it knows)."""
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
            rate_text(r.pass_rate).strip(),
            rate_text(r.mean_score).strip(),
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
        *rate_headers,
        "accepted",
    ]
    return "\n".join(text_table(headers, rows))


def runs_json(runs: Sequence[StoredRun], accepted: Mapping[str, Acceptance] | None = None) -> list[dict[str, Any]]:
    """``goldeneval runs --format json``: each run as a verdict's ``run`` shows it, its
    ``accepted`` filled in (who accepted it, when and why; null when nobody did)."""
    accepted = accepted or {}
    return [_run_json(r, accepted.get(r.id)) for r in runs]


def _acceptance_json(acceptance: Acceptance | None) -> dict[str, str] | None:
    if acceptance is None:
        return None
    return {"by": acceptance.accepted_by, "at": acceptance.accepted_at.isoformat(), "reason": acceptance.reason}
