"""TREC pooling: the union of each source's top-k distinct documents per question, to be judged.

A source is a retriever, built as a retrieval run builds it and asked through the same
machinery (:func:`goldeneval.retrieval.asking.ask_to_depth`: timeouts, workers, over-fetch until
``depth`` distinct documents), or a stored run, whose kept documents are read with
:func:`goldeneval.retrieval.details.retrieval_details`.  Each pooled pair is appended to the
judgments file as a pool line (:mod:`goldeneval.judgments.judgments`) listing its sources and
ranks, written as it is made (no pair is held after its line).  Pooling again appends lines
only for new pairs and for known pairs that a new source also returned (a superseding line
with all their sources); grades are never touched.

The set file may hold questions without ``expected`` yet (a set being labelled): such a file
is read by :func:`goldeneval.retrieval.golden.load_draft_set`, which takes a missing
``expected`` as empty for pooling and judging only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from goldeneval.core.collector import plugin_collections
from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import InputError, one_line
from goldeneval.core.sets import corpus_for
from goldeneval.judgments.judgments import appending, json_string, pool_line_json, read_judgments, source_json
from goldeneval.retrieval.asking import ask_to_depth
from goldeneval.retrieval.details import QuestionColumns, retrieval_details
from goldeneval.retrieval.golden import GoldenQuestionSet
from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR, RetrieverContext, document_id_mapper
from goldeneval.retrieval.retrievers.registry import build_retriever
from goldeneval.store import StoreLocation, open_store, store_exists

__all__ = [
    "PoolResult",
    "Rankings",
    "RetrieverSource",
    "pool",
    "pooled_corpus",
    "retriever_rankings",
    "run_rankings",
]

Rankings = dict[str, list[str]]
"""Question id -> distinct document ids, best first."""


@dataclass(frozen=True)
class RetrieverSource:
    """A retriever to pool from, with its options."""

    retriever_id: str
    options: Mapping[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """The source's name in the judgments file: the id, with options as ``?k=v&k=v``."""
        if not self.options:
            return self.retriever_id
        return self.retriever_id + "?" + "&".join(f"{k}={v}" for k, v in sorted(self.options.items()))


@dataclass(frozen=True)
class PoolResult:
    pairs: int
    """Distinct (question, document) pairs the sources returned this time."""
    new_pairs: int
    """Of them, pairs the file did not hold."""
    new_sources: int
    """Known pairs that gained a source (a superseding pool line each)."""
    warnings: tuple[str, ...] = ()


# --------------------------------------------------------------------------- the set


# --------------------------------------------------------------------------- the sources


def retriever_rankings(
    golden_set: GoldenQuestionSet,
    source: RetrieverSource,
    depth: int,
    *,
    corpus: Corpus | None,
    cache_dir: Path,
    timeout_s: float | None,
    workers: int = 1,
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR,
) -> tuple[Rankings, list[str]]:
    """Each question's top ``depth`` distinct documents from the retriever, and a warning per
    question that errored (it contributes nothing)."""
    context = RetrieverContext(corpus=corpus, cache_dir=cache_dir, options=dict(source.options), golden_set=golden_set)
    with plugin_collections():
        retriever = build_retriever(source.retriever_id, context)
    questions = golden_set.questions
    answers, coded = ask_to_depth(
        retriever, questions, depth, document_id_mapper(chunk_separator), timeout_s=timeout_s, workers=workers
    )
    kept = coded.kept(depth)
    documents = coded.documents
    rankings: Rankings = {}
    warnings: list[str] = []
    for i, question in enumerate(questions):
        error = answers.errors[i]
        if error is not None:
            warnings.append(f"{source.label}: question {question.id!r} errored, nothing pooled from it: {error}")
            continue
        rankings[question.id] = [str(documents[code]) for code in kept.row(i).tolist()]
    return rankings, warnings


