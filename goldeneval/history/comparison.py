"""Which earlier run a new run is compared with, and whether it is comparable (ADR-215, 6).

States against the chosen earlier run of the same series (set, series name, grader):

* ``unknown`` — this run is incomplete, or its benchmark fingerprint is unknown (no
  declared corpus revision), or the earlier run's is: no numeric verdict;
* ``baseline`` — the series has no earlier complete run: this is its first;
* ``mismatch`` — the earlier run measured another benchmark (corpus, labels or protocol): the
  reason says which documents were added, removed or changed and which questions' labels
  changed, from the manifests the store keeps per benchmark (:mod:`goldeneval.core.manifest`;
  ids only where both runs are ``full``, counts otherwise), and the questions whose labels
  and judged documents did not change are compared for information, with no numeric verdict;
* ``comparable`` — equal known benchmark fingerprints: a numeric verdict, with any variant
  difference (model, chunking, pipeline, retriever) reported as the treatment that changed;
  ``unknown`` instead, "labels incomplete for this run", when the thresholds set
  ``min_judged`` and the candidate's judged@3 falls below it (or was not measured).

Baselines: ``previous`` (the latest earlier complete run), ``accepted`` (the series' accepted
level: the last run that passed the gate, or one a person accepted:
:mod:`goldeneval.history.accepted`), ``best`` (the best earlier comparable run, by the stored
``pass_rate`` then ``mean_score``: top-1 then top-3 for retrieval, pass rate then mean score
for prompts; the previous run when none is comparable), ``run:<id>``
(a pinned run of the same set and grader, possibly of another series, named by its id or a
unique prefix), so CI can catch slow drift.  An earlier run that cannot be compared is never
skipped: a run after it is ``unknown`` or ``mismatch``, never silently a new baseline.
The candidates are found by indexed queries in the store, not by loading the history.

Runs of one series measured at the same moment are judged by the order they were stored
in, which only the writer knows: :meth:`~goldeneval.store.Store.save_run_in_turn` says
whether another complete run of the series was already stored (``preceded``).  The first
stored is the baseline, even if another was measured before it; one measured earlier but
stored later is compared with the run measured next after it.  Judged later from the
history alone (``preceded`` unknown), the run measured first is the baseline.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from goldeneval.core.baseline import PREVIOUS, Baseline
from goldeneval.core.coverage import baseline_labels_short, coverage_note, labels_incomplete
from goldeneval.core.errors import InputError
from goldeneval.core.gate import DEFAULT_THRESHOLDS, ComparisonState, RegressionThresholds
from goldeneval.core.manifest import BenchmarkChange, InformationalComparison, InformationalRate, benchmark_change
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RETRIEVAL_GRADER
from goldeneval.core.regression import RegressionVerdict, detect_regression
from goldeneval.core.stats import Verdicts, paired_comparison
from goldeneval.history.accepted import Judge, accepted_level
from goldeneval.store import Store, StoredRun

__all__ = [
    "benchmark_difference",
    "compare_pair",
    "compare_with_history",
    "gate_judge",
    "gate_verdict",
    "resolve_pinned_baseline",
    "treatment_change",
]

_VARIANT_FIELDS = ("model_revision", "chunking_identity", "pipeline_identity")


def _short(value: str | None) -> str:
    if value is None:
        return "unknown"
    return value if len(value) <= 40 else value[:37] + "..."


def _corpus_changed(current: StoredRun, earlier: StoredRun) -> str:
    return (
        f"corpus changed (revision {_short(earlier.provenance.get('corpus_revision'))} -> "
        f"{_short(current.provenance.get('corpus_revision'))})"
    )


def benchmark_difference(current: StoredRun, earlier: StoredRun) -> str:
    parts = []
    if current.provenance.get("corpus_revision") != earlier.provenance.get("corpus_revision"):
        parts.append(_corpus_changed(current, earlier))
    if current.label_digest != earlier.label_digest:
        parts.append(f"labels changed (digest {_short(earlier.label_digest)} -> {_short(current.label_digest)})")
    if current.details.protocol != earlier.details.protocol:
        parts.append(f"scoring protocol changed ({earlier.details.protocol} -> {current.details.protocol})")
    return "; ".join(parts) or "benchmark fingerprint differs"


def treatment_change(current: StoredRun, earlier: StoredRun) -> str | None:
    """How the variant differs, field by field, or None when it does not."""
    if current.variant_fingerprint is not None and current.variant_fingerprint == earlier.variant_fingerprint:
        return None
    changed = [
        f"{name} {earlier.provenance.get(name) or 'unknown'} -> {current.provenance.get(name) or 'unknown'}"
        for name in _VARIANT_FIELDS
        if current.provenance.get(name) != earlier.provenance.get(name)
    ]
    if current.model != earlier.model:
        changed.insert(0, f"retriever {earlier.model} -> {current.model}")
    return "; ".join(changed) or None


def _why_unknown(run: StoredRun, who: str) -> str:
    if run.label_digest is None:
        return f"{who} was stored before fingerprints were recorded (provenance missing)"
    return f"{who} has an unknown benchmark fingerprint: its retriever declares no corpus_revision (provenance missing)"


def _unknown_current(current: StoredRun, earlier_id: str | None) -> RegressionVerdict | None:
    """The ``unknown`` verdict of a run that cannot be compared with anything, whichever run
    is the earlier: an incomplete run, or one whose benchmark is unknown; None otherwise."""
    if not current.complete:
        return RegressionVerdict(
            ComparisonState.UNKNOWN,
            earlier_id,
            f"this run is incomplete ({current.error_count} of {current.question_count} {current.details.unit} "
            "errored); incomplete runs get no numeric verdict",
        )
    if current.benchmark_fingerprint is None:
        return RegressionVerdict(ComparisonState.UNKNOWN, earlier_id, _why_unknown(current, "this run"))
    return None


def resolve_pinned_baseline(
    store: Store, baseline: Baseline, set_id: str, grader: str, *, judged: str | None = None
) -> StoredRun | None:
    """The run ``run:<id>`` names (full id or unique prefix), or the latest complete run of the
    series ``series:<name>`` names, checked before anything is stored.

    Raises :class:`InputError` when no complete run of this set and grader other than the
    ``judged`` one fits, so a pinned baseline that cannot be used stores nothing and a run
    is never compared with itself."""
    if baseline.kind == "series" and baseline.series is not None:
        return _latest_of_series(store, baseline.series, set_id, grader, judged)
    if baseline.kind != "run" or baseline.run_id is None:
        return None
    try:
        pinned = store.find_run(baseline.run_id, excluding=judged)
    except InputError as exc:
        raise InputError(f"baseline: {exc}") from None
    if pinned.set_id != set_id or pinned.grader != grader:
        raise InputError(
            f"baseline run {pinned.id}: it is a run of set {pinned.set_id!r} and grader {pinned.grader!r}, "
            f"not of set {set_id!r} and grader {grader!r}"
        )
    if not pinned.complete:
        raise InputError(
            f"baseline run {pinned.id}: it is incomplete ({pinned.error_count} {pinned.details.unit} errored)"
        )
    return pinned


def _latest_of_series(store: Store, series: str, set_id: str, grader: str, judged: str | None) -> StoredRun:
    """The latest complete run of ``series`` on this set and grader (``--baseline series:<name>``)."""
    for run in store.list_runs(set_id=set_id, model=series):
        if run.grader == grader and run.complete and run.id != judged:
            found = store.get_run(run.id)
            if found is not None:
                return found
    other = " other than the run judged" if judged is not None else ""
    raise InputError(
        f"baseline series {series!r}: it has no complete run{other} of set {set_id!r} and grader {grader!r} "
        "in this store: run that series first"
    )


def _earlier_run(store: Store, current: StoredRun, baseline: Baseline, pinned: StoredRun | None) -> StoredRun | None:
    if baseline.pinned:
        return (
            pinned
            if pinned is not None
            else resolve_pinned_baseline(store, baseline, current.set_id, current.grader, judged=current.id)
        )
    if baseline.kind == "best":
        best = store.best_comparable_run(current)
        if best is not None:
            return best
    return store.previous_complete_run(current)


def _baseline_verdict(current: StoredRun, thresholds: RegressionThresholds) -> RegressionVerdict:
    reason = f"first complete run of series {current.model!r} on set {current.set_id!r}: this run is the baseline"
    short = baseline_labels_short(current, thresholds.min_judged) if thresholds.min_judged is not None else None
    if short is not None:
        reason += f"; {short.reason}"
    return RegressionVerdict(ComparisonState.BASELINE, None, reason, labels_short=short)


def gate_verdict(
    store: Store,
    current: StoredRun,
    earlier: StoredRun | None,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    *,
    seed: int = 42,
) -> RegressionVerdict:
    """The verdict of ``current`` against ``earlier`` as the gate decides it, ``earlier`` None
    meaning the series had no complete run before: what the accepted level's walk
    (:func:`goldeneval.history.accepted.accepted_level`) asks of every night."""
    unknown = _unknown_current(current, None if earlier is None else earlier.id)
    if unknown is not None:
        return unknown
    if earlier is None:
        return _baseline_verdict(current, thresholds)
    return compare_pair(store, current, earlier, thresholds, seed=seed)


def gate_judge(store: Store, thresholds: RegressionThresholds = DEFAULT_THRESHOLDS, *, seed: int = 42) -> Judge:
    """:func:`gate_verdict` with the store and thresholds bound: the judge of the accepted
    level's walk (:mod:`goldeneval.history.accepted`)."""
    return lambda run, earlier: gate_verdict(store, run, earlier, thresholds, seed=seed)


