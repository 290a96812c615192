"""Retrieval runs through the one door: evaluate here, record and judge as every run.

* :func:`evaluate` — build the retriever from a :class:`~goldeneval.retrieval.spec.RunSpec`,
  ask every question, score (no store);
* :func:`goldeneval.history.door.record` and :func:`goldeneval.history.door.judge` — the verbs
  every kind of run shares (store, comparison states, thresholds, gate);
* :func:`run` — the CLI's door: everything that can be refused is checked before anything
  is written.  The Dagster assets call the same verbs, each in its own asset.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from goldeneval.core.collector import fewer_collections, plugin_collections
from goldeneval.core.corpus import Corpus, shared_corpora
from goldeneval.core.errors import InputError, one_line
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import retriever_provenance
from goldeneval.core.secret_scan import remembered_scans
from goldeneval.core.set_files import remembered_parses
from goldeneval.core.sets import corpus_for, expect_set_id
from goldeneval.core.workers import usable_workers
from goldeneval.history import door
from goldeneval.retrieval.evaluation import Progress, evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestionSet, forget_loaded
from goldeneval.retrieval.manifest import build_manifest
from goldeneval.retrieval.metrics import WHOLE_RANKING_KINDS
from goldeneval.retrieval.protocol import GRADER_ID
from goldeneval.retrieval.retrievers.base import RetrieverContext, check_judged_ids, document_id_mapper
from goldeneval.retrieval.retrievers.registry import build_retriever
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.sets import resolve_golden_set
from goldeneval.retrieval.spec import RunSpec
from goldeneval.store import StoreLocation

__all__ = [
    "Outcome",
    "evaluate",
    "labels_outside_corpus",
    "load_golden_set",
    "run",
]


Outcome = door.Outcome[RetrievalRun]
"""A stored retrieval run and its verdict."""


def load_golden_set(spec: RunSpec) -> GoldenQuestionSet:
    """The set as it is now (files are read again, so a label change is seen; a YAML file's
    text read before is parsed from the cache, as :func:`remembered_parses` allows)."""
    with remembered_parses(spec.cache_dir, spec.privacy) as keep:
        golden_set = resolve_golden_set(
            spec.set_ref,
            spec.sets_dirs,
            beir_split=spec.beir_split,
            topics=spec.topics,
            topic_field=spec.topic_field,
            corpus=spec.corpus,
        )
        keep(golden_set.id)  # only the evaluated set's file, not every set the registry read
    return expect_set_id(golden_set, spec.set_ref, spec.expected_set_id)


@fewer_collections()
def evaluate(
    spec: RunSpec,
    *,
    golden_set: GoldenQuestionSet | None = None,
    progress: Progress | None = None,
    retriever_progress: bool = True,
) -> RetrievalRun:
    """Build the retriever, ask every question of the set, score.  Stores nothing.

    The retriever's context carries the set (replaying retrievers key rankings by question
    id) and ``retriever_progress`` (whether it may show bars of its own, such as dense
    encoding); the spec's declared provenance overrides the retriever's own, field by field.
    Judged ids holding the chunk separator are refused first, whatever the retriever.
    """
    with shared_corpora():  # a BEIR folder's corpus.jsonl is read once, not for the set and again here
        golden_set = golden_set or load_golden_set(spec)
        judged = (doc for question in golden_set.questions for doc in question.judged)
        check_judged_ids(judged, spec.chunk_separator, golden_set.id)
        corpus = corpus_for(spec.corpus, golden_set.corpus)
    warnings = (
        *labels_outside_corpus(golden_set, corpus, spec),
        *negatives_wanted(golden_set, spec),
        *corpus_ids_cut(corpus, spec),
    )
    context = RetrieverContext(
        corpus=corpus,
        cache_dir=spec.cache_dir,
        options=spec.options,
        golden_set=golden_set,
        progress=retriever_progress,
    )
    with plugin_collections():
        retriever = build_retriever(spec.retriever_id, context)
    with remembered_scans(spec.cache_dir):  # the retriever's provenance is the same run after run
        provenance = retriever_provenance(retriever, spec.retriever_id).merged_with(spec.provenance)
    run = evaluate_retrieval(
        golden_set,
        retriever,
        spec.retriever_id,
        series=spec.series,
        chunk_separator=spec.chunk_separator,
        timeout_s=spec.timeout_s,
        workers=spec.workers,
        batch_size=spec.batch_size,
        hit_cutoffs=spec.hit_cutoffs,
        metrics=spec.parsed_metrics,
        relevance_level=spec.relevance_level,
        average_over=spec.average_over,
        judged_only=spec.judged_only,
        provenance=provenance,
        progress=progress,
    )
    manifest = build_manifest(golden_set, corpus, provenance.corpus_revision, run.benchmark_fingerprint)
    retriever_warnings = tuple(getattr(retriever, "warnings", ()))  # e.g. goldeneval.trec_run's reading
    _, workers_warning = usable_workers(spec.workers, "questions", retriever=retriever)
    concurrency = (workers_warning,) if workers_warning else ()
    return dataclasses.replace(run, warnings=(*warnings, *retriever_warnings, *concurrency), manifest=manifest)


def labels_outside_corpus(golden_set: GoldenQuestionSet, corpus: Corpus | None, spec: RunSpec) -> tuple[str, ...]:
    """A warning when expected ids are not in the corpus: those questions can never be hit,
    which usually means the labels and the corpus do not belong together.  ``spec.strict``
    makes it invalid input.  In ``metadata_only`` the ids are counted, never named."""
    if corpus is None:
        return ()
    expected = {doc for question in golden_set.questions for doc in question.expected}
    missing = sorted(expected - corpus.ids)
    if not missing:
        return ()
    message = f"{len(missing)} of {len(expected)} expected document ids of set {golden_set.id!r} are not in the corpus"
    if spec.privacy is PrivacyMode.FULL:
        message += ": " + one_line(", ".join(missing), 200)
    if spec.strict:
        raise InputError(f"{message} (--strict)")
    return (message,)


def negatives_wanted(golden_set: GoldenQuestionSet, spec: RunSpec) -> tuple[str, ...]:
    """A warning when bpref, infAP or condensed lists run on a set that records no judged
    negatives: every document but the expected ones is then unjudged, so they degenerate."""
    asked = [m.name for m in spec.parsed_metrics if m.kind.key in WHOLE_RANKING_KINDS]
    if spec.judged_only:
        asked.append("--judged-only")
    if not asked or golden_set.records_negatives:
        return ()
    return (
        f"{', '.join(asked)}: set {golden_set.id!r} records no judged negatives, so every document but the "
        "expected ones is unjudged and these measures degenerate; judge the pool (goldeneval pool, judge, "
        "judgments to-set) or read TREC qrels, whose relevance-0 rows are judged negatives",
    )


def corpus_ids_cut(corpus: Corpus | None, spec: RunSpec) -> tuple[str, ...]:
    """A warning when corpus document ids hold the chunk separator: a retriever returning such
    a document's id has it cut to another id (``C#1`` read as ``C``), silently otherwise.  In
    ``metadata_only`` the ids are counted, never named."""
    if corpus is None or not spec.chunk_separator:
        return ()
    to_document = document_id_mapper(spec.chunk_separator)
    separator = spec.chunk_separator
    cut = sorted(doc_id for doc_id in corpus.ids if separator in doc_id and to_document(doc_id) != doc_id)
    if not cut:
        return ()
    message = (
        f"{len(cut)} document ids of the corpus contain the chunk separator {spec.chunk_separator!r}: a returned "
        "id is cut at it, so each is read as the id before it; pass --chunk-separator '' to keep ids whole"
    )
    if spec.privacy is PrivacyMode.FULL:
        message += f" (e.g. {cut[0]!r})"
    return (message,)


def run(spec: RunSpec, store_location: StoreLocation | Path, *, progress: Progress | None = None) -> Outcome:
    """Evaluate, record and judge one spec: the CLI's door.

    Everything that can be refused is checked before anything is written: the set, corpus
    and retriever by evaluating, a pinned baseline before the evaluation starts, so invalid
    input leaves the store as it was (not even an empty store file is created).
    """
    location = StoreLocation.parse(store_location)
    with shared_corpora():  # the set's corpus.jsonl (BEIR) is the retriever's: read once
        golden_set = load_golden_set(spec)
        pinned = door.pinned_baseline(location, spec, golden_set.id, GRADER_ID)
        # no question bar (--no-progress): no bar of the retriever's either
        evaluated = evaluate(spec, golden_set=golden_set, progress=progress, retriever_progress=progress is not None)
    forget_loaded(golden_set)  # the run holds what it reads of the set: the questions go before it is written
    del golden_set
    return door.record_and_judge(location, evaluated, spec, pinned=pinned)
