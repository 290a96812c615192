"""Import a golden set from the BEIR layout: ``queries.jsonl`` + ``qrels/<split>.tsv``.

A query's targets are the corpus ids it is judged with a score above 0, and the score is
the target's grade (graded nDCG's gain).  A query judged only with score 0 is not a
question of the set; the set lists it as ``unjudged`` and every run reports it.  BEIR carries no
question forms, so the form is derived, and marked as derived (``form_derived``), by the
measured-form rule of :mod:`goldeneval.retrieval.overlap` (``vocabulary-overlap/v1``):

    overlap = |T(q) & T(targets)| / |T(q)|

where T is the shared analyser's content terms (lower-case, English stop words removed,
Snowball-stemmed; :mod:`goldeneval.core.text`) and T(targets) the union over the title and text of
every target document.  ``MATCH`` when overlap >= ``FORM_OVERLAP_THRESHOLD`` (0.5: at least
half of the question's content terms appear in a target), else ``GAP``.  A question without
content terms is ``GAP``.  The rule is deterministic: the same files give the same set.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

from goldeneval.core.corpus import Corpus, load_beir_corpus
from goldeneval.core.errors import GoldenSetError
from goldeneval.core.jsonl import iter_jsonl
from goldeneval.core.text import content_terms
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.overlap import (
    FORM_OVERLAP_THRESHOLD,
    form_of_overlap,
    measured_form,
    overlap_of,
    vocabulary_overlap,
)

__all__ = ["FORM_OVERLAP_THRESHOLD", "derive_form", "is_beir_folder", "load_beir_set", "vocabulary_overlap"]


def is_beir_folder(path: Path) -> bool:
    return path.is_dir() and (path / "queries.jsonl").is_file() and (path / "qrels").is_dir()


def derive_form(question: str, target_texts: list[str]) -> QuestionForm:
    return measured_form(question, target_texts)


def _read_qrels(path: Path) -> tuple[dict[str, dict[str, int]], list[str]]:
    """Relevant corpus ids and their grades per query, and the queries judged only with
    score 0.  Those have no target and are left out of the set (an empty target set would
    declare "no document answers it", which a BEIR judgement does not say); the set names
    them as ``unjudged`` so that every run reports them."""
    if not path.is_file():
        raise GoldenSetError(path, "qrels file not found")
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError as exc:
        raise GoldenSetError(path, f"not valid UTF-8 (byte offset {exc.start})") from None
    judged: dict[str, dict[str, int]] = defaultdict(dict)
    seen: set[str] = set()
    for lineno, row in enumerate(csv.reader(lines, delimiter="\t"), start=1):
        if not row or (lineno == 1 and row[:1] == ["query-id"]):
            continue
        if len(row) != 3:
            raise GoldenSetError(path, f"line {lineno}: expected 3 tab-separated columns, found {len(row)}")
        query_id, corpus_id, score = row
        try:
            grade = int(score)
        except ValueError:
            raise GoldenSetError(path, f"line {lineno}: score {score!r} is not an integer") from None
        seen.add(query_id)
        if grade > 0:
            judged[query_id][corpus_id] = grade
    if not judged:
        raise GoldenSetError(path, "no relevant judgements (score > 0) in this split")
    return judged, sorted(seen - judged.keys())


def _read_queries(path: Path) -> dict[str, str]:
    def error(problem: str) -> GoldenSetError:
        return GoldenSetError(path, problem)

    queries: dict[str, str] = {}
    for lineno, item in iter_jsonl(path, error):
        query_id = item.get("_id") if isinstance(item, dict) else None
        if not isinstance(query_id, str | int) or str(query_id) == "":
            raise error(f"line {lineno}: field '_id': missing or empty")
        text = item.get("text")
        if not isinstance(text, str) or not text.strip():
            raise error(f"line {lineno} (id {query_id!r}): field 'text': missing, empty or not a string")
        queries[str(query_id)] = text
    return queries


def load_beir_set(folder: str | Path, split: str = "test", corpus: Corpus | None = None) -> GoldenQuestionSet:
    """The judged queries of one split as a golden set, with derived forms."""
    folder = Path(folder)
    qrels_path = folder / "qrels" / f"{split}.tsv"
    judged, unjudged = _read_qrels(qrels_path)
    queries = _read_queries(folder / "queries.jsonl")
    corpus = corpus or load_beir_corpus(folder / "corpus.jsonl")
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
                qrels_path, "query id not found in queries.jsonl", position=position, question_id=query_id
            )
        # Not ``targets.keys() - documents.keys()``: that walks every key of the corpus, query by query.
        missing = sorted(doc_id for doc_id in targets if doc_id not in documents)
        if missing:
            raise GoldenSetError(
                qrels_path,
                f"document ids not in the corpus: {', '.join(missing[:5])}",
                position=position,
                question_id=query_id,
                field="expected",
            )
        text = queries[query_id]
        questions.append(
            GoldenQuestion(
                id=query_id,
                text=text,
                form=form_of_overlap(overlap_of(content_terms(text), map(terms_of, targets))),
                expected=frozenset(targets),
                grades=targets,
                form_derived=True,
            )
        )
    return GoldenQuestionSet(
        id=f"beir-{folder.name}-{split}",
        description=f"BEIR {folder.name}, split {split!r}: {len(questions)} judged queries, forms derived",
        corpus=str(folder.resolve()),
        questions=tuple(questions),
        unjudged=tuple(unjudged),
    )
