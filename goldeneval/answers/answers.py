"""Retrieval-augmented answers, end to end: retrieve, answer from the top documents, grade.

A golden question set runs through a retriever and a model (``goldeneval answers``):

1. the retrieval run is evaluated, stored and judged exactly as ``goldeneval retrieval``
   would (its own series, protocol v1);
2. each question is answered by the model from the top ``context_depth`` distinct
   documents the retriever returned (chat models get them rendered into the prompt,
   ``goldeneval.extractive`` reads them directly);
3. each answer is graded against the question's ``answer_gist`` — deterministic: SQuAD's
   token F1 on normalised tokens, passing at 0.5 (containing the gist is a signal in the
   reason, not a score); or the opt-in judge, which is handed the passages the model saw
   (a context-aware rubric such as ``faithfulness`` judges against them).  A question whose
   set says no document answers it (an empty ``expected``, ADR-072) is answered correctly by
   an abstention; an abstention on any other question is an ``over_abstention``
   (:func:`goldeneval.prompts.graders.grade_abstention`);
4. the answer run is stored beside the retrieval run (its id in the details) and judged in
   its own series.  Its benchmark fingerprint is the retrieval benchmark's parts — corpus
   revision, labels (with the gists: the label digest ignores them) and protocol — plus the
   grader's identity; it is unknown whenever the corpus revision is.

Answer quality is split by whether retrieval hit (top-3), so a bad answer shows as a
retrieval miss or a generation failure.  Questions without an ``answer_gist`` cannot be
graded and are left out, with a notice.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import InputError
from goldeneval.core.gate import GateDecision
from goldeneval.core.provenance import Provenance, benchmark_fingerprint
from goldeneval.core.records import RETRIEVAL_GRADER
from goldeneval.core.sets import corpus_for
from goldeneval.history import door
from goldeneval.prompts.evaluation import Progress, PromptRun, Task
from goldeneval.prompts.graders import GraderChoice, GradingItem
from goldeneval.prompts.models import ChatMessage, ChatRequest
from goldeneval.prompts.pipeline import (
    PromptOutcome,
    build_spec_model,
    graded_identity,
    graded_run_fields,
    grading_choice,
    served_provenance,
)
from goldeneval.prompts.spec import GradingSpec
from goldeneval.retrieval import pipeline
from goldeneval.retrieval.golden import GoldenQuestionSet
from goldeneval.retrieval.protocol import SCORING_PROTOCOL_REVISION
from goldeneval.retrieval.results import QuestionResult
from goldeneval.retrieval.run import RetrievalRun
from goldeneval.retrieval.spec import RunSpec
from goldeneval.store import StoreLocation, open_store, store_exists

__all__ = [
    "ANSWER_GRADER_PREFIX",
    "ANSWER_LABELS_VERSION",
    "ANSWER_PROTOCOL_REVISION",
    "DEFAULT_CONTEXT_DEPTH",
    "AnswerRunSpec",
    "AnswersOutcome",
    "answer_grader_id",
    "answer_label_digest",
    "evaluate_answers",
    "run_answers",
]

ANSWER_PROTOCOL_REVISION = "answer-grading/v1"
ANSWER_LABELS_VERSION = "answer-labels-v1"
ANSWER_GRADER_PREFIX = "answer_"
"""Answer runs are stored under grader ``answer_deterministic`` / ``answer_llm_judge``."""
MAX_CONTEXT_CHARS = 4000
ANSWER_SYSTEM = (
    "Answer the question from the context documents only, in one or two sentences. "
    "If the context does not answer it, say that it does not."
)


def answer_grader_id(grader_id: str) -> str:
    return ANSWER_GRADER_PREFIX + grader_id


def answer_label_digest(golden_set: GoldenQuestionSet, retrieval_digest: str) -> str:
    """The retrieval label digest together with every question's answer gist (which the
    label digest leaves out): a changed gist changes what answers are graded against."""
    gists = sorted([q.id, q.answer_gist] for q in golden_set.questions if q.answer_gist)
    encoded = json.dumps([ANSWER_LABELS_VERSION, retrieval_digest, gists], ensure_ascii=False, separators=(",", ":"))
    return f"{ANSWER_LABELS_VERSION}:sha256:{hashlib.sha256(encoded.encode('utf-8')).hexdigest()}"


def _bounded(text: str) -> str:
    if len(text) <= 200:
        return text
    return text[:120] + "...sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _combined_provenance(retrieval: Provenance, model: Provenance) -> Provenance:
    """The answer pipeline: the retriever's corpus and chunking, the model's revision, both pipelines."""
    pipeline_identity = None
    if retrieval.pipeline_identity is not None and model.pipeline_identity is not None:
        pipeline_identity = _bounded(f"{retrieval.pipeline_identity} -> {model.pipeline_identity}")
    return Provenance(
        corpus_revision=retrieval.corpus_revision,
        model_revision=model.model_revision,
        chunking_identity=retrieval.chunking_identity,
        pipeline_identity=pipeline_identity,
        execution_revision=retrieval.execution_revision,
    )


def _passages(context: tuple[Document, ...]) -> tuple[str, ...]:
    """Each context document as the model is shown it (and a context-aware judge after it)."""
    return tuple(f"{doc.title or doc.id}\n{doc.text[:MAX_CONTEXT_CHARS]}" for doc in context)


def _render(question: str, passages: tuple[str, ...]) -> tuple[ChatMessage, ...]:
    blocks = [f"[{n}] {text}" for n, text in enumerate(passages, start=1)]
    user = "Context:\n\n" + ("\n\n".join(blocks) if blocks else "(no documents found)") + f"\n\nQuestion: {question}"
    return (ChatMessage("system", ANSWER_SYSTEM), ChatMessage("user", user))


def _tasks(
    golden_set: GoldenQuestionSet, results: Sequence[QuestionResult], corpus: Corpus | None, depth: int
) -> list[Task]:
    documents = {doc.id: doc for doc in corpus} if corpus is not None else {}
    by_id = {r.question_id: r for r in results}
    tasks = []
    for question in golden_set.questions:
        if not question.answer_gist:
            continue
        result = by_id[question.id]
        context_ids = result.documents[:depth] if result.scored else ()
        context = tuple(documents[d] for d in context_ids if d in documents)
        passages = _passages(context)
        tasks.append(
            Task(
                request=ChatRequest(messages=_render(question.text, passages), question=question.text, context=context),
                item=GradingItem(
                    question.id,
                    question.text,
                    (),
                    question.answer_gist,
                    answerable=bool(question.expected),
                    context=passages,
                ),
                form=question.form.value,
                hard_class=question.hard_class,
                retrieval_hit=result.top3_hit if result.scored else None,
                documents=tuple(context_ids),
                retrieval_error=None if result.scored else (result.error or "retrieval failed"),
            )
        )
    return tasks


def evaluate_answers(
    spec: AnswerRunSpec,
    golden_set: GoldenQuestionSet,
    retrieval: RetrievalRun,
    *,
    choice: GraderChoice | None = None,
    retrieval_run_id: str | None = None,
    progress: Progress | None = None,
) -> PromptRun:
    """Answer and grade every question with a gist from a retrieval run's rankings.  Stores nothing."""
    choice = choice or grading_choice(spec)
    corpus = corpus_for(spec.retrieval.corpus, golden_set.corpus)
    model, model_provenance = build_spec_model(spec, None, context_supplied=True)
    tasks = _tasks(golden_set, retrieval.results, corpus, spec.context_depth)
    if not tasks:
        raise InputError(f"set {golden_set.id!r}: no question has an answer_gist, so no answer can be graded")
    skipped = len(golden_set.questions) - len(tasks)
    notices = [f"{skipped} question(s) of set {golden_set.id!r} have no answer_gist and were not graded"]
    graded = graded_run_fields(spec, model, choice, tasks, progress, notices=notices if skipped else ())
    grader = choice.grader
    labels = answer_label_digest(golden_set, retrieval.label_digest or "")
    protocol = (
        f"{SCORING_PROTOCOL_REVISION}+{ANSWER_PROTOCOL_REVISION}(depth={spec.context_depth})[{graded_identity(choice)}]"
    )
    provenance = _combined_provenance(retrieval.provenance, served_provenance(model_provenance, model))
    return PromptRun(
        kind="answers",
        set_id=golden_set.id,
        grader=answer_grader_id(grader.id),
        label_digest=labels,
        protocol=protocol,
        benchmark_fingerprint=benchmark_fingerprint(provenance.corpus_revision, labels, protocol),
        provenance=provenance,
        retriever_id=spec.retrieval.retriever_id,
        retrieval_run_id=retrieval_run_id,
        retrieval_benchmark_fingerprint=retrieval.benchmark_fingerprint,
        **graded,
    )


