"""Judgement rows of a qrels file, read by one rule, and a golden set made from them.

Two layouts carry the same rows: BEIR's ``qrels/<split>.tsv`` (``query-id corpus-id score``,
tab-separated, an optional header) and TREC's qrels (``<query id> <iteration> <document id>
<relevance>``, whitespace-separated, the iteration column not read, as trec_eval does not read
it).  Whatever the layout, the rows obey one rule (:class:`QrelsRows`):

* a relevance is a whole number of 0 or more (``MAX_GRADE`` at most); trec_eval's pooled-but-
  unjudged ``-1`` and any other negative value are refused, since no metric goldeneval
  computes reads them;
* the same query and document judged twice with the same relevance is one judgement; judged
  twice with two relevances is refused, naming the file and both lines (trec_eval would keep
  one of them without a word);

and a golden set is made of them in one way (:func:`judged_set`): a query's expected
documents are those judged above 0, with their grades; its judged non-relevant documents
(grade 0) are its ``not_relevant`` ones where the layout keeps them (TREC qrels do; the
BEIR import never did, and keeps its label digest); a query judged only with 0 is not a
question (an empty expected set would say "nothing answers it") and the set lists it as
``unjudged``; every judged document must be in the corpus; the form is derived by
:mod:`goldeneval.retrieval.overlap`' rule (``vocabulary-overlap/v1``).

A TREC qrels file needs its topics (:mod:`goldeneval.retrieval.topics`) and its corpus:
``goldeneval retrieval --set QRELS --topics TOPICS --corpus CORPUS``.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import GoldenSetError
from goldeneval.core.set_files import read_text
from goldeneval.core.text import content_terms
from goldeneval.retrieval.golden import MAX_GRADE, GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.overlap import form_of_overlap, overlap_of

__all__ = [
    "QrelsRows",
    "is_trec_qrels",
    "judged_set",
    "load_trec_set",
    "read_beir_qrels",
    "read_trec_qrels",
]

BEIR_HEADER = ["query-id", "corpus-id", "score"]


@dataclass
class QrelsRows:
    """The judgements of one qrels file as its rows are added: one rule for every layout."""

    path: Path
    column: str = "relevance"
    """What the file calls the relevance column (BEIR: ``score``), for the errors."""
    negative_is_zero: bool = False
    """Read a negative relevance as judged not relevant (BEIR: some collections grade spam
    -2) instead of refusing it (TREC: trec_eval's -1 means pooled but unjudged)."""
    judged: dict[str, dict[str, int]] = field(default_factory=dict)
    """Query id -> document id -> relevance, in file order."""
    _lines: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, lineno: int, query_id: str, document_id: str, relevance: str) -> None:
        """One row; a relevance that is not a whole number from 0 to ``MAX_GRADE``, or that
        contradicts an earlier row of the same pair, is refused."""
        try:
            grade = int(relevance)
        except ValueError:
            raise GoldenSetError(self.path, f"line {lineno}: {self.column} {relevance!r} is not an integer") from None
        if grade < 0 and self.negative_is_zero:
            grade = 0
        if grade < 0:
            raise GoldenSetError(
                self.path,
                f"line {lineno}: {self.column} {grade} of document {document_id!r} for query {query_id!r} is negative; "
                f"goldeneval reads {self.column} 0 (judged not relevant) and above",
            )
        if grade > MAX_GRADE:
            raise GoldenSetError(self.path, f"line {lineno}: {self.column} {grade} is above {MAX_GRADE}")
        documents = self.judged.setdefault(query_id, {})
        known = documents.get(document_id)
        if known is None:
            documents[document_id] = grade
            self._lines[query_id, document_id] = lineno
        elif known != grade:
            first = self._lines[query_id, document_id]
            raise GoldenSetError(
                self.path,
                f"lines {first} and {lineno}: query {query_id!r} judges document {document_id!r} "
                f"twice, with {self.column} {known} and {grade}; keep one",
            )

    def positive(self) -> dict[str, dict[str, int]]:
        """Per query, the documents judged above 0 (queries without one left out)."""
        kept = {q: {d: g for d, g in docs.items() if g > 0} for q, docs in self.judged.items()}
        return {q: docs for q, docs in kept.items() if docs}

    def negatives(self) -> dict[str, list[str]]:
        """Per query, the documents judged 0."""
        return {q: sorted(d for d, g in docs.items() if g == 0) for q, docs in self.judged.items()}

    def only_negative(self) -> list[str]:
        """The queries judged, but with nothing above 0, sorted."""
        return sorted(q for q, docs in self.judged.items() if not any(g > 0 for g in docs.values()))


def _lines_of(path: Path, what: str) -> list[str]:
    if not path.is_file():
        raise GoldenSetError(path, f"{what} not found")
    return read_text(path, GoldenSetError).removeprefix("\ufeff").splitlines()  # no byte-order mark


