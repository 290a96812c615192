"""Running a golden set against a retriever: ask every question (:mod:`goldeneval.retrieval.asking`),
over-fetch where rankings fall short of the measurement depth, score the whole run at once
(:func:`goldeneval.retrieval.scoring.score_answers`).

Like ADR-072's ``RetrievalEvaluationService`` it neither persists nor compares, which
keeps it testable without a database.  Latency comes from a monotonic clock; a retriever
exception or a per-question timeout makes that question an ``error`` and the run goes on.
"""

from __future__ import annotations

import array
from collections.abc import Callable, Iterable, Mapping, MutableSequence, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

import numpy as np

from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import (
    Provenance,
    benchmark_fingerprint,
    retriever_provenance,
    variant_fingerprint,
)
from goldeneval.core.records import RunRecord, SliceRates, record_of
from goldeneval.core.spec import DEFAULT_TIMEOUT_S
from goldeneval.retrieval import columnar
from goldeneval.retrieval.asking import DEFAULT_BATCH_SIZE, Answers, ask_all
from goldeneval.retrieval.details import (
    COLUMNAR_FORMAT_VERSION,
    COVERAGE_FORMAT_VERSION,
    AggregatesDetail,
    JudgedDetail,
    QuestionColumns,
    QuestionDetail,
    RetrievalDetails,
)
from goldeneval.retrieval.encoding import CodedRun, RawRankings, RunCoder
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.labels import label_digest
from goldeneval.retrieval.metrics import (
    DEFAULT_AVERAGE_OVER,
    DEFAULT_METRICS,
    DEFAULT_RELEVANCE_LEVEL,
    AverageOver,
    Metric,
    measurement_depth,
    parse_metrics,
)
from goldeneval.retrieval.protocol import (
    DEFAULT_HIT_CUTOFFS,
    GRADER_ID,
    OVERFETCH_MULTIPLIER,
    TOP_K,
    first_raw_limit,
    judged_name,
    next_raw_limit,
    raw_ceiling,
    run_metrics,
    scoring_protocol,
)
from goldeneval.retrieval.results import Aggregates, JudgedSummary, QuestionResult, RateSummary, summarise_judged
from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR, Retriever, document_id_mapper
from goldeneval.retrieval.scored import ScoredAnswers
from goldeneval.retrieval.scoring import score_answers

__all__ = ["ASK_CHUNK", "DEFAULT_TIMEOUT_S", "AskedRun", "RetrievalRun", "ask_to_depth", "evaluate_retrieval"]

Progress = Callable[[Sequence[GoldenQuestion]], Iterable[GoldenQuestion]]
"""Wraps the questions as they are asked (a progress bar); gets the whole list, so it knows the total."""