def _against_level(
    store: Store, current: StoredRun, thresholds: RegressionThresholds, seed: int
) -> tuple[StoredRun | None, str | None, str | None]:
    """``baseline: accepted``: the series' accepted level, how the reason names it, and the
    reference the verdict carries; without a level, the previous complete run."""
    level = accepted_level(store, current, gate_judge(store, thresholds, seed=seed))
    if level is not None:
        return level.run, level.reference, level.reference
    earlier = store.previous_complete_run(current)
    if earlier is None:
        return None, None, None
    who = f"the previous run {earlier.id} (the series has no accepted level yet)"
    return earlier, who, who


def _with_reference(verdict: RegressionVerdict, current: StoredRun, who: str, reference: str) -> RegressionVerdict:
    """A verdict against the accepted level: its reason says which run was the reference and,
    when it fails the gate, how a person accepts the run."""
    reason = verdict.reason if who in verdict.reason else f"{verdict.reason}; compared with {who}"
    if current.complete and not verdict.passes_gate:
        reason += f"; red until a person accepts a run of this series: goldeneval accept {current.id} --reason TEXT"
    return dataclasses.replace(verdict, reason=reason, reference=reference)


def compare_with_history(
    store: Store,
    current: StoredRun,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    baseline: Baseline = PREVIOUS,
    *,
    pinned: StoredRun | None = None,
    preceded: bool | None = None,
    seed: int = 42,
) -> RegressionVerdict:
    """Decide the comparison state of ``current`` and, when comparable, its numeric verdict.

    ``pinned`` is the run ``baseline`` pins, when the caller resolved it before storing.
    ``preceded`` is what saving ``current`` found (:attr:`~goldeneval.store.sql.SavedRun.preceded`):
    False makes it the baseline whatever was stored since, True makes sure it is not;
    None judges from the history as it is now.  With ``accepted`` the earlier run is the
    series' accepted level (:mod:`goldeneval.history.accepted`), and the verdict's
    ``reference`` names it.
    """
    unknown = _unknown_current(current, None)
    if unknown is not None:
        return unknown
    who: str | None = None
    reference: str | None = None
    if not baseline.pinned and preceded is False:
        earlier = None  # the series' first complete run when it was stored
    elif baseline.kind == "accepted":
        earlier, who, reference = _against_level(store, current, thresholds, seed)
    else:
        earlier = _earlier_run(store, current, baseline, pinned)
    if earlier is None and preceded and not baseline.pinned:
        earlier = store.next_complete_run(current)  # measured after it, stored before it
        who = reference = None
    if earlier is None:
        return _baseline_verdict(current, thresholds)
    who = who or {"run": f"pinned run {earlier.id}", "series": f"run {earlier.id} of series {baseline.series!r}"}.get(
        baseline.kind, f"the previous run {earlier.id}"
    )
    verdict = compare_pair(store, current, earlier, thresholds, who=who, seed=seed)
    return verdict if reference is None else _with_reference(verdict, current, who, reference)


