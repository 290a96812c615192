"""One evaluation end to end: build, run, store, compare.  The CLI and the Dagster assets
both call these functions, so the two give the same runs."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from goldeneval.comparison import PREVIOUS, Baseline, compare_with_history
from goldeneval.corpus import Corpus, load_corpus
from goldeneval.evaluation import DEFAULT_TIMEOUT_S, Progress, RetrievalRun, evaluate_retrieval
from goldeneval.golden import GoldenQuestionSet
from goldeneval.privacy import PrivacyMode
from goldeneval.provenance import Provenance, retriever_provenance
from goldeneval.regression import DEFAULT_THRESHOLDS, RegressionThresholds, RegressionVerdict
from goldeneval.retrievers.base import DEFAULT_CHUNK_SEPARATOR, RetrieverContext, document_id_mapper
from goldeneval.retrievers.registry import build_retriever
from goldeneval.scoring import DEFAULT_HIT_CUTOFFS
from goldeneval.store import ResultStore, StoredRun

__all__ = ["RetrievalOutcome", "corpus_for", "record_and_compare", "run_retrieval_evaluation", "verdict_for"]


@dataclass(frozen=True)
class RetrievalOutcome:
    run: RetrievalRun
    stored: StoredRun
    verdict: RegressionVerdict


def corpus_for(golden_set: GoldenQuestionSet, corpus_path: str | Path | None) -> Corpus | None:
    """The corpus given explicitly, else the one the set names, else none."""
    path = corpus_path or golden_set.corpus
    return load_corpus(path) if path else None


def record_and_compare(
    run: RetrievalRun,
    store: ResultStore,
    thresholds: RegressionThresholds,
    privacy: PrivacyMode = PrivacyMode.FULL,
    baseline: Baseline = PREVIOUS,
) -> RetrievalOutcome:
    """Save the run, then compare it with the chosen earlier run of its series."""
    stored = store.save_run(run.to_record(privacy))
    return RetrievalOutcome(run, stored, verdict_for(store, stored, thresholds, baseline))


def verdict_for(
    store: ResultStore,
    stored: StoredRun,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    baseline: Baseline = PREVIOUS,
) -> RegressionVerdict:
    """The verdict of an already stored run against the earlier runs of its series."""
    return compare_with_history(store, stored, thresholds, baseline)


def run_retrieval_evaluation(
    golden_set: GoldenQuestionSet,
    retriever_id: str,
    open_store: Callable[[], ResultStore],
    *,
    corpus: Corpus | None,
    cache_dir: Path,
    options: Mapping[str, str] | None = None,
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS,
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    hit_cutoffs: Sequence[int] = DEFAULT_HIT_CUTOFFS,
    declared_provenance: Provenance | None = None,
    privacy: PrivacyMode = PrivacyMode.FULL,
    baseline: Baseline = PREVIOUS,
    progress: Progress | None = None,
) -> RetrievalOutcome:
    """Build the retriever, evaluate, then store and compare.

    The store is opened only once the input has proved valid and the run is measured, so
    a bad set, corpus or retriever writes nothing (not even an empty store file).
    ``declared_provenance`` (from configuration) overrides the retriever's own declaration
    field by field, for retrievers that cannot say it themselves.
    """
    retriever = build_retriever(
        retriever_id,
        RetrieverContext(corpus=corpus, cache_dir=cache_dir, options=options or {}, golden_set=golden_set),
    )
    run = evaluate_retrieval(
        golden_set,
        retriever,
        retriever_id,
        to_document=document_id_mapper(chunk_separator),
        timeout_s=timeout_s,
        hit_cutoffs=hit_cutoffs,
        provenance=retriever_provenance(retriever, retriever_id).merged_with(declared_provenance or Provenance()),
        progress=progress,
    )
    return record_and_compare(run, open_store(), thresholds, privacy, baseline)