DEFAULT_CONTEXT_DEPTH = 3
"""Documents the answers flow hands the model: the protocol's top-3."""


class AnswerRunSpec(GradingSpec):
    """One retrieval-augmented answer run: a golden question set through a retriever and a model.

    ``retrieval`` is the retrieval run's own specification: the retrieval run is evaluated,
    stored and judged exactly as ``goldeneval retrieval`` would, and the answers are graded
    against each question's ``answer_gist``."""

    retrieval: RunSpec
    context_depth: int = Field(default=DEFAULT_CONTEXT_DEPTH, ge=1, le=30)


@dataclass(frozen=True)
class AnswersOutcome:
    """The stored retrieval run and the stored answer run beside it, each with its verdict."""

    retrieval: pipeline.Outcome
    answers: PromptOutcome

    @property
    def gate(self) -> GateDecision:
        """The answer run's gate, unless it passes and the retrieval run's fails."""
        if self.answers.gate is not GateDecision.PASS:
            return self.answers.gate
        return self.retrieval.gate


def run_answers(
    spec: AnswerRunSpec, store_location: StoreLocation | Path, *, progress: Progress | None = None
) -> AnswersOutcome:
    """Retrieve, answer, grade; record and judge both runs.  Invalid input stores nothing."""
    location = StoreLocation.parse(store_location)
    golden_set = pipeline.load_golden_set(spec.retrieval)
    if not any(q.answer_gist for q in golden_set.questions):
        raise InputError(f"set {golden_set.id!r}: no question has an answer_gist, so no answer can be graded")
    choice = grading_choice(spec)
    build_spec_model(spec, None, context_supplied=True)  # refuse a bad model before anything is stored
    pinned_retrieval = pinned_answers = None
    if spec.retrieval.baseline.pinned or spec.baseline.pinned:
        if not store_exists(location):
            raise InputError(f"baseline run: the store {location} does not exist")
        existing = open_store(location)
        pinned_retrieval = door.pinned_baseline(existing, spec.retrieval, golden_set.id, RETRIEVAL_GRADER)
        pinned_answers = door.pinned_baseline(existing, spec, golden_set.id, answer_grader_id(choice.grader.id))
    retrieval = pipeline.evaluate(spec.retrieval, golden_set=golden_set)
    retrieval_outcome = door.record_and_judge(location, retrieval, spec.retrieval, pinned=pinned_retrieval)
    answers = evaluate_answers(
        spec, golden_set, retrieval, choice=choice, retrieval_run_id=retrieval_outcome.stored.id, progress=progress
    )
    return AnswersOutcome(retrieval_outcome, door.record_and_judge(location, answers, spec, pinned=pinned_answers))