@dataclass(frozen=True)
class RetrievalRun:
    """One evaluated run of a set against a retriever (ADR-072's set evaluation result)."""

    set_id: str
    series: str
    """The series name the run is stored under (the store's ``model`` column)."""
    retriever_id: str
    """The retriever id (registered or ``package.module:factory``) that produced the rankings."""
    results: Sequence[QuestionResult]
    """One result per question, in set order: the evaluator's :class:`ScoredAnswers` (backed
    by arrays, the records built only when read), or records read back from a hits table."""
    aggregates: Aggregates
    started_at: datetime
    provenance: Provenance = field(default_factory=Provenance)
    label_digest: str | None = None
    hit_cutoffs: tuple[int, ...] = field(default=DEFAULT_HIT_CUTOFFS)
    metric_names: tuple[str, ...] = field(default_factory=lambda: tuple(m.name for m in run_metrics()))
    """Every rank metric the run reports (hit@k for the hit cutoffs first), by name."""
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL
    unjudged: tuple[str, ...] = ()
    """Ids of questions the set's source left out for want of a relevant judgement."""
    warnings: tuple[str, ...] = ()
    """What the user should know about this run's input (never stored, shown by each door)."""
    judged_cutoffs: tuple[int, ...] = ()
    """The cutoffs judged@k is reported at; empty when the set records no judged negatives."""
    average_over: AverageOver = DEFAULT_AVERAGE_OVER
    """Which questions each metric's mean is over (:data:`goldeneval.retrieval.metrics.AVERAGE_OVER`)."""
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR
    """Where returned ids were cut to document ids (``''`` or None: kept whole); part of the protocol."""
    judged_only: bool = False
    """Whether the rank metrics were computed on condensed lists (trec_eval -J); part of the protocol."""
    manifest: BenchmarkManifest | None = None
    """The manifest of the benchmark it measured (:mod:`goldeneval.retrieval.manifest`), with
    document ids: filtered by the privacy mode when the run is recorded; None when unknown."""
    errors_reduced: bool = False
    """Whether the results' errors hold only their class already (read back from a
    ``metadata_only`` hits table): reduced again for the store, ``KeyError`` would become
    ``error``, not what the CLI stores for the same evaluation."""

    @property
    def metrics(self) -> tuple[Metric, ...]:
        return parse_metrics(self.metric_names)

    @property
    def depth(self) -> int:
        """The measurement depth: distinct documents kept per question (the deepest cutoff)."""
        return measurement_depth(self.metrics, TOP_K, judged_only=self.judged_only)

    @property
    def unmeasured(self) -> tuple[str, ...]:
        """Scored questions without expected documents: no-answer questions, which count in
        top-1/top-3 but have no rank metrics (trec_eval has no qrels for them)."""
        return tuple(r.question_id for r in self.results if r.scored and not r.judged)

    @property
    def short(self) -> tuple[str, ...]:
        """Scored questions whose ranking ended before the measurement depth: their deepest
        metrics count the missing ranks as misses."""
        depth = self.depth
        return tuple(r.question_id for r in self.results if r.scored and r.depth < depth)

    @property
    def benchmark_fingerprint(self) -> str | None:
        if self.label_digest is None:
            return None
        protocol = scoring_protocol(self.relevance_level, self.average_over, self.chunk_separator, self.judged_only)
        return benchmark_fingerprint(self.provenance.corpus_revision, self.label_digest, protocol)

    @property
    def variant_fingerprint(self) -> str | None:
        return variant_fingerprint(self.provenance)

    @property
    def judged(self) -> JudgedSummary | None:
        """judged@k overall and by form; None when the set records no judged negatives."""
        if not self.judged_cutoffs:
            return None
        names = [judged_name(k) for k in self.judged_cutoffs]
        extra_zeros = len(self.unjudged) if self.average_over == "all-judged" else 0
        if isinstance(self.results, ScoredAnswers):
            values = dict(self.results.judged_at)
            forms: list[str] = self.results.forms
            metrics, ends = self.results.metrics, self.results.unjudged_relevant
        else:
            count = len(self.results)

            def column(name: str, of: Callable[[QuestionResult], Mapping[str, float]]) -> np.ndarray:
                return np.fromiter(
                    (of(r).get(name, np.nan) if r.scored else np.nan for r in self.results),
                    dtype=np.float64,
                    count=count,
                )

            values = {name: column(name, lambda r: r.judged_at) for name in names}
            forms = [r.form for r in self.results]
            bounded = list(dict.fromkeys(name for r in self.results for name in r.unjudged_relevant))
            metrics = {name: column(name, lambda r: r.metrics) for name in bounded}
            ends = {name: column(name, lambda r: r.unjudged_relevant) for name in bounded}
        return summarise_judged(self.judged_cutoffs, values, forms, metrics=metrics, ends=ends, extra_zeros=extra_zeros)

    @property
    def complete(self) -> bool:
        return self.aggregates.overall.errors == 0

    @property
    def status(self) -> str:
        return "complete" if self.complete else "incomplete"

    def details(self, privacy: PrivacyMode = PrivacyMode.FULL, *, tables_run_id: str | None = None) -> RetrievalDetails:
        """The typed details record the store keeps, filtered by the privacy mode."""
        judged = self.judged
        if isinstance(self.results, ScoredAnswers):
            questions = _columns_of_scored(self.results)
        else:
            questions = QuestionColumns.from_rows(_records(self.results, self.depth, judged is not None))
        if privacy is PrivacyMode.METADATA_ONLY:
            # errors read back from a metadata_only table are their class already: only the documents go
            if self.errors_reduced:
                questions = questions.model_copy(update={"documents": None})
            else:
                questions = questions.without_content()
        return RetrievalDetails(
            # format 5 only where judged@k is held: every other run keeps format 4's shape
            format_version=COLUMNAR_FORMAT_VERSION if judged is None else COVERAGE_FORMAT_VERSION,
            protocol=scoring_protocol(self.relevance_level, self.average_over, self.chunk_separator, self.judged_only),
            top_k=TOP_K,
            overfetch_multiplier=OVERFETCH_MULTIPLIER,
            hit_cutoffs=list(self.hit_cutoffs),
            metrics=list(self.metric_names),
            relevance_level=self.relevance_level,
            measurement_depth=self.depth,
            unjudged=list(self.unjudged),
            aggregates=AggregatesDetail.model_validate(self.aggregates.to_dict()),
            questions=questions,
            retriever_id=self.retriever_id,
            tables_run_id=tables_run_id,
            judged=None if judged is None else JudgedDetail.model_validate(judged.to_dict()),
            average_over=None if self.average_over == DEFAULT_AVERAGE_OVER else self.average_over,
            judged_only=True if self.judged_only else None,
        )

    def to_record(self, privacy: PrivacyMode = PrivacyMode.FULL, *, tables_run_id: str | None = None) -> RunRecord:
        """ADR-072 decision 4: the run as an ADR-060 result row (top-1 -> pass_rate,
        top-3 -> mean_score, grader ``retrieval_hit_rate``), under its series name."""
        overall = self.aggregates.overall
        slices = [
            _slice(kind, value, summary)
            for kind, group in (
                ("form", self.aggregates.by_form),
                ("hard_class", self.aggregates.by_hard_class),
            )
            for value, summary in group.items()
        ]
        return record_of(
            self,
            privacy,
            grader=GRADER_ID,
            rates=(overall.top1_rate, overall.top3_rate),
            counts=(overall.questions, overall.scored, overall.errors),
            details=self.details(privacy, tables_run_id=tables_run_id),
            slices=slices,
            manifest=self.manifest,
        )


