"""Which earlier run a new run is compared with, and whether it is comparable (ADR-215, 6).

States against the chosen earlier run of the same (set, retriever, grader):

* ``unknown`` — this run is incomplete, or its benchmark fingerprint is unknown (no
  declared corpus revision), or a pinned run's is: no numeric verdict;
* ``baseline`` — no earlier complete run with a known benchmark: this is the first known run;
* ``mismatch`` — the earlier run measured another benchmark (corpus, labels or protocol);
* ``comparable`` — equal known benchmark fingerprints: a numeric verdict, with any variant
  difference (model, chunking, pipeline) reported as the treatment that changed.

Baselines: ``previous`` (the latest earlier complete run with a known benchmark), ``best``
(the best earlier comparable run, by top-1 then top-3), ``run:<id>`` (a pinned run of the
same set and grader, possibly of another retriever), so CI can catch slow drift.
"""

from __future__ import annotations

from dataclasses import dataclass

from goldeneval.errors import InputError
from goldeneval.regression import (
    DEFAULT_THRESHOLDS,
    ComparisonState,
    RegressionThresholds,
    RegressionVerdict,
    detect_regression,
)
from goldeneval.store import ResultStore, StoredRun

__all__ = ["PREVIOUS", "Baseline", "compare_with_history", "treatment_change"]

_VARIANT_FIELDS = ("model_revision", "chunking_identity", "pipeline_identity")


@dataclass(frozen=True)
class Baseline:
    """How the earlier run is chosen: ``previous``, ``best`` or ``run:<id>``."""

    kind: str = "previous"
    run_id: str | None = None

    @classmethod
    def parse(cls, text: str) -> Baseline:
        if text in ("previous", "best"):
            return cls(text)
        kind, sep, run_id = text.partition(":")
        if kind == "run" and sep and run_id:
            return cls("run", run_id)
        raise InputError(f"baseline {text!r}: expected 'previous', 'best' or 'run:<id>'")


PREVIOUS = Baseline()


def _short(value: str | None) -> str:
    if value is None:
        return "unknown"
    return value if len(value) <= 40 else value[:37] + "..."


def _benchmark_difference(current: StoredRun, earlier: StoredRun) -> str:
    parts = []
    if current.provenance.get("corpus_revision") != earlier.provenance.get("corpus_revision"):
        parts.append(
            f"corpus revision {_short(earlier.provenance.get('corpus_revision'))} -> "
            f"{_short(current.provenance.get('corpus_revision'))}"
        )
    if current.label_digest != earlier.label_digest:
        parts.append(f"labels {_short(earlier.label_digest)} -> {_short(current.label_digest)}")
    if current.details.get("protocol") != earlier.details.get("protocol"):
        parts.append(f"scoring protocol {earlier.details.get('protocol')} -> {current.details.get('protocol')}")
    return "; ".join(parts) or "benchmark fingerprint differs"


def treatment_change(current: StoredRun, earlier: StoredRun) -> str | None:
    """How the variant differs, field by field, or None when it does not."""
    if current.variant_fingerprint is not None and current.variant_fingerprint == earlier.variant_fingerprint:
        return None
    changed = [
        f"{name} {_short(earlier.provenance.get(name))} -> {_short(current.provenance.get(name))}"
        for name in _VARIANT_FIELDS
        if current.provenance.get(name) != earlier.provenance.get(name)
    ]
    if current.model != earlier.model:
        changed.insert(0, f"retriever {earlier.model} -> {current.model}")
    return "; ".join(changed) or None


def _why_unknown(run: StoredRun, who: str) -> str:
    if run.label_digest is None:
        return f"{who} was stored without provenance (before fingerprints were recorded)"
    missing = [name for name in ("corpus_revision",) if run.provenance.get(name) is None]
    return f"{who} has an unknown benchmark fingerprint: its retriever declares no {', '.join(missing)}"


def _choose(store: ResultStore, current: StoredRun, baseline: Baseline) -> tuple[StoredRun | None, int]:
    """The earlier run to compare with, and how many earlier runs had an unknown benchmark."""
    earlier = [
        run
        for run in store.list_runs(set_id=current.set_id, model=current.model)
        if run.grader == current.grader
        and run.complete
        and run.id != current.id
        and run.created_at <= current.created_at
    ]
    known = [run for run in earlier if run.benchmark_fingerprint is not None]
    if baseline.kind == "best":
        same = [run for run in known if run.benchmark_fingerprint == current.benchmark_fingerprint]
        if same:
            best = max(same, key=lambda r: (r.pass_rate or 0.0, r.mean_score or 0.0, r.created_at))
            return best, len(earlier) - len(known)
    return (known[0] if known else None), len(earlier) - len(known)


def compare_with_history(
    store: ResultStore,
    current: StoredRun,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    baseline: Baseline = PREVIOUS,
    *,
    seed: int = 42,
) -> RegressionVerdict:
    """Decide the comparison state of ``current`` and, when comparable, its numeric verdict."""
    if not current.complete:
        return RegressionVerdict(
            ComparisonState.UNKNOWN,
            None,
            f"this run is incomplete ({current.error_count} of {current.question_count} questions "
            "errored); incomplete runs get no numeric verdict",
        )
    if current.benchmark_fingerprint is None:
        return RegressionVerdict(ComparisonState.UNKNOWN, None, _why_unknown(current, "this run"))
    if baseline.kind == "run" and baseline.run_id is not None:
        earlier = store.get_run(baseline.run_id)
        if earlier is None or earlier.set_id != current.set_id or earlier.grader != current.grader:
            raise InputError(
                f"baseline run {baseline.run_id!r}: no stored run of set {current.set_id!r} "
                f"and grader {current.grader!r} has that id"
            )
        if not earlier.complete:
            return RegressionVerdict(ComparisonState.UNKNOWN, earlier.id, f"pinned run {earlier.id} is incomplete")
        if earlier.benchmark_fingerprint is None:
            return RegressionVerdict(
                ComparisonState.UNKNOWN, earlier.id, _why_unknown(earlier, f"pinned run {earlier.id}")
            )
        unknown_before = 0
    else:
        chosen, unknown_before = _choose(store, current, baseline)
        if chosen is None:
            note = (
                f"; {unknown_before} earlier run(s) have an unknown benchmark and are not compared"
                if unknown_before
                else ""
            )
            return RegressionVerdict(
                ComparisonState.BASELINE,
                None,
                f"first run with a known benchmark: this run is the baseline{note}",
            )
        earlier = chosen
    if earlier.benchmark_fingerprint != current.benchmark_fingerprint:
        return RegressionVerdict(
            ComparisonState.MISMATCH,
            earlier.id,
            f"benchmark differs from run {earlier.id}: {_benchmark_difference(current, earlier)}; no numeric verdict",
        )
    return detect_regression(
        current,
        earlier,
        thresholds,
        current_slices=store.slices(current.id),
        previous_slices=store.slices(earlier.id),
        treatment_change=treatment_change(current, earlier),
        seed=seed,
    )
