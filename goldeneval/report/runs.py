"""Which two runs a comparison is of, and its verdict: the one entry every door calls.

``goldeneval compare RUN_A RUN_B`` names both runs (the verdict is
:func:`~goldeneval.history.comparison.compare_pair`'s); ``goldeneval compare RUN --against
previous|best|run:<id>|series:<name>`` and ``goldeneval report`` let the run's baseline choose
the earlier one, as the gate does (:func:`~goldeneval.history.comparison.compare_with_history`);
a run command's ``--summary-md``, ``--junit`` and the Dagster check pass the verdict they
have just made, so the comparison they show is that verdict's.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from goldeneval.core.baseline import PREVIOUS, Baseline
from goldeneval.core.errors import InputError
from goldeneval.core.gate import DEFAULT_THRESHOLDS, RegressionThresholds
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.history.comparison import compare_pair, compare_with_history
from goldeneval.report.comparison import build_comparison
from goldeneval.report.model import RunComparison, comparison_privacy
from goldeneval.report.sources import load_sources
from goldeneval.store import Store

__all__ = ["SourceRefs", "compare_named", "comparison_for"]


@dataclass(frozen=True)
class SourceRefs:
    """Where the question text and the documents' titles are read from (``--set``,
    ``--sets-dir``, ``--corpus``, ``--topics``); empty: the run's registered set and that set's corpus."""

    set_ref: str | None = None
    sets_dirs: tuple[Path, ...] = ()
    corpus_path: Path | None = None
    beir_split: str = "test"
    topics: Path | None = None
    topic_field: str | None = None


def _built(
    store: Store,
    current: StoredRun,
    earlier: StoredRun | None,
    verdict: RegressionVerdict,
    privacy: PrivacyMode,
    refs: SourceRefs,
    trend: bool,
) -> RunComparison:
    shown = comparison_privacy(privacy, current, earlier)
    sources = load_sources(
        current,
        shown,
        set_ref=refs.set_ref,
        sets_dirs=refs.sets_dirs,
        corpus_path=refs.corpus_path,
        beir_split=refs.beir_split,
        topics=refs.topics,
        topic_field=refs.topic_field,
    )
    return build_comparison(store, current, earlier, verdict, sources, privacy=shown, trend=trend)


def comparison_for(
    store: Store,
    current: StoredRun,
    *,
    verdict: RegressionVerdict | None = None,
    against: Baseline = PREVIOUS,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    privacy: PrivacyMode = PrivacyMode.FULL,
    refs: SourceRefs = SourceRefs(),
    trend: bool = True,
) -> RunComparison:
    """The comparison of a stored run with the earlier run its ``verdict`` names, or (no
    verdict yet) with the run ``against`` chooses, judged as the gate judges it."""
    if verdict is None:
        verdict = compare_with_history(store, current, thresholds, against)
    if verdict.previous_run_id:
        earlier = store.get_run(verdict.previous_run_id)
    elif not current.complete:  # no verdict for an incomplete run; its questions are still compared, for information
        earlier = store.previous_complete_run(current)
        earlier = None if earlier is None else store.get_run(earlier.id)
    else:
        earlier = None
    return _built(store, current, earlier, verdict, privacy, refs, trend)


def compare_named(
    store: Store,
    earlier_ref: str,
    current_ref: str,
    *,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    privacy: PrivacyMode = PrivacyMode.FULL,
    refs: SourceRefs = SourceRefs(),
    trend: bool = True,
) -> RunComparison:
    """Two runs named by id or unique prefix: ``current_ref`` judged against ``earlier_ref``."""
    current = store.find_run(current_ref)
    earlier = store.find_run(earlier_ref)
    if earlier.id == current.id:
        raise InputError(f"{earlier_ref!r} and {current_ref!r} name the same run, {current.id}: nothing to compare")
    verdict = compare_pair(store, current, earlier, thresholds)
    return _built(store, current, earlier, verdict, privacy, refs, trend)