def _columns_of_scored(scored: ScoredAnswers) -> QuestionColumns:
    """The details' columns straight from the scoring arrays: no Python object per question
    or per document beyond the lists the JSON is written from, and in those each distinct
    value once (:func:`_shared_floats`).  The evaluator's own values, already typed, so
    constructed without re-validation (tests/test_details.py checks that they validate).

    The documents come first, while no list is built yet: the evaluator's are packed already
    and taken as they are; others are encoded here, their packed bytes the largest thing this
    makes, for a moment."""
    documents = scored.kept_documents.columns(scored.documents)
    ok = scored.ok
    failed = np.flatnonzero(~ok).tolist()
    depth: list[int | None] = scored.reached.tolist()
    top1: list[bool | None] = scored.top1.tolist()
    top3: list[bool | None] = scored.top3.tolist()
    for i in failed:  # an error has no depth and no verdict
        depth[i] = top1[i] = top3[i] = None
    metrics = {name: _shared_floats(values) for name, values in scored.metrics.items()}
    judged_at: dict[str, list[float | None]] | None = None
    unjudged_ranks: list[list[int]] | None = None
    ends: dict[str, list[float | None]] | None = None
    if scored.judged_at:
        judged_at = {name: _shared_floats(values) for name, values in scored.judged_at.items()}
    if scored.unjudged_relevant:
        ends = {name: _shared_floats(values) for name, values in scored.unjudged_relevant.items()}
    if scored.unjudged is not None:
        ranks = scored.unjudged.codes.tolist()
        bounds = scored.unjudged.offsets.tolist()
        unjudged_ranks = [ranks[bounds[i] : bounds[i + 1]] for i in range(len(bounds) - 1)]
    return QuestionColumns.model_construct(
        id=scored.question_ids.tolist(),
        form=scored.forms,
        hard_class=scored.hard_classes,
        depth=depth,
        top1_hit=top1,
        top3_hit=top3,
        latency_ms=_rounded_ms(scored.latency_ms),
        status=["ok" if error is None else "error" for error in scored.errors],
        error=list(scored.errors),
        metrics=metrics,
        documents=documents,
        judged_at=judged_at,
        unjudged_ranks=unjudged_ranks,
        unjudged_relevant=ends,
    )


