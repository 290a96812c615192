"""``goldeneval.trec_run``: evaluate rankings produced elsewhere, from a TREC run file.

Option ``run=PATH`` names the file (:func:`goldeneval.retrieval.trec.read_trec_run_file`);
option ``order=trec_eval|as_given`` says how tied scores are ordered: ``trec_eval`` (the
default) as trec_eval does, by document id descending, ignoring the rank column;
``as_given`` by the file's rank column, then line order.  What the reading passed over
(comment lines, columns after the sixth, non-integer ranks) is one warning of the run.  Its query ids
are the golden set's question ids; the retriever is asked by question text, so it maps each
text to its question id through the set being evaluated (``RetrieverContext.golden_set``).
A question the file has no line for gets an empty ranking, as in trec_eval; a question text
the set does not hold is an error.  A file none of whose query ids is a query of the set
(a question, or a query the set lists as unjudged) is refused, as trec_eval refuses it (it
measures nothing: every question would score 0); query ids the set does not know, beside
ones it does, are left out with a warning that counts them.

An exported run (``goldeneval export-run``) lists distinct documents; where the stored run's
top-3 was a miss although one of its first three documents is expected (a chunk-grained run
whose first raw ids held fewer than three documents), the export's replay notes beside the
file say so (``<file>.goldeneval.json``, :func:`goldeneval.retrieval.trec.read_replay_notes`),
and the replay repeats the document before the first expected one until the protocol's raw
head is full: repeats collapse, so every metric is the same, and the head holds as few
documents as the original's did, so top-3 is the same miss.  Notes judged under other labels
than the set's are not applied, with a warning: the misses they record need not hold.

Provenance: the pipeline identity is the SHA-256 of the file (and ``order=as_given`` when
set), so the variant changes exactly when the rankings do; model and chunking are not
applicable to replayed rankings; the corpus revision is that of the corpus given to the run
(``--corpus`` or the set's), else unknown.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import NOT_APPLICABLE, Provenance
from goldeneval.retrieval.golden import GoldenQuestionSet
from goldeneval.retrieval.labels import label_digest
from goldeneval.retrieval.protocol import TOP_K, raw_limit
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision
from goldeneval.retrieval.retrievers.options import check_known_options, path_option, str_option
from goldeneval.retrieval.trec import REPLAY_NOTES_SUFFIX, RUN_ORDERS, RunOrder, read_replay_notes, read_trec_run_file

__all__ = ["TrecRunRetriever", "build"]

RETRIEVER_ID = "goldeneval.trec_run"


class TrecRunRetriever:
    """Replays the rankings of a TREC run file, question by question."""

    def __init__(
        self,
        path: Path,
        golden_set: GoldenQuestionSet,
        corpus_revision: str | None = None,
        order: RunOrder = "trec_eval",
    ) -> None:
        self.path = path
        self.order = order
        run = read_trec_run_file(path, order)
        self.rankings = run.rankings
        warnings = [warning] if (warning := run.warning()) else []
        known = {question.id for question in golden_set.questions}.union(golden_set.unjudged)
        foreign = sorted(set(self.rankings) - known)
        if not self.rankings:
            raise RetrieverError(f"{path}: holds no ranking lines; a run file measures nothing without them")
        if len(foreign) == len(self.rankings):
            raise RetrieverError(
                f"{path}: none of its {len(foreign)} query ids (e.g. {', '.join(map(repr, foreign[:3]))}) "
                f"is a query of set {golden_set.id!r}; a run file measures a set only through the set's query ids"
            )
        if foreign:
            warnings.append(
                f"{len(foreign)} of its {len(self.rankings)} query ids are not queries of set "
                f"{golden_set.id!r} (e.g. {foreign[0]!r}): left out, as trec_eval leaves them out"
            )
        notes = read_replay_notes(path)
        if notes is not None and notes.label_digest is not None and notes.label_digest != label_digest(golden_set):
            warnings.append(
                f"its replay notes ({path.name}{REPLAY_NOTES_SUFFIX}) were written under other labels than set "
                f"{golden_set.id!r} has: the {len(notes.top3_misses)} top-3 misses they record are not applied, "
                "so a chunk-grained run's top-3 may differ from the original's"
            )
            notes = None
        self.top3_misses = notes.top3_misses if notes is not None else frozenset()
        self.notes_digest = (
            hashlib.sha256(path.with_name(path.name + REPLAY_NOTES_SUFFIX).read_bytes()).hexdigest()
            if notes is not None
            else None
        )
        self.warnings: tuple[str, ...] = tuple(f"{path}: {text}" for text in warnings)
        """For the run's warnings (the pipeline reports a retriever's ``warnings``)."""
        self._expected = {question.id: question.expected for question in golden_set.questions}
        self.file_digest = hashlib.sha256(path.read_bytes()).hexdigest()
        self.corpus_revision = corpus_revision
        self._query_id: dict[str, str] = {}
        for question in golden_set.questions:
            other = self._query_id.setdefault(question.text, question.id)
            if other != question.id and self.rankings.get(other, []) != self.rankings.get(question.id, []):
                raise RetrieverError(
                    f"{path}: questions {other!r} and {question.id!r} of set {golden_set.id!r} share "
                    "their text but have different rankings; a retriever asked by text cannot tell "
                    "them apart"
                )

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        query_id = self._query_id.get(question)
        if query_id is None:
            raise RetrieverError(f"{self.path}: the golden set has no question with this text")
        ranking = self.rankings.get(query_id, [])
        if query_id in self.top3_misses:
            ranking = _as_missed(ranking, self._expected.get(query_id, frozenset()))
        return ranking[: max(limit, 0)]

    def provenance(self) -> Provenance:
        return Provenance(
            corpus_revision=self.corpus_revision,
            model_revision=NOT_APPLICABLE,
            chunking_identity=NOT_APPLICABLE,
            pipeline_identity=f"{RETRIEVER_ID}/file(sha256:{self.file_digest}"
            + ("" if self.order == "trec_eval" else f",order={self.order}")
            + ("" if self.notes_digest is None else f",notes=sha256:{self.notes_digest}")
            + ")",
            execution_revision=execution_revision(),
        )


def _as_missed(ranking: list[str], expected: frozenset[str]) -> list[str]:
    """``ranking`` with the document before its first expected one among the first three
    repeated until the protocol's raw head is full, so that the head holds only the documents
    above the expected one (the top-3 miss the export recorded); unchanged otherwise."""
    first = next((rank for rank, document in enumerate(ranking[:TOP_K]) if document in expected), None)
    if not first:  # no expected document in the top 3 (a miss as it is), or the first (a hit whatever the head)
        return ranking
    return [*ranking[:first], *[ranking[first - 1]] * (raw_limit() - first), *ranking[first:]]


def build(context: RetrieverContext) -> TrecRunRetriever:
    """Entry-point factory for ``goldeneval.trec_run``; option ``run=PATH`` is required,
    ``order=trec_eval|as_given`` optional (default ``trec_eval``)."""
    check_known_options(context, RETRIEVER_ID, ("order", "run"))
    raw_order = (str_option(context, "order", retriever_id=RETRIEVER_ID) or "trec_eval").strip()
    if raw_order not in RUN_ORDERS:
        raise RetrieverError(
            f"retriever {RETRIEVER_ID!r}: option 'order': expected one of {', '.join(RUN_ORDERS)}, got {raw_order!r}"
        )
    order: RunOrder = "as_given" if raw_order == "as_given" else "trec_eval"
    path = path_option(context, "run", retriever_id=RETRIEVER_ID)
    if path is None:
        raise RetrieverError(f"retriever {RETRIEVER_ID!r} needs option run=PATH (a TREC run file)")
    if context.golden_set is None:
        raise RetrieverError(
            f"retriever {RETRIEVER_ID!r} needs the golden set to map question text to query ids; "
            "build it with RetrieverContext(golden_set=...)"
        )
    revision = context.corpus.revision if context.corpus is not None else None
    return TrecRunRetriever(path, context.golden_set, revision, order)
