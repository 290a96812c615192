"""Arrow tables of a set and a run, hive-style Parquet files, and runs read back from them.

Three tables, each obeying the privacy mode (ADR-215, decision 5):

* ``golden_question_sets`` — one row per question: id, form, hard class, number of expected
  documents; with ``full`` also the text, the expected ids and the answer gist.
* ``retriever_rankings`` — one row per returned id: question id, rank, whether its document
  is a target, latency; with ``full`` also the returned id and its document id.
* ``question_hits`` — one row per question: form, hard class, status, top-1 and top-3 hit,
  latency, rank metrics and the error (in ``metadata_only`` only its class: a message can
  quote a question or an id); with ``full`` also the distinct top-3 and top-10 documents;
  for a set with judged negatives also ``judged_at`` (judged@k), ``unjudged_ranks`` and
  ``unjudged_relevant`` (each metric with the unjudged documents of its top k relevant).

Files are laid out as ``<root>/<table>/set=<id>/retriever=<name>/<time>_<run>.parquet``, so
``read_parquet('<root>/<table>/**/*.parquet', hive_partitioning=true)`` reads the whole
history with ``set`` and ``retriever`` columns.  A ``question_hits`` file carries the run's
identity (set, retriever, start, provenance, label digest) in its schema metadata, so the
run can be rebuilt from it: :func:`run_from_hits`.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pyarrow as pa

from goldeneval.core.privacy import PrivacyMode, content_free_error
from goldeneval.core.provenance import Provenance
from goldeneval.retrieval import columnar
from goldeneval.retrieval.encoding import RawRankings
from goldeneval.retrieval.golden import GoldenQuestionSet
from goldeneval.retrieval.metrics import DEFAULT_AVERAGE_OVER
from goldeneval.retrieval.protocol import TOP_K
from goldeneval.retrieval.results import QuestionResult, QuestionStatus, aggregate
from goldeneval.retrieval.retrievers.base import DEFAULT_CHUNK_SEPARATOR, document_id_mapper
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.scored import ScoredAnswers
from goldeneval.store.parquet import (
    STAMP_FIELDS,
    TABLE_FORMAT_VERSION,
    TableInBatches,
    file_run_id,
    markdown_preview,
    partition_folder,
    read_identity,
    read_table,
    run_files,
    stamp_columns,
    stamped_batches,
    stored_run_id_for,
    table_privacy,
    with_identity,
    write_partition_file,
)

__all__ = [
    "RUN_METADATA_KEY",
    "file_run_id",
    "golden_set_table",
    "hits_table",
    "hits_tables_run_id",
    "markdown_preview",
    "partition_folder",
    "rankings_table",
    "read_table",
    "run_files",
    "run_from_hits",
    "run_privacy",
    "stored_run_id_for",
    "write_partition_file",
]

RUN_METADATA_KEY = b"goldeneval.run"


def golden_set_table(
    golden_set: GoldenQuestionSet, privacy: PrivacyMode, run_id: str, evaluated_at: datetime
) -> pa.Table:
    questions = golden_set.questions
    columns: dict[str, pa.Array] = {
        "question_id": pa.array([q.id for q in questions], pa.string()),
        "form": pa.array([q.form.value for q in questions], pa.string()),
        "hard_class": pa.array([q.hard_class for q in questions], pa.string()),
        "expected_count": pa.array([len(q.expected) for q in questions], pa.int32()),
        "form_derived": pa.array([q.form_derived for q in questions], pa.bool_()),
    }
    if privacy is PrivacyMode.FULL:
        columns["text"] = pa.array([q.text for q in questions], pa.string())
        columns["expected"] = pa.array([sorted(q.expected) for q in questions], pa.list_(pa.string()))
        columns["answer_gist"] = pa.array([q.answer_gist for q in questions], pa.string())
    return stamp_columns(pa.table(columns), run_id, evaluated_at)


def rankings_table(
    run: RetrievalRun,
    privacy: PrivacyMode,
    run_id: str,
    *,
    to_document: Callable[[str], str] | None = None,
) -> TableInBatches:
    """The raw overfetched ranking of every question, one row per returned id, made
    :data:`_ROW_BLOCK` rows at a time (a 100,000-question run at depth 100 is ten million
    rows: whole, 800 MB of fresh memory, and a third of the Dagster job's time at that size).

    Each returned id maps to its document as the run's own were (``run.chunk_separator``),
    unless ``to_document`` says otherwise.  Built column by column, not row by row: the
    mapping is called once per distinct
    returned id, each distinct id and document is converted to Arrow once and taken by code,
    and whether a row's document is expected is a binary search of its (question, document)
    code among the expected ones (``np.isin`` sorted all ten million: 1.3 s)."""
    ids, lengths, returned_codes, distinct, expected, latency_ms = _rankings_of(run.results)
    started_at = run.started_at  # what the batches need of the run object: they do not keep it
    total = int(lengths.sum())
    starts: np.ndarray = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    to_document = to_document or document_id_mapper(run.chunk_separator)
    mapped = [to_document(returned_id) for returned_id in distinct]
    document_code: dict[str, int] = {}
    mapped_codes = np.fromiter(
        (document_code.setdefault(doc, len(document_code)) for doc in mapped), dtype=np.int64, count=len(mapped)
    )
    targets = _target_keys(expected, document_code)
    latency = np.fromiter(latency_ms, dtype=np.float64, count=len(lengths))
    with_ids = privacy is not PrivacyMode.METADATA_ONLY
    question_ids = pa.array(ids, pa.string())
    returned = pa.array(distinct, pa.string()) if with_ids else None
    documents = pa.array(list(document_code), pa.string()) if with_ids else None
    id_fields = [pa.field("returned_id", pa.string()), pa.field("document_id", pa.string())] if with_ids else []
    schema = pa.schema(
        [
            pa.field("question_id", pa.string()),
            pa.field("rank", pa.int32()),
            *id_fields,
            pa.field("is_target", pa.bool_()),
            pa.field("latency_ms", pa.float64()),
            *STAMP_FIELDS,
        ]
    )

    def blocks() -> Iterator[list[pa.Array]]:
        for begin in range(0, total, _ROW_BLOCK):
            end = min(begin + _ROW_BLOCK, total)
            # the questions with rows in [begin, end): the last to start at or before ``begin``
            # (it has rows, so it holds ``begin``) up to the last to start before ``end``
            first = int(np.searchsorted(starts, begin, side="right")) - 1
            last = int(np.searchsorted(starts[:-1], end, side="left"))
            rows = np.minimum(starts[first + 1 : last + 1], end) - np.maximum(starts[first:last], begin)
            question = np.repeat(np.arange(first, last, dtype=np.int64), rows)
            rank = np.arange(begin + 1, end + 1, dtype=np.int64) - np.repeat(starts[first:last], rows)
            codes = returned_codes[begin:end]
            row_documents = mapped_codes[codes]
            columns = [question_ids.take(pa.array(question)), pa.array(rank.astype(np.int32), pa.int32())]
            if returned is not None and documents is not None:
                columns += [returned.take(pa.array(codes)), documents.take(pa.array(row_documents))]
            is_target = _is_target(question, row_documents, targets, len(document_code))
            columns += [pa.array(is_target, pa.bool_()), pa.array(latency[question], pa.float64())]
            yield columns

    return TableInBatches(
        schema=schema,
        num_rows=total,
        evaluated_at=started_at,
        make_batches=lambda: stamped_batches(schema, run_id, started_at, blocks(), min(total, _ROW_BLOCK)),
    )


_ROW_BLOCK = 1 << 20
"""Rows of one batch of the rankings table: a Parquet row group (pyarrow's default size)."""


def _target_keys(expected: Sequence[Iterable[str]], code: Mapping[str, int]) -> np.ndarray:
    """The sorted keys ``question * len(code) + document`` of every expected document that
    was returned at all (``code``: the returned documents' codes)."""
    width = len(code)
    return np.unique(
        np.fromiter(
            (i * width + code[doc] for i, wanted in enumerate(expected) for doc in wanted if doc in code),
            dtype=np.int64,
        )
    )


def _is_target(question: np.ndarray, documents: np.ndarray, targets: np.ndarray, width: int) -> np.ndarray:
    """Whether each row's document (``documents``, codes) is one its question (``question``)
    expects: its key found among ``targets`` (:func:`_target_keys`, ``width`` documents)."""
    if not targets.size:
        return np.zeros(question.size, dtype=np.bool_)
    keys = question * width + documents
    at = np.searchsorted(targets, keys)
    np.minimum(at, targets.size - 1, out=at)
    found: np.ndarray = targets[at] == keys
    return found


def _rankings_of(
    results: Sequence[QuestionResult],
) -> tuple[list[str], np.ndarray, np.ndarray, list[str], list[frozenset[str]], Sequence[float]]:
    """Each question's id, the length of its raw ranking (0 for an errored one), every returned
    id as a code into the distinct returned ids, those ids, each question's expected documents
    and latency.  From the evaluator's arrays when the run has them (its rankings already
    coded, :class:`~goldeneval.retrieval.encoding.RawRankings`), without a tuple or a
    :class:`QuestionResult` per question; else from the results."""
    if isinstance(results, ScoredAnswers):
        ids, expected = results.question_ids.tolist(), list(results.expected)
        errored = np.fromiter((error is not None for error in results.errors), dtype=np.bool_, count=len(ids))
        raw = results.returned
        if isinstance(raw, RawRankings):
            counts = np.diff(raw.offsets)
            # the evaluator's own codes (a view) unless an errored question's are to be left out
            codes = raw.numbers[np.repeat(~errored, counts)] if errored.any() else raw.numbers
            return ids, np.where(errored, 0, counts), codes, raw.ids.tolist(), expected, results.latency_ms
        rankings: Sequence[Sequence[str]] = [() if bad else ranking for ranking, bad in zip(raw, errored, strict=True)]
        latency_ms: Sequence[float] = results.latency_ms
    else:
        ids, expected = [r.question_id for r in results], [r.expected for r in results]
        rankings, latency_ms = [r.returned_ids for r in results], [r.latency_ms for r in results]
    lengths = np.fromiter(map(len, rankings), dtype=np.int64, count=len(rankings))
    encoded = pa.array(list(itertools.chain.from_iterable(rankings)), pa.string()).dictionary_encode()
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    return ids, lengths, codes, encoded.dictionary.to_pylist(), expected, latency_ms


def _run_identity(run: RetrievalRun, privacy: PrivacyMode, run_id: str) -> dict[str, Any]:
    return {
        "format": TABLE_FORMAT_VERSION,
        "set_id": run.set_id,
        "retriever": run.series,
        "retriever_id": run.retriever_id,
        "tables_run_id": run_id,
        "started_at": run.started_at.astimezone(UTC).isoformat(),
        "provenance": run.provenance.as_columns(),
        "label_digest": run.label_digest,
        "hit_cutoffs": list(run.hit_cutoffs),
        "metrics": list(run.metric_names),
        "relevance_level": run.relevance_level,
        "unjudged": list(run.unjudged),
        "privacy": privacy.value,
        # only for a set with judged negatives: every other table keeps its identity as it was
        **({"judged_cutoffs": list(run.judged_cutoffs)} if run.judged_cutoffs else {}),
        **({"average_over": run.average_over} if run.average_over != DEFAULT_AVERAGE_OVER else {}),
        **({"chunk_separator": run.chunk_separator or ""} if run.chunk_separator != DEFAULT_CHUNK_SEPARATOR else {}),
        **({"judged_only": True} if run.judged_only else {}),
    }


def hits_table(run: RetrievalRun, privacy: PrivacyMode, run_id: str) -> pa.Table:
    """One row per question; the run's identity rides along in the schema metadata."""
    results = run.results
    full = privacy is PrivacyMode.FULL
    if isinstance(results, ScoredAnswers):
        columns = _scored_hits_columns(results, full, judged=bool(run.judged_cutoffs))
    else:
        columns = _result_hits_columns(results, full, judged=bool(run.judged_cutoffs))
    table = stamp_columns(pa.table(columns), run_id, run.started_at)
    return with_identity(table, RUN_METADATA_KEY, _run_identity(run, privacy, run_id))


def _result_hits_columns(results: Sequence[QuestionResult], full: bool, *, judged: bool) -> dict[str, pa.Array]:
    """The hits columns of results read back from a table, record by record."""
    columns: dict[str, pa.Array] = {
        "question_id": pa.array([r.question_id for r in results], pa.string()),
        "form": pa.array([r.form for r in results], pa.string()),
        "hard_class": pa.array([r.hard_class for r in results], pa.string()),
        "status": pa.array([r.status.value for r in results], pa.string()),
        "top1_hit": pa.array([r.top1_hit if r.scored else None for r in results], pa.bool_()),
        "top3_hit": pa.array([r.top3_hit if r.scored else None for r in results], pa.bool_()),
        "latency_ms": pa.array([r.latency_ms for r in results], pa.float64()),
        "metrics": pa.array([list(r.metrics.items()) for r in results], pa.map_(pa.string(), pa.float64())),
        "judged": pa.array([r.judged for r in results], pa.bool_()),
        "depth": pa.array([r.depth if r.scored else None for r in results], pa.int32()),
        # In metadata_only an error keeps only its class, as in the store (it can quote content).
        "error": pa.array([r.error if full else content_free_error(r.error) for r in results], pa.string()),
    }
    if judged:  # judged@k and the unjudged top-3 ranks (ranks, never ids: kept in metadata_only)
        columns["judged_at"] = pa.array(
            [list(r.judged_at.items()) for r in results], pa.map_(pa.string(), pa.float64())
        )
        columns["unjudged_ranks"] = pa.array([list(r.unjudged_ranks) for r in results], pa.list_(pa.int32()))
        if any(r.unjudged_relevant for r in results):
            columns["unjudged_relevant"] = pa.array(
                [list(r.unjudged_relevant.items()) for r in results], pa.map_(pa.string(), pa.float64())
            )
    if full:
        columns["top_documents"] = pa.array([list(r.top_documents) for r in results], pa.list_(pa.string()))
        columns["documents"] = pa.array([list(r.documents) for r in results], pa.list_(pa.string()))
    return columns


def _scored_hits_columns(scored: ScoredAnswers, full: bool, *, judged: bool) -> dict[str, pa.Array]:
    """The same columns as :func:`_result_hits_columns`, straight from the evaluator's arrays:
    no :class:`QuestionResult` per question (10,000 of them cost more than the table).  An
    errored question has no verdict, depth, metrics, judged@k, unjudged ranks or documents."""
    ok = scored.ok
    failed = ~ok
    errors = list(scored.errors)
    columns: dict[str, pa.Array] = {
        "question_id": _strings(scored.question_ids),
        "form": pa.array(scored.forms, pa.string()),
        "hard_class": pa.array(scored.hard_classes, pa.string()),
        "status": pa.array([_STATUS[error is None] for error in errors], pa.string()),
        "top1_hit": pa.array(scored.top1.astype(np.bool_), pa.bool_(), mask=failed),
        "top3_hit": pa.array(scored.top3.astype(np.bool_), pa.bool_(), mask=failed),
        "latency_ms": pa.array(list(scored.latency_ms), pa.float64()),
        "metrics": _defined_values(scored.metrics, ok),
        "judged": pa.array(scored.expected.judged, pa.bool_()),
        "depth": pa.array(scored.reached.astype(np.int32), pa.int32(), mask=failed),
        "error": pa.array(errors if full else [content_free_error(e) for e in errors], pa.string()),
    }
    if judged:
        columns["judged_at"] = _defined_values(scored.judged_at, ok)
        columns["unjudged_ranks"] = _int_lists(scored.unjudged, ok)
        if scored.unjudged_relevant:
            columns["unjudged_relevant"] = _defined_values(scored.unjudged_relevant, ok)
    if full:
        kept = scored.kept
        documents = _strings(scored.documents).take(pa.array(kept.codes))  # each distinct one converted once
        columns["top_documents"] = _first(kept.offsets, documents, TOP_K)
        columns["documents"] = pa.ListArray.from_arrays(pa.array(kept.offsets, pa.int32()), documents)
    return columns


def _strings(values: np.ndarray) -> pa.Array:
    """A :func:`~goldeneval.retrieval.encoding.compact_strings` array as one Arrow string array.
    pyarrow converts a numpy ``StringDType`` array of more than 16 MiB of text into chunks,
    which ``ListArray.from_arrays`` refuses: a 100,000-question run's 10,000,000 documents
    failed the Dagster job's hits table."""
    converted = pa.array(values, pa.string())
    return converted.combine_chunks() if isinstance(converted, pa.ChunkedArray) else converted


_STATUS = {True: QuestionStatus.OK.value, False: QuestionStatus.ERROR.value}
"""A question's status by whether it was answered (an errored one is ``error``, timed out or not)."""


def _defined_values(values: Mapping[str, np.ndarray], ok: np.ndarray) -> pa.Array:
    """Per question, each named value that is defined (not NaN) for an answered question, in
    the mapping's order: the ``map<string, double>`` of :attr:`QuestionResult.metrics`."""
    names = list(values)
    grid = np.column_stack([values[name] for name in names]) if names else np.empty((len(ok), 0))
    defined = ~np.isnan(grid) & ok[:, None]
    rows, cols = np.nonzero(defined)  # row by row, each row's names in order
    offsets = np.concatenate([[0], np.cumsum(defined.sum(axis=1))])
    return pa.MapArray.from_arrays(
        pa.array(offsets, pa.int32()),
        pa.array(np.asarray(names, dtype=object)[cols], pa.string()),
        pa.array(grid[rows, cols], pa.float64()),
    )


def _int_lists(rankings: columnar.Rankings | None, ok: np.ndarray) -> pa.Array:
    """Each answered question's codes as a ``list<int32>`` (empty for an errored one, or all
    when there are none)."""
    if rankings is None:
        return pa.ListArray.from_arrays(pa.array(np.zeros(len(ok) + 1, dtype=np.int32)), pa.array([], pa.int32()))
    lengths = np.diff(rankings.offsets) * ok
    kept = np.repeat(ok, np.diff(rankings.offsets))
    return pa.ListArray.from_arrays(
        pa.array(np.concatenate([[0], np.cumsum(lengths)]), pa.int32()),
        pa.array(rankings.codes[kept].astype(np.int32)),
    )


def _first(offsets: np.ndarray, values: pa.Array, k: int) -> pa.Array:
    """The first ``k`` values of each list ``values[offsets[i]:offsets[i + 1]]``."""
    lengths = np.minimum(np.diff(offsets), k)
    positions = offsets[:-1, None] + np.arange(k)[None, :]
    taken = positions[np.arange(k)[None, :] < lengths[:, None]]  # row by row
    return pa.ListArray.from_arrays(
        pa.array(np.concatenate([[0], np.cumsum(lengths)]), pa.int32()),
        values.take(pa.array(taken, pa.int64())),
    )


def run_from_hits(table: pa.Table) -> RetrievalRun:
    """The run a :func:`hits_table` describes.  With ``metadata_only`` its questions have
    no documents, which is exactly what that mode stores."""
    identity = _identity(table)
    rows = table.to_pylist()
    results = tuple(
        QuestionResult(
            question_id=row["question_id"],
            form=row["form"],
            hard_class=row["hard_class"],
            expected=frozenset(),
            returned_ids=(),
            documents=tuple(row.get("documents") or ()),
            top1_hit=bool(row["top1_hit"]),
            top3_hit=bool(row["top3_hit"]),
            latency_ms=row["latency_ms"],
            status=QuestionStatus(row["status"]),
            error=row.get("error"),
            metrics=dict(row["metrics"] or []),
            judged=row.get("judged", True) is not False,
            reached=row.get("depth"),
            judged_at=dict(row.get("judged_at") or []),
            unjudged_ranks=tuple(row.get("unjudged_ranks") or ()),
            unjudged_relevant=dict(row.get("unjudged_relevant") or []),
        )
        for row in rows
    )
    measured = _measurement(identity)
    # trec_eval's rule: the source's queries judged only with grade 0 count 0 in every mean
    left_out = len(measured.get("unjudged", ())) if measured.get("average_over") == "all-judged" else 0
    return RetrievalRun(
        set_id=identity["set_id"],
        series=identity["retriever"],
        retriever_id=identity.get("retriever_id", identity["retriever"]),
        results=results,
        aggregates=aggregate(results, left_out),
        started_at=datetime.fromisoformat(identity["started_at"]),
        provenance=Provenance.model_validate(identity["provenance"]),
        label_digest=identity["label_digest"],
        hit_cutoffs=tuple(identity["hit_cutoffs"]),
        errors_reduced=identity.get("privacy") == PrivacyMode.METADATA_ONLY.value,
        **measured,
    )


def _measurement(identity: Mapping[str, Any]) -> dict[str, Any]:
    """The measurement settings of a hits table (tables written before they were recorded
    reported hit@k and the @10 metrics, at relevance level 1)."""
    if "metrics" not in identity:
        legacy = [f"hit@{k}" for k in identity["hit_cutoffs"]] + ["mrr@10", "recall@10", "ndcg@10"]
        return {"metric_names": tuple(legacy)}
    return {
        "metric_names": tuple(identity["metrics"]),
        "relevance_level": int(identity["relevance_level"]),
        "unjudged": tuple(identity["unjudged"]),
        "judged_cutoffs": tuple(identity.get("judged_cutoffs", ())),
        "average_over": identity.get("average_over", DEFAULT_AVERAGE_OVER),
        "chunk_separator": identity.get("chunk_separator", DEFAULT_CHUNK_SEPARATOR),
        "judged_only": bool(identity.get("judged_only", False)),
    }


def _identity(table: pa.Table) -> dict[str, Any]:
    return read_identity(table, RUN_METADATA_KEY, "question_hits")


def run_privacy(table: pa.Table) -> PrivacyMode:
    return table_privacy(table, RUN_METADATA_KEY, "question_hits")


def hits_tables_run_id(table: pa.Table) -> str:
    """The Dagster run that wrote a :func:`hits_table` (older files: their ``run_id`` column)."""
    identity = _identity(table)
    if identity.get("tables_run_id"):
        return str(identity["tables_run_id"])
    return str(table.column("run_id")[0].as_py())