def _shared_floats(values: np.ndarray) -> list[float | None]:
    """``values`` as a list, NaN as None, with one float object per distinct value: a metric
    of a large run takes a few distinct values (1 / rank, hit or miss), and a list sharing them
    costs 8 bytes a question, not 32.  Values are told apart by their bits (0.0 and -0.0 stay
    two), so the JSON written from the list is what it was."""
    column = np.ascontiguousarray(values, dtype=np.float64)
    distinct, first, inverse = np.unique(column.view(np.int64), return_index=True, return_inverse=True)
    shared = np.empty(distinct.size, dtype=object)
    listed: list[float | None] = column[first].tolist()
    for k in np.flatnonzero(np.isnan(column[first])).tolist():
        listed[k] = None
    shared[:] = listed
    result: list[float | None] = shared[inverse.reshape(-1)].tolist()
    return result


def _rounded_ms(latency_ms: Sequence[float]) -> list[float]:
    """Latencies rounded by Python's correctly rounded ``round`` (as records have them), each
    latency object once: a batch's questions share one.  Keyed by identity, not by value, so
    that values equal but not alike (``0.0`` and ``-0.0``, ``1`` and ``1.0``) and NaN round as
    themselves; ``values`` holds every object, so no identity is reused meanwhile.  When every
    rounded latency is a float, equal ones (by their bits) then share one object too."""
    values = list(latency_ms)
    by_object: dict[int, float] = {}
    for ms in values:
        if id(ms) not in by_object:
            by_object[id(ms)] = round(ms, 3)
    rounded = [by_object[id(ms)] for ms in values]
    del values, by_object
    if not rounded or set(map(type, rounded)) != {float}:
        return rounded
    column = np.asarray(rounded, dtype=np.float64)
    _, first, inverse = np.unique(column.view(np.int64), return_index=True, return_inverse=True)
    shared = np.empty(first.size, dtype=object)
    shared[:] = [rounded[i] for i in first.tolist()]
    result: list[float] = shared[inverse.reshape(-1)].tolist()
    return result


def _records(results: Sequence[QuestionResult], depth: int, coverage: bool = False) -> list[QuestionDetail]:
    """Results read back from a hits table, as the details' records (with their judged@k
    where ``coverage``)."""
    return [
        QuestionDetail.model_construct(
            id=r.question_id,
            form=r.form,
            hard_class=r.hard_class,
            documents=list(r.documents[:depth]),
            depth=r.depth if r.scored else None,
            top1_hit=r.top1_hit if r.scored else None,
            top3_hit=r.top3_hit if r.scored else None,
            latency_ms=round(r.latency_ms, 3),
            status=r.status.value,
            error=r.error,
            metrics=dict(r.metrics),
            judged_at=dict(r.judged_at) if coverage else None,
            unjudged_ranks=list(r.unjudged_ranks) if coverage else None,
            unjudged_relevant=dict(r.unjudged_relevant) if coverage and r.unjudged_relevant else None,
        )
        for r in results
    ]


