"""A model's suggested grade for each pooled pair (``goldeneval pool --suggest-with MODEL``).

The suggestion is asked of the opt-in judge of the answer side, unchanged: the model is built
by :func:`goldeneval.prompts.models.build_model` and called through
:class:`~goldeneval.prompts.calls.ManagedModel` (timeout, circuit breaker), and each pair is
graded by :class:`~goldeneval.prompts.graders.LlmJudgeGrader` with the rubric
:data:`DOCUMENT_RELEVANCE`: the question, then the document (title and text, cut at
:data:`MAX_DOCUMENT_CHARS`) as the text to grade, and the judge answers its usual JSON
``{"score": 0..1, "reason": "..."}`` (:func:`~goldeneval.prompts.graders.parse_judge_verdict`),
``samples`` times.

**The grade is mapped from the score**, not asked for directly: the rubric tells the judge
that 0 is not relevant, 1/3 relevant, 2/3 highly relevant and 1 perfect, and a sample's grade
is ``round(score * 3)`` (halves up) on the file's scale 0..3.  The suggestion's grade is the
mapped mean score; its ``spread`` the highest sample's grade less the lowest's; ``unstable``
the judge's own flag with its pass threshold at 1/6, the boundary of grade 0 and grade 1:
samples that disagree on relevant against not relevant.  The judge's reasons are not kept
(the file holds no text but the question's).

The suggestion is appended as its own assessor (:func:`suggestion_assessor`: ``model:<model
id>``, or ``model:<model id>/<served model>`` when the ``model`` option names one), with the
samples in the line's ``suggestion`` object; a person's grade is always their own line.  Only
pairs that assessor has not graded yet are asked, so pooling again after a failure asks only
what is missing.  A pair whose grading fails (a malformed verdict, a timeout, an HTTP error, a
document not in the corpus) writes nothing and is reported as one warning naming the pair.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import InputError, one_line
from goldeneval.core.storage import CACHE
from goldeneval.core.workers import usable_workers
from goldeneval.judgments.judgments import (
    DEFAULT_SCALE,
    MODEL_ASSESSOR_PREFIX,
    JudgmentLine,
    Suggestion,
    append_lines,
    read_judgments,
    utc_now,
)
from goldeneval.prompts.breaker import DEFAULT_MAX_CONSECUTIVE_FAILURES
from goldeneval.prompts.calls import ManagedModel
from goldeneval.prompts.graders import MAX_JUDGE_SAMPLES, Grading, GradingItem, LlmJudgeGrader
from goldeneval.prompts.models import ModelContext, build_model
from goldeneval.prompts.pipeline import model_provenance
from goldeneval.prompts.rubrics import Rubric

__all__ = [
    "DOCUMENT_RELEVANCE",
    "MAX_DOCUMENT_CHARS",
    "SuggestResult",
    "Suggester",
    "grade_of_score",
    "suggest",
    "suggestion_assessor",
]

TOP_GRADE = max(DEFAULT_SCALE)
MAX_DOCUMENT_CHARS = 8_000
"""Longest document text the judge is shown (the rest is cut, with a note)."""
RELEVANT_BOUNDARY = 0.5 / TOP_GRADE
"""The score from which a sample maps to grade 1 (relevant): the judge's pass threshold, so
its instability flag means samples on both sides of relevant."""

DOCUMENT_RELEVANCE = Rubric(
    "document-relevance",
    1,
    "You are a search assessor. You grade how relevant a document is to a question. The text to "
    "grade is the document: its title, then its text. Score 0 when it is not relevant (off the "
    "topic, or on it but no help to answer the question), 0.33 when it is relevant (on the topic, "
    "helps to answer part of the question), 0.67 when it is highly relevant (answers most of the "
    "question) and 1 when it is a perfect answer to the question. Judge the document, not its style.",
)


def grade_of_score(score: float) -> int:
    """A judge score 0..1 on the scale 0..3: ``round(score * 3)``, halves up."""
    return min(TOP_GRADE, max(0, math.floor(score * TOP_GRADE + 0.5)))


def suggestion_assessor(model_id: str, options: Mapping[str, str]) -> str:
    """``model:<model id>``, with ``/<served model>`` when the ``model`` option names one
    (never any other option: a key or a URL is no assessor's name)."""
    served = options.get("model")
    return f"{MODEL_ASSESSOR_PREFIX}{model_id}" + (f"/{served}" if served else "")


@dataclass(frozen=True)
class SuggestResult:
    assessor: str
    asked: int
    """Pairs the model was asked about (pooled, not yet graded by this assessor)."""
    suggested: int
    """Of them, suggestion lines written."""
    warnings: tuple[str, ...] = ()


@dataclass
class Suggester:
    """The judge for suggestions, built once: ``grade(question, document)`` -> a suggestion line,
    or the one-line reason it failed."""

    model_id: str
    options: Mapping[str, str] = field(default_factory=dict)
    samples: int = 1
    timeout_s: float | None = 60.0
    cache_dir: Path = CACHE.default

    def __post_init__(self) -> None:
        if not 1 <= self.samples <= MAX_JUDGE_SAMPLES:
            raise InputError(f"--suggest-samples must be between 1 and {MAX_JUDGE_SAMPLES}, got {self.samples}")
        inner = build_model(ModelContext(model_id=self.model_id, options=dict(self.options), cache_dir=self.cache_dir))
        provenance = model_provenance(inner, self.model_id)
        self.model = ManagedModel(
            inner,
            provenance,
            model_id=self.model_id,
            cache_dir=None,
            max_consecutive_failures=DEFAULT_MAX_CONSECUTIVE_FAILURES,
            cache_off_reason="suggestions are asked anew",
            timeout_s=self.timeout_s,
        )
        self.grader = LlmJudgeGrader(
            self.model,
            provenance,
            samples=self.samples,
            pass_threshold=RELEVANT_BOUNDARY,
            timeout_s=self.timeout_s,
            rubric=DOCUMENT_RELEVANCE,
        )
        self.assessor = suggestion_assessor(self.model_id, self.options)

    def grade(self, question_id: str, question_text: str, document: Document | None, document_id: str) -> Grading:
        if document is None:
            return Grading(passed=None, score=None, error="the document is not in the corpus")
        text = document.text
        if len(text) > MAX_DOCUMENT_CHARS:
            text = text[:MAX_DOCUMENT_CHARS] + " [... cut]"
        shown = f"{document.title}\n\n{text}" if document.title else text
        item = GradingItem(id=f"{question_id}/{document_id}", prompt=question_text)
        return self.grader.grade(item, shown)

    def line(self, question: str, document: str, grading: Grading) -> JudgmentLine:
        assert grading.score is not None
        grades = [grade_of_score(score) for score in grading.samples]
        return JudgmentLine(
            question=question,
            document=document,
            grade=grade_of_score(grading.score),
            assessor=self.assessor,
            judged_at=utc_now(),
            suggestion=Suggestion(
                scores=grading.samples,
                spread=max(grades) - min(grades),
                unstable=grading.unstable,
                rubric=DOCUMENT_RELEVANCE.identity,
            ),
        )

    def notices(self) -> tuple[str, ...]:
        return self.model.notices("suggestion model")


def suggest(
    out: Path,
    suggester: Suggester,
    texts: Mapping[str, str],
    corpus: Corpus,
    *,
    workers: int = 1,
) -> SuggestResult:
    """Ask ``suggester`` about every pooled pair of ``out`` its assessor has not graded, and
    append a suggestion line for each answered one as it comes (each synced: a paid call is
    not lost to a crash after it)."""
    read = read_judgments(out, missing_ok=True)
    documents = {doc.id: doc for doc in corpus}
    todo = [pair for pair in read.pairs if (*pair, suggester.assessor) not in read.grades]
    questions = {**read.texts, **texts}
    warnings: list[str] = []
    written = 0
    workers, notice = usable_workers(workers, "pairs", model=suggester.model.inner)
    if notice is not None:
        warnings.append(notice)

    def ask(pair: tuple[str, str]) -> Grading:
        question, document = pair
        return suggester.grade(question, questions.get(question, ""), documents.get(document), document)

    for pair, grading in zip(todo, _map(ask, todo, workers), strict=True):
        if grading.error is not None or grading.score is None:
            cause = grading.error or "the judge gave no score"
            warnings.append(f"suggestion for question {pair[0]!r}, document {pair[1]!r}: {one_line(cause, 300)}")
            continue
        written += append_lines(out, [suggester.line(*pair, grading)])
    warnings.extend(suggester.notices())
    return SuggestResult(suggester.assessor, len(todo), written, tuple(warnings))


def _map(
    ask: Callable[[tuple[str, str]], Grading], pairs: Sequence[tuple[str, str]], workers: int
) -> Iterator[Grading]:
    """``ask(pair)`` for each pair, in order, up to ``workers`` at once."""
    if workers <= 1 or len(pairs) <= 1:
        yield from (ask(pair) for pair in pairs)
        return
    with ThreadPoolExecutor(max_workers=min(workers, len(pairs)), thread_name_prefix="goldeneval-suggest") as pool:
        yield from pool.map(ask, pairs)