def run_rankings(location: StoreLocation, run_id: str, depth: int) -> tuple[str, Rankings]:
    """The stored run's id and each question's first ``depth`` kept documents."""
    if not store_exists(location):
        raise InputError(f"run {run_id!r} not found: the store {location} does not exist")
    stored = open_store(location).find_run(run_id)
    questions = retrieval_details(stored).questions
    if isinstance(questions, QuestionColumns):  # only each question's first ``depth`` documents read
        withheld = questions.documents is None and "ok" in questions.status
        tops = questions.top_documents(depth) if not withheld else None
        scored = [(i, question_id) for i, question_id in enumerate(questions.id) if questions.status[i] == "ok"]
        rankings = {question_id: (tops[i] or []) if tops is not None else [] for i, question_id in scored}
    else:  # formats 1 to 3: records
        withheld = any(q.documents is None for q in questions if q.scored)
        rankings = {q.id: list(q.documents or [])[:depth] for q in questions if q.scored}
    if stored.privacy == "metadata_only" or withheld:
        raise InputError(
            f"run {stored.id} was stored with privacy mode metadata_only: it holds no document ids to pool"
        )
    return stored.id, rankings


# --------------------------------------------------------------------------- pooling


def pool(
    out: Path,
    golden_set: GoldenQuestionSet,
    sources: Sequence[tuple[str, Callable[[], tuple[Rankings, list[str]]]]],
) -> PoolResult:
    """Pool the rankings each source gives (``(label, rankings())`` pairs, asked in order) and
    append the new pool lines to ``out``.  Questions a source ranks but the set lacks are left
    out with a warning.

    Streamed: once the sources have answered, the pairs are made question by question in set
    order (within one, in the order the sources found them) and each pool line is written as
    it is made, as text (:func:`~goldeneval.judgments.judgments.pool_line_json`), with no model
    object per pair and no pair held after its line."""
    existing = read_judgments(out, missing_ok=True)
    warnings = list(existing.warnings)
    known = {question.id for question in golden_set.questions}
    seen: set[str] = set()
    asked: list[tuple[str, Rankings]] = []
    for label, rankings_of in sources:
        if label in seen:
            warnings.append(f"{label}: given twice; pooled once")
            continue
        seen.add(label)
        rankings, source_warnings = rankings_of()
        warnings.extend(source_warnings)
        strays = sorted(set(rankings) - known)
        if strays:
            listed = one_line(", ".join(strays), 120)
            warnings.append(f"{label}: {len(strays)} question(s) not in set {golden_set.id!r} left out: {listed}")
        asked.append((label, rankings))
    encoded: dict[tuple[str, int], str] = {}  # one JSON text per (source, rank), shared by its pairs

    def source_text(label: str, rank: int) -> str:
        text = encoded.get((label, rank))
        if text is None:
            text = encoded[(label, rank)] = source_json(label, rank)
        return text

    pairs = new_pairs = new_sources = 0
    held = existing.pairs
    with appending(out) as write:
        for question in golden_set.questions:
            found: dict[str, list[tuple[str, int]]] = {}
            for label, rankings in asked:
                for rank, document in enumerate(rankings.get(question.id, ()), start=1):
                    found.setdefault(document, []).append((label, rank))
            if not found:
                continue
            pairs += len(found)
            question_json = json_string(question.id)
            text_json = json_string(question.text)
            for document, where in found.items():
                before = held.get((question.id, document)) if held else None
                if before is None:
                    new_pairs += 1
                else:
                    names = {s.source for s in before}
                    new = [w for w in where if w[0] not in names]
                    if not new:
                        continue
                    where = [(s.source, s.rank) for s in before] + new
                    new_sources += 1
                listed = ",".join([source_text(label, rank) for label, rank in where])
                write(pool_line_json(question_json, json_string(document), listed, text_json))
    return PoolResult(pairs=pairs, new_pairs=new_pairs, new_sources=new_sources, warnings=tuple(warnings))


def pooled_corpus(explicit: Path | None, golden_set: GoldenQuestionSet) -> Corpus | None:
    return corpus_for(explicit, golden_set.corpus)