def compare_pair(
    store: Store,
    current: StoredRun,
    earlier: StoredRun,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    *,
    who: str | None = None,
    seed: int = 42,
) -> RegressionVerdict:
    """The comparison state and verdict of ``current`` against ``earlier``, chosen already:
    the rule the gate applies once :func:`compare_with_history` has found the earlier run, and
    what ``goldeneval compare`` applies to any two stored runs.  ``who`` names the earlier
    run in the reason (default ``run <id>``)."""
    who = who or f"run {earlier.id}"
    unknown = _unknown_current(current, earlier.id)
    if unknown is not None:
        return unknown
    if not earlier.complete:
        return RegressionVerdict(ComparisonState.UNKNOWN, earlier.id, f"{who} is incomplete; no numeric verdict")
    if earlier.benchmark_fingerprint is None:
        return RegressionVerdict(
            ComparisonState.UNKNOWN,
            earlier.id,
            f"{_why_unknown(earlier, who)}; no numeric verdict",
        )
    if earlier.benchmark_fingerprint != current.benchmark_fingerprint:
        return _mismatch(store, current, earlier, who, seed)
    verdict = detect_regression(
        current,
        earlier,
        thresholds,
        current_slices=store.slices(current.id),
        previous_slices=store.slices(earlier.id),
        treatment_change=treatment_change(current, earlier),
        seed=seed,
    )
    return _with_coverage(verdict, current, earlier, thresholds)


