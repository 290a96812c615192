"""Import a golden set from the BEIR layout: ``queries.jsonl`` + ``qrels/<split>.tsv``.

A query's targets are the corpus ids it is judged with a score above 0, and the score is
the target's grade (graded nDCG's gain).  A query judged only with score 0 is not a
question of the set; the set lists it as ``unjudged`` and every run reports it.  The rows
follow the one rule of :mod:`goldeneval.retrieval.qrels` (a pair judged twice with two scores
is refused).  BEIR carries no question forms, so the form is derived, and marked as derived
(``form_derived``), by the measured-form rule of :mod:`goldeneval.retrieval.overlap`
(``vocabulary-overlap/v1``).
"""

from __future__ import annotations

from pathlib import Path

from goldeneval.core.corpus import Corpus, load_beir_corpus
from goldeneval.core.errors import GoldenSetError
from goldeneval.core.jsonl import iter_jsonl
from goldeneval.retrieval.golden import GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.overlap import FORM_OVERLAP_THRESHOLD, measured_form, vocabulary_overlap
from goldeneval.retrieval.qrels import judged_set, read_beir_qrels

__all__ = ["FORM_OVERLAP_THRESHOLD", "derive_form", "is_beir_folder", "load_beir_set", "vocabulary_overlap"]


def is_beir_folder(path: Path) -> bool:
    return path.is_dir() and (path / "queries.jsonl").is_file() and (path / "qrels").is_dir()


def derive_form(question: str, target_texts: list[str]) -> QuestionForm:
    return measured_form(question, target_texts)


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
    rows = read_beir_qrels(folder / "qrels" / f"{split}.tsv")
    queries = _read_queries(folder / "queries.jsonl")
    corpus = corpus or load_beir_corpus(folder / "corpus.jsonl")
    golden = judged_set(
        rows,
        queries,
        corpus,
        set_id=f"beir-{folder.name}-{split}",
        description="",
        corpus_ref=str(folder.resolve()),
        queries_name="queries.jsonl",
        keep_negatives=False,
    )
    description = f"BEIR {folder.name}, split {split!r}: {len(golden.questions)} judged queries, forms derived"
    return golden.model_copy(update={"description": description})