def _slice(kind: str, value: str, summary: RateSummary) -> SliceRates:
    return SliceRates(kind, value, summary.questions, summary.scored, summary.top1_rate, summary.top3_rate)


def evaluate_retrieval(
    golden_set: GoldenQuestionSet,
    retriever: Retriever,
    retriever_id: str,
    *,
    series: str | None = None,
    chunk_separator: str | None = DEFAULT_CHUNK_SEPARATOR,
    to_document: Callable[[str], str] | None = None,
    timeout_s: float | None = DEFAULT_TIMEOUT_S,
    hit_cutoffs: Sequence[int] = DEFAULT_HIT_CUTOFFS,
    metrics: Sequence[Metric] = DEFAULT_METRICS,
    relevance_level: int = DEFAULT_RELEVANCE_LEVEL,
    average_over: AverageOver = DEFAULT_AVERAGE_OVER,
    judged_only: bool = False,
    provenance: Provenance | None = None,
    progress: Progress | None = None,
    workers: int = 1,
    batch_size: int | None = None,
) -> RetrievalRun:
    """Ask ``retriever`` every question of ``golden_set`` and score the answers.

    ``series`` is the name the run is stored under (default: ``retriever_id``).
    ``chunk_separator`` cuts each returned id to its document id (the protocol names a
    separator other than the default); ``to_document``, a mapping of the caller's own, replaces it.
    ``metrics`` are reported beside ``hit@k`` for each of ``hit_cutoffs``; the deepest of
    them is the measurement depth (see :func:`ask_to_depth`); ``average_over`` says which
    questions their means are over (trec_eval's ``all-judged`` counts the set's ``unjudged``);
    ``judged_only`` computes them on condensed lists (trec_eval -J), never the hits.
    ``provenance`` defaults to what the retriever declares (unknown when it cannot say).
    ``workers`` calls run at once and ``batch_size`` questions go to one ``retrieve_batch``
    call when the retriever has one (:mod:`goldeneval.retrieval.asking`); neither changes a result.
    """
    declared = provenance if provenance is not None else retriever_provenance(retriever, retriever_id)
    mapper = to_document or document_id_mapper(chunk_separator)
    reported = run_metrics(hit_cutoffs, metrics)
    depth = measurement_depth(reported, TOP_K, judged_only=judged_only)
    started_at = datetime.now(UTC)
    questions = golden_set.questions
    digest = label_digest(golden_set)  # before asking: its encoding of the set comes and goes while little is held
    answers, coded = ask_to_depth(
        retriever,
        questions,
        depth,
        mapper,
        timeout_s=timeout_s,
        workers=workers,
        batch_size=batch_size,
        progress=_ticker(progress, questions),
    )
    scored = score_answers(
        questions,
        coded.raw,  # the raw rankings as the coded arrays hold them
        answers.errors,
        answers.latency_ms,
        mapper,
        reported,
        depth=depth,
        relevance_level=relevance_level,
        coded=coded,
        average_over=average_over,
        left_out=len(golden_set.unjudged),
        judged_only=judged_only,
    ).with_packed_documents()  # the run's codes become the packed documents: ``coded`` is not read again
    del answers, coded
    return RetrievalRun(
        set_id=golden_set.id,
        series=series or retriever_id,
        retriever_id=retriever_id,
        results=scored,
        aggregates=scored.aggregates,
        started_at=started_at,
        provenance=declared,
        label_digest=digest,
        hit_cutoffs=tuple(hit_cutoffs),
        metric_names=tuple(metric.name for metric in reported),
        relevance_level=relevance_level,
        unjudged=golden_set.unjudged,
        judged_cutoffs=scored.judged_cutoffs,
        average_over=average_over,
        chunk_separator=chunk_separator,
        judged_only=judged_only,
    )


ASK_CHUNK = 8192
"""Questions asked at a time (rounded to whole batches): their rankings are coded into the run's
arrays and dropped before the next ones are asked, so a run never holds every returned id as a
string in a tuple (100 ids a question: 856 bytes, 856 MB for 1,000,000 questions)."""