def read_beir_qrels(path: Path) -> QrelsRows:
    """A BEIR qrels split: three tab-separated columns, an optional ``query-id`` header."""
    rows = QrelsRows(path, "score", negative_is_zero=True)
    for lineno, row in enumerate(csv.reader(_lines_of(path, "qrels file"), delimiter="\t"), start=1):
        if not row or (lineno == 1 and row[:1] == BEIR_HEADER[:1]):
            continue
        if len(row) != 3:
            raise GoldenSetError(path, f"line {lineno}: expected 3 tab-separated columns, found {len(row)}")
        rows.add(lineno, *row)
    return rows


def read_trec_qrels(path: Path) -> QrelsRows:
    """A TREC qrels file: ``<query id> <iteration> <document id> <relevance>`` per line."""
    rows = QrelsRows(path)
    for lineno, line in enumerate(_lines_of(path, "qrels file"), start=1):
        columns = line.split()
        if not columns:
            continue
        if len(columns) != 4:
            expected = "4 columns (query-id iteration document-id relevance)"
            raise GoldenSetError(path, f"line {lineno}: expected {expected}, found {len(columns)}")
        query_id, _, document_id, relevance = columns
        rows.add(lineno, query_id, document_id, relevance)
    if not rows.judged:
        raise GoldenSetError(path, "no judgements in this qrels file")
    return rows


def is_trec_qrels(path: Path) -> bool:
    """Whether ``path`` reads as TREC qrels: a file whose first line has four columns, the
    last an integer (a BEIR split has three, a set file is YAML or JSON)."""
    if not path.is_file():
        return False
    try:
        with path.open(encoding="utf-8") as handle:
            first = next((line for line in handle if line.strip()), "")
    except (OSError, UnicodeDecodeError):
        return False
    columns = first.split()
    return len(columns) == 4 and columns[3].lstrip("-").isdigit()


def judged_set(
    rows: QrelsRows,
    queries: Mapping[str, str],
    corpus: Corpus,
    *,
    set_id: str,
    description: str,
    corpus_ref: str | None,
    queries_name: str,
    keep_negatives: bool,
) -> GoldenQuestionSet:
    """The golden set of ``rows`` (module doc): every query judged above 0 is a question with
    its text from ``queries`` (``queries_name`` names that file in an error)."""
    judged = rows.positive()
    if not judged:
        raise GoldenSetError(rows.path, f"no relevant judgements ({rows.column} > 0)")
    negatives = rows.negatives() if keep_negatives else {}
    documents = {doc.id: doc for doc in corpus}
    target_terms: dict[str, set[str]] = {}  # a document judged for several queries is analysed once

    def terms_of(doc_id: str) -> set[str]:
        if doc_id not in target_terms:
            doc = documents[doc_id]
            target_terms[doc_id] = content_terms(f"{doc.title}\n{doc.text}")
        return target_terms[doc_id]

    questions = []
    for position, (query_id, targets) in enumerate(sorted(judged.items()), start=1):
        if query_id not in queries:
            raise GoldenSetError(
                rows.path, f"query id not found in {queries_name}", position=position, question_id=query_id
            )
        judged_ids = [*targets, *negatives.get(query_id, ())]
        # Not ``targets.keys() - documents.keys()``: that walks every key of the corpus, query by query.
        missing = sorted(doc_id for doc_id in judged_ids if doc_id not in documents)
        if missing:
            raise GoldenSetError(
                rows.path,
                f"document ids not in the corpus: {', '.join(missing[:5])}",
                position=position,
                question_id=query_id,
                field="expected" if any(doc_id in targets for doc_id in missing) else "not_relevant",
            )
        text = queries[query_id]
        form: QuestionForm = form_of_overlap(overlap_of(content_terms(text), map(terms_of, targets)))
        questions.append(
            GoldenQuestion(
                id=query_id,
                text=text,
                form=form,
                expected=frozenset(targets),
                grades=targets,
                not_relevant=frozenset(negatives.get(query_id, ())),
                form_derived=True,
            )
        )
    return GoldenQuestionSet(
        id=set_id,
        description=description,
        corpus=corpus_ref,
        questions=tuple(questions),
        unjudged=tuple(rows.only_negative()),
    )


def load_trec_set(
    qrels: str | Path, topics: str | Path, corpus: Corpus, *, corpus_ref: str | None, field: str | None = None
) -> GoldenQuestionSet:
    """A TREC qrels file and its topics file as a golden set, labelled against ``corpus``.

    The set's id is ``trec-<qrels file name without its last suffix>`` (``qrels.dl19-passage.txt``:
    ``trec-qrels.dl19-passage``), as a BEIR folder's is ``beir-<folder>-<split>``."""
    from goldeneval.retrieval.topics import read_topics

    qrels_path, topics_path = Path(qrels), Path(topics)
    rows = read_trec_qrels(qrels_path)
    queries = read_topics(topics_path, field)
    stem = qrels_path.stem or "qrels"
    return judged_set(
        rows,
        queries,
        corpus,
        set_id=f"trec-{stem}",
        description=f"TREC qrels {qrels_path.name} with topics {topics_path.name}: forms derived",
        corpus_ref=corpus_ref,
        queries_name=f"the topics file {topics_path}",
        keep_negatives=True,
    )
