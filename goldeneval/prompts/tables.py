"""Arrow tables of a prompt set and a prompt run, for the Dagster assets' Parquet files.

Each obeys the privacy mode: in ``metadata_only`` no prompt text, reference, answer text,
judge reason or assertion message is written.

* ``golden_prompt_sets`` — one row per prompt: id, assertion count and types, whether it has
  a reference, tags; with ``full`` also the prompt, the system prompt and the reference.
* ``model_responses`` — one row per prompt: status (``ok``/``error`` of the model call),
  latency, the error; with ``full`` also the answer.
* ``prompt_gradings`` — one row per prompt: status, stage, passed, outcome, score, judge samples,
  spread, unstable, assertions passed/total, and ``detail`` (the stored per-prompt record as
  JSON, already filtered by the privacy mode).  The run's identity rides along in the schema
  metadata, so :func:`run_from_gradings` rebuilds the run exactly.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pyarrow as pa

from goldeneval.core.privacy import PrivacyMode, content_free_error
from goldeneval.core.provenance import Provenance
from goldeneval.prompts.details import PromptDetail
from goldeneval.prompts.evaluation import PromptRun
from goldeneval.prompts.golden import GoldenPromptSet
from goldeneval.store.parquet import TABLE_FORMAT_VERSION, read_identity, stamp_columns, table_privacy, with_identity

__all__ = [
    "PROMPT_RUN_METADATA_KEY",
    "gradings_privacy",
    "gradings_table",
    "gradings_tables_run_id",
    "prompt_set_table",
    "responses_table",
    "run_from_gradings",
]

PROMPT_RUN_METADATA_KEY = b"goldeneval.prompt_run"


def prompt_set_table(prompt_set: GoldenPromptSet, privacy: PrivacyMode, run_id: str, at: datetime) -> pa.Table:
    prompts = prompt_set.prompts
    columns: dict[str, pa.Array] = {
        "prompt_id": pa.array([p.id for p in prompts], pa.string()),
        "assertion_count": pa.array([len(p.assertions) for p in prompts], pa.int32()),
        "assertion_types": pa.array(
            [sorted({a.type.value for a in p.assertions}) for p in prompts], pa.list_(pa.string())
        ),
        "has_reference": pa.array([p.reference is not None for p in prompts], pa.bool_()),
        "tags": pa.array([list(p.tags) for p in prompts], pa.list_(pa.string())),
    }
    if privacy is PrivacyMode.FULL:
        columns["prompt"] = pa.array([p.prompt for p in prompts], pa.string())
        columns["system"] = pa.array([p.system for p in prompts], pa.string())
        columns["reference"] = pa.array([p.reference for p in prompts], pa.string())
    return stamp_columns(pa.table(columns), run_id, at)


def responses_table(run: PromptRun, privacy: PrivacyMode, run_id: str) -> pa.Table:
    results = run.results
    full = privacy is PrivacyMode.FULL
    model_failed = [r.stage in ("model", "retrieval") for r in results]
    columns: dict[str, pa.Array] = {
        "prompt_id": pa.array([r.id for r in results], pa.string()),
        "status": pa.array(["error" if failed else "ok" for failed in model_failed], pa.string()),
        "latency_ms": pa.array([r.latency_ms for r in results], pa.float64()),
        "error": pa.array(
            [
                (r.error if full else content_free_error(r.error)) if f else None
                for r, f in zip(results, model_failed, strict=True)
            ],
            pa.string(),
        ),
    }
    if full:
        columns["answer"] = pa.array([r.answer for r in results], pa.string())
    return stamp_columns(pa.table(columns), run_id, run.started_at)


_IDENTITY_FIELDS = (
    "kind",
    "set_id",
    "series",
    "model_id",
    "grader",
    "grader_identity",
    "requested_grader",
    "pass_threshold",
    "judge_samples",
    "protocol",
    "label_digest",
    "benchmark_fingerprint",
)
"""The run's fields that the gradings table's metadata carries as they are: written by
:func:`gradings_table` and read back by :func:`run_from_gradings` from this one list."""


def _identity(run: PromptRun, privacy: PrivacyMode, run_id: str) -> dict[str, Any]:
    return {
        "format": TABLE_FORMAT_VERSION,
        **{name: getattr(run, name) for name in _IDENTITY_FIELDS},
        "started_at": run.started_at.astimezone(UTC).isoformat(),
        "provenance": run.provenance.as_columns(),
        "tables_run_id": run_id,
        "privacy": privacy.value,
    }


def gradings_table(run: PromptRun, privacy: PrivacyMode, run_id: str) -> pa.Table:
    results = [r if privacy is PrivacyMode.FULL else r.without_content() for r in run.results]
    columns: dict[str, pa.Array] = {
        "prompt_id": pa.array([r.id for r in results], pa.string()),
        "status": pa.array([r.status for r in results], pa.string()),
        "stage": pa.array([r.stage for r in results], pa.string()),
        "passed": pa.array([r.passed for r in results], pa.bool_()),
        "outcome": pa.array([r.outcome for r in results], pa.string()),
        "score": pa.array([r.score for r in results], pa.float64()),
        "samples": pa.array([r.samples for r in results], pa.list_(pa.float64())),
        "spread": pa.array([r.spread for r in results], pa.float64()),
        "unstable": pa.array([r.unstable for r in results], pa.bool_()),
        "assertions_passed": pa.array([sum(a.passed for a in r.assertions) for r in results], pa.int32()),
        "assertions_total": pa.array([len(r.assertions) for r in results], pa.int32()),
        "latency_ms": pa.array([r.latency_ms for r in results], pa.float64()),
        "error": pa.array([r.error for r in results], pa.string()),
        "detail": pa.array([json.dumps(r.to_json()) for r in results], pa.string()),
    }
    table = stamp_columns(pa.table(columns), run_id, run.started_at)
    return with_identity(table, PROMPT_RUN_METADATA_KEY, _identity(run, privacy, run_id))


def _read_identity(table: pa.Table) -> dict[str, Any]:
    return read_identity(table, PROMPT_RUN_METADATA_KEY, "prompt_gradings")


def gradings_privacy(table: pa.Table) -> PrivacyMode:
    return table_privacy(table, PROMPT_RUN_METADATA_KEY, "prompt_gradings")


def gradings_tables_run_id(table: pa.Table) -> str:
    return str(_read_identity(table)["tables_run_id"])


def run_from_gradings(table: pa.Table) -> PromptRun:
    """The run a :func:`gradings_table` describes (in ``metadata_only``, without content)."""
    identity = _read_identity(table)
    results = tuple(PromptDetail.model_validate(json.loads(text)) for text in table.column("detail").to_pylist())
    return PromptRun(
        **{name: identity[name] for name in _IDENTITY_FIELDS},
        results=results,
        started_at=datetime.fromisoformat(identity["started_at"]),
        provenance=Provenance.model_validate(identity["provenance"]),
    )