def _mismatch(store: Store, current: StoredRun, earlier: StoredRun, who: str, seed: int) -> RegressionVerdict:
    """The ``mismatch`` verdict: what changed, from the two benchmarks' manifests where the
    store kept both (the shortened revisions and digests otherwise), and the informational
    comparison of the questions whose labels and judged documents did not change."""
    then, now = store.manifest(earlier.benchmark_fingerprint), store.manifest(current.benchmark_fingerprint)
    if then is None and now is None and current.grader != RETRIEVAL_GRADER:
        # a kind that keeps no manifest (prompt and answer runs): the revisions and digests say what changed
        return RegressionVerdict(
            ComparisonState.MISMATCH,
            earlier.id,
            f"benchmark differs from {who}: {benchmark_difference(current, earlier)}; no numeric verdict",
        )
    if then is None or now is None:
        lacking = " and ".join(name for name, manifest in ((who, then), ("this run", now)) if manifest is None)
        return RegressionVerdict(
            ComparisonState.MISMATCH,
            earlier.id,
            f"benchmark differs from {who}: {benchmark_difference(current, earlier)}; the store kept no manifest "
            f"of the benchmark of {lacking} (stored before manifests were kept, or not written), so which "
            "documents and labels changed is not known; no numeric verdict",
        )
    named = PrivacyMode.METADATA_ONLY.value not in (current.privacy, earlier.privacy)
    same_corpus = current.provenance.get("corpus_revision") == earlier.provenance.get("corpus_revision")
    change = benchmark_change(then, now, named=named, same_corpus=same_corpus)
    parts = change.parts()
    if change.corpus_changed and not change.documents_known and None in change.document_counts:
        parts.insert(0, _corpus_changed(current, earlier))  # a corpus no manifest digested: its revisions
    protocol_changed = current.details.protocol != earlier.details.protocol
    if protocol_changed:
        parts.append(f"scoring protocol changed ({earlier.details.protocol} -> {current.details.protocol})")
    if not parts:
        parts.append(benchmark_difference(current, earlier))
    informational = None if protocol_changed else _informational(current, earlier, change, seed)
    return RegressionVerdict(
        ComparisonState.MISMATCH,
        earlier.id,
        f"benchmark differs from {who}: {'; '.join(parts)}; no numeric verdict",
        benchmark_change=change,
        informational=informational,
    )


def _picked(verdicts: Verdicts, keep: set[str]) -> Verdicts:
    mask = np.fromiter((q in keep for q in verdicts.ids), dtype=np.bool_, count=len(verdicts.ids))
    return Verdicts([q for q, kept in zip(verdicts.ids, mask.tolist(), strict=True) if kept], verdicts.hits[mask])


def _informational(
    current: StoredRun, earlier: StoredRun, change: BenchmarkChange, seed: int
) -> InformationalComparison | None:
    """Each binary rate of both runs over the unchanged questions both scored, paired by
    question as a comparable pair's are; None when no question is left to compare."""
    unchanged = set(change.unchanged)
    if not unchanged:
        return None
    names = current.details.rate_names
    rates: list[InformationalRate] = []
    for column in ("pass_rate", "mean_score"):
        before, now = earlier.paired_outcomes(column), current.paired_outcomes(column)
        if before is None or now is None:
            continue
        before, now = _picked(before, unchanged), _picked(now, unchanged)
        paired = paired_comparison(names[column], before, now, seed=seed)
        if paired is None:
            continue
        shared = set(before.ids) & set(now.ids)
        was = _picked(before, shared).hits
        became = _picked(now, shared).hits
        rates.append(
            InformationalRate(
                paired.rate,
                paired.questions,
                float(was.mean()),
                float(became.mean()),
                paired.newly_failing,
                paired.newly_passing,
                paired.p_value,
                paired.interval,
            )
        )
    if not rates:
        return None
    return InformationalComparison(len(change.unchanged), current.question_count - len(change.unchanged), tuple(rates))


def _with_coverage(
    verdict: RegressionVerdict, current: StoredRun, earlier: StoredRun, thresholds: RegressionThresholds
) -> RegressionVerdict:
    """The verdict with what label coverage says: the note where the runs measured it, and no
    numeric verdict (``unknown``) where ``min_judged`` is set and the candidate falls short."""
    # the current run's details are read already; the earlier run's only where coverage was measured
    top3 = [p for p in verdict.paired if p.rate == current.details.rate_names.get("mean_score")]
    newly_failing = top3[0].newly_failing if top3 else ()
    note = coverage_note(current, earlier, newly_failing)
    if thresholds.min_judged is not None:
        reason = labels_incomplete(current, thresholds.min_judged, note)
        if reason is not None:
            return RegressionVerdict(
                ComparisonState.UNKNOWN,
                earlier.id,
                reason,
                treatment_change=verdict.treatment_change,
                coverage=note,
            )
    return verdict if note is None else dataclasses.replace(verdict, coverage=note)
