"""Rendering a stored prompt run or answer run for people (a table) and machines (JSON).

Both render what the store holds, so ``metadata_only`` runs show no prompt text, answer text
or judge reason here either.  README.md ("Answer quality") documents the JSON fields.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from goldeneval.core.errors import InputError, one_line, printable
from goldeneval.core.report import verdict_lines
from goldeneval.prompts.details import PromptDetail, PromptDetails, PromptRate
from goldeneval.prompts.pipeline import PromptOutcome
from goldeneval.store import StoredRun, StoreLocation

__all__ = [
    "PROMPTS_JSON_FORMAT_VERSION",
    "prompt_outcome_json",
    "render_prompt_outcome",
]

PROMPTS_JSON_FORMAT_VERSION = 1
ANSWER_EXCERPT = 60


def _details(stored: StoredRun) -> PromptDetails:
    details = stored.details
    if not isinstance(details, PromptDetails):
        raise InputError(f"run {stored.id} is a retrieval run, not a prompt or answer run")
    return details


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    rows = [[printable(cell) for cell in row] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in rows)]) for i, h in enumerate(headers)]
    out = [
        "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip(),
        "  ".join("-" * w for w in widths),
    ]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return out


_OUTCOME_CELLS = {
    "pass": "pass",
    "abstained": "pass (abstained)",
    "fail": "FAIL",
    "missed_abstention": "FAIL (should abstain)",
    "over_abstention": "OVER-ABSTAINED",
    "unstable": "UNSTABLE",
}


def _verdict_cell(prompt: PromptDetail) -> str:
    if not prompt.scored:
        return "ERROR"
    if prompt.outcome is not None:
        return _OUTCOME_CELLS[prompt.outcome]
    return "pass" if prompt.passed else "FAIL"


def _note(prompt: PromptDetail) -> str:
    if not prompt.scored:
        return f"{prompt.stage or 'error'}: {prompt.error or 'failed'}"
    notes = []
    failed = [a for a in prompt.assertions if not a.passed]
    if failed:
        notes.append("; ".join(a.message or a.type for a in failed))
    if prompt.samples and len(prompt.samples) > 1:
        notes.append(f"samples {', '.join(f'{s:.2f}' for s in prompt.samples)}")
    if prompt.unstable:
        notes.append("UNSTABLE: samples straddle the pass threshold (not a pass)")
    if prompt.reason and not failed:
        notes.append(prompt.reason)
    return one_line(" | ".join(notes), 120)


def _answer_cell(prompt: PromptDetail) -> str:
    if prompt.answer is None:
        return "(withheld: metadata_only)" if prompt.scored or prompt.stage == "grader" else ""
    return one_line(prompt.answer, ANSWER_EXCERPT)


def _rate_rows(groups: Mapping[str, PromptRate]) -> list[list[str]]:
    return [
        [
            name,
            str(r.prompts),
            str(r.graded),
            str(r.errors),
            str(r.passed),
            _rate(r.pass_rate),
            _rate(r.mean_score),
            str(r.failed),
            str(r.over_abstentions),
            str(r.under_abstentions),
            str(r.unstable),
        ]
        for name, r in groups.items()
    ]


def _measure_lines(details: PromptDetails) -> list[str]:
    """The judge measures of ``--judge-rubrics``: per question, then each one's mean (apart from
    the pass rate and the mean score, never averaged with them)."""
    summaries = details.aggregates.measures
    if not summaries:
        return []
    names = list(summaries)
    rows = [[p.id, *(_rate(p.measures.get(name)) for name in names)] for p in details.prompts if p.measures]
    means = [["mean", *(_rate(summaries[name].mean) for name in names)]]
    counts = [["measured", *(str(summaries[name].questions) for name in names)]]
    title = "Judge measures (--judge-rubrics; apart from the pass rate):"
    return ["", title, *_table([details.unit, *names], rows + means + counts)]


def _body(stored: StoredRun, title: str) -> list[str]:
    details = _details(stored)
    answers = details.kind == "answers"
    lines = [title, ""]
    headers = ["prompt", "verdict", "score", "ms", "answer", "notes"]
    if answers:
        headers = ["question", "form", "retrieval", "verdict", "score", "ms", "answer", "notes"]
    rows = []
    for p in details.prompts:
        row = [p.id, _verdict_cell(p), _rate(p.score), f"{p.latency_ms:.1f}", _answer_cell(p), _note(p)]
        if answers:
            hit = "-" if p.retrieval_hit is None else ("hit" if p.retrieval_hit else "miss")
            row = [p.id, p.form or "", hit, *row[1:]]
        rows.append(row)
    lines += _table(headers, rows)
    rate_headers = [
        "",
        details.unit,
        "graded",
        "errors",
        "passed",
        "pass rate",
        "mean",
        "failed",
        "over-abstained",
        "under-abstained",
        "unstable",
    ]
    groups: list[tuple[str, Mapping[str, PromptRate]]] = [("Overall", {"all": details.aggregates.overall})]
    if answers:
        groups.append(("Answer quality by retrieval (top-3 hit or miss)", details.aggregates.by_retrieval))
        groups.append(("By form", details.aggregates.by_form))
    for name, group in groups:
        lines += ["", f"{name}:", *_table(rate_headers, _rate_rows(group))]
    if details.aggregates.unstable:
        lines.append(
            f"Unstable (judge samples straddle {details.pass_threshold:g}; not a pass): {details.aggregates.unstable}"
        )
    if details.aggregates.overall.over_abstentions:
        lines.append(
            f"Over-abstained (said it cannot answer a question a document answers): "
            f"{details.aggregates.overall.over_abstentions}"
        )
    if details.aggregates.overall.under_abstentions:
        lines.append(
            f"Under-abstained (answered a question no document answers; counted in failed): "
            f"{details.aggregates.overall.under_abstentions}"
        )
    lines += _measure_lines(details)
    grader = details.grader
    if details.requested_grader:
        grader += f" (asked for {details.requested_grader!r}: unknown, fell back)"
    lines += ["", f"Grader: {grader}; {details.grader_identity}"]
    return lines


def _footer(stored: StoredRun, verdict_text: list[str], store_location: StoreLocation | Path) -> list[str]:
    return [
        "",
        f"Run {stored.id} stored in {store_location} ({stored.status}, privacy {stored.privacy or 'full'}).",
        f"Benchmark fingerprint: {stored.benchmark_fingerprint or 'unknown'}",
        f"Variant fingerprint: {stored.variant_fingerprint or 'unknown'}",
        *verdict_text,
    ]


def render_prompt_outcome(outcome: PromptOutcome, store_location: StoreLocation | Path) -> str:
    stored, verdict = outcome.stored, outcome.verdict
    model_id = _details(stored).model_id
    who = f"model {stored.model!r}" if model_id == stored.model else f"series {stored.model!r} (model {model_id!r})"
    lines = _body(stored, f"goldeneval prompts: set {stored.set_id!r}, {who}")
    verdict_text = [f"Regression verdict: {verdict.summary}", *verdict_lines(verdict)]
    return "\n".join(lines + _footer(stored, verdict_text, store_location))


def _run_json(stored: StoredRun, details: PromptDetails) -> dict[str, Any]:
    return {
        "id": stored.id,
        "created_at": stored.created_at.isoformat(),
        "set_id": stored.set_id,
        "model": stored.model,
        "model_id": details.model_id,
        "retriever_id": details.retriever_id,
        "grader": stored.grader,
        "requested_grader": details.requested_grader,
        "status": stored.status,
        "pass_rate": stored.pass_rate,
        "mean_score": stored.mean_score,
        "prompts": stored.question_count,
        "graded": stored.scored_count,
        "errors": stored.error_count,
        "failed": details.aggregates.overall.failed,
        "over_abstentions": details.aggregates.overall.over_abstentions,
        "under_abstentions": details.aggregates.overall.under_abstentions,
        "unstable": details.aggregates.overall.unstable,
        "measures": {name: summary.mean for name, summary in details.aggregates.measures.items()},
        "provenance": dict(stored.provenance),
        "label_digest": stored.label_digest,
        "benchmark_fingerprint": stored.benchmark_fingerprint,
        "variant_fingerprint": stored.variant_fingerprint,
        "privacy": stored.privacy,
        "retrieval_run_id": details.retrieval_run_id,
    }


def prompt_outcome_json(outcome: PromptOutcome, store_location: StoreLocation | Path) -> dict[str, Any]:
    stored = outcome.stored
    details = _details(stored)
    document = details.to_json()
    return {
        "format_version": PROMPTS_JSON_FORMAT_VERSION,
        "kind": details.kind,
        "store": str(store_location),
        "run": _run_json(stored, details),
        "grading": {
            "protocol": details.protocol,
            "grader_identity": details.grader_identity,
            "pass_threshold": details.pass_threshold,
            "judge_samples": details.judge_samples,
        },
        "prompts": document["prompts"],
        "aggregates": document["aggregates"],
        **({"usage": details.usage} if details.usage is not None else {}),
        "verdict": outcome.verdict.to_dict(),
        "notices": list(outcome.run.notices),
    }