@dataclass
class AskedRun:
    """What :func:`ask_to_depth` found, per question in set order (columns, not objects)."""

    returned: Sequence[tuple[str, ...]]
    """Each question's final raw ranking (empty for an error), read from the coded arrays."""
    errors: list[str | None]
    latency_ms: MutableSequence[float]
    """All calls of each question together (an ``array('d')``: 8 bytes a question)."""


def ask_to_depth(
    retriever: Retriever,
    questions: Sequence[GoldenQuestion],
    depth: int,
    to_document: Callable[[str], str],
    *,
    timeout_s: float | None,
    workers: int = 1,
    batch_size: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> tuple[AskedRun, CodedRun]:
    """Every question's raw ranking, long enough for the protocol and for ``depth`` distinct
    documents, and the run coded as arrays.

    Each question is first asked for :func:`~goldeneval.retrieval.scoring.first_raw_limit` ids.  While
    its ranking collapses to fewer than ``depth`` documents and the retriever returned all it
    was asked for (so it may have more), it is asked again for ``OVERFETCH_MULTIPLIER`` times
    as many, up to :func:`~goldeneval.retrieval.scoring.raw_ceiling` ids.  Which rankings fall short is
    read off the whole run's arrays at once, not question by question.  ``timeout_s`` bounds
    all calls of a question together: a deeper call gets what is left of it.

    The questions are asked :data:`ASK_CHUNK` at a time (in order, whole batches each, so the
    calls are the ones a single :func:`~goldeneval.retrieval.asking.ask_all` would make) and each
    chunk's rankings are coded (:class:`~goldeneval.retrieval.scoring.RunCoder`) before the next is
    asked.  A round of deeper calls is coded apart; when there was one, the final rankings are
    coded again from the rounds' arrays, so the coded run is what
    :func:`~goldeneval.retrieval.scoring.code_run` makes of the final rankings.
    """
    n = len(questions)
    texts = [question.text for question in questions]
    limit = first_raw_limit(depth)
    errors: list[str | None] = [None] * n
    latency_ms = array.array("d", bytes(8 * n))
    size = DEFAULT_BATCH_SIZE if batch_size is None else batch_size
    chunk = max(1, ASK_CHUNK // size) * size
    first = RunCoder(n, n * limit, to_document)
    for start in range(0, n, chunk):
        rows = range(start, min(start + chunk, n))
        answers = ask_all(
            retriever,
            texts[start : rows.stop],
            limit,
            timeout_s=timeout_s,
            workers=workers,
            batch_size=batch_size,
            progress=progress,
        )
        first.add(answers.returned)
        _note(answers, rows, errors, latency_ms)
        del answers
    rankings, raw = first.rankings()
    # Where each question's final ranking lies: (round, row in that round); round -1: emptied.
    rounds: list[tuple[columnar.Rankings, RawRankings]] = [(rankings, raw)]
    owner = np.zeros(n, dtype=np.int64)
    row_in_round = np.arange(n, dtype=np.int64)
    limits = np.full(n, limit, dtype=np.int64)
    candidates = np.arange(n, dtype=np.int64)
    ceiling = raw_ceiling(depth)
    first_collapsed: columnar.Rankings | None = columnar.collapse(rankings, depth)
    while True:
        ok = np.fromiter((error is None for error in errors), dtype=np.bool_, count=n)[candidates]
        last = rounds[-1][0]
        collapsed = first_collapsed if first_collapsed is not None else columnar.collapse(last, depth)
        distinct = np.diff(collapsed.offsets)
        del collapsed
        short = ok & (last.lengths == limits[candidates]) & (limits[candidates] < ceiling) & (distinct < depth)
        again = candidates[short].tolist()
        if not again:
            break
        spent_s = [latency_ms[i] / 1000.0 for i in again]
        if timeout_s is not None:
            for i, spent in zip(again, spent_s, strict=True):
                if spent >= timeout_s:  # nothing left for a deeper call
                    errors[i] = f"timed out after {timeout_s:g} s"
                    owner[i] = -1
            kept = [(i, spent) for i, spent in zip(again, spent_s, strict=True) if spent < timeout_s]
            again, spent_s = [i for i, _ in kept], [spent for _, spent in kept]
            if not again:
                break
        deeper = [next_raw_limit(int(limits[i]), depth) for i in again]
        coder = RunCoder(len(again), sum(deeper), to_document)
        for start in range(0, len(again), ASK_CHUNK):
            part = again[start : start + ASK_CHUNK]
            more = ask_all(
                retriever,
                [texts[i] for i in part],
                deeper[start : start + ASK_CHUNK],
                timeout_s=timeout_s,
                budgets_s=None if timeout_s is None else [timeout_s - s for s in spent_s[start : start + ASK_CHUNK]],
                workers=workers,
            )
            coder.add(more.returned)  # an errored call returned nothing: its ranking is empty
            _note(more, part, errors, latency_ms)
            del more
        candidates = np.asarray(again, dtype=np.int64)
        limits[candidates] = deeper
        owner[candidates] = len(rounds)
        row_in_round[candidates] = np.arange(candidates.size, dtype=np.int64)
        rounds.append(coder.rankings())
        first_collapsed = None  # the final rankings are coded afresh: collapsed when scored
    if len(rounds) == 1:
        coded = first.finish(questions)
        # The same rankings, collapsed once: the scoring reads them (CodedRun.kept) without a
        # second scan, which at 1,000,000 x 100 marks 100 MB of positions at the run's fullest.
        if first_collapsed is not None:
            coded.collapsed[depth] = coded.rankings if first_collapsed is rankings else first_collapsed
    else:
        coded = _recoded(questions, rounds, owner, row_in_round, to_document)
    return AskedRun(coded.raw, errors, latency_ms), coded


def _note(answers: Answers, rows: Iterable[int], errors: list[str | None], latency_ms: MutableSequence[float]) -> None:
    """A chunk's errors and latencies, into the run's columns (latencies add up over rounds)."""
    for j, i in enumerate(rows):
        errors[i] = answers.errors[j]
        latency_ms[i] += answers.latency_ms[j]


def _recoded(
    questions: Sequence[GoldenQuestion],
    rounds: Sequence[tuple[columnar.Rankings, RawRankings]],
    owner: np.ndarray,
    row_in_round: np.ndarray,
    to_document: Callable[[str], str],
) -> CodedRun:
    """The final rankings (each question's from the last round that asked it; none where its
    time ran out) coded afresh, :data:`ASK_CHUNK` questions at a time."""
    n = len(questions)
    lengths = np.zeros(n, dtype=np.int64)
    for r, (rankings, _) in enumerate(rounds):
        mine = owner == r
        lengths[mine] = rankings.lengths[row_in_round[mine]]
    coder = RunCoder(n, int(lengths.sum()), to_document)
    owners, rows = owner.tolist(), row_in_round.tolist()
    for start in range(0, n, ASK_CHUNK):
        coder.add(
            [rounds[owners[i]][1][rows[i]] if owners[i] >= 0 else () for i in range(start, min(start + ASK_CHUNK, n))]
        )
    return coder.finish(questions)


def _ticker(progress: Progress | None, questions: Sequence[GoldenQuestion]) -> Callable[[int], None] | None:
    """``progress`` (which wraps the question list, like tqdm) as a callback told how many
    more questions were answered; the wrapped iterator is drained at the last question."""
    if progress is None:
        return None
    steps = iter(progress(questions))
    left = len(questions)

    def tick(n: int) -> None:
        nonlocal left
        for _ in range(n):
            next(steps, None)
        left -= n
        if left <= 0:
            for _ in steps:  # let the wrapper see the end (tqdm closes its bar there)
                pass

    return tick
