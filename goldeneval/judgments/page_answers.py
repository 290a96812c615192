"""Answer judgments on the judging page (issue 42): people check the graders.

``goldeneval judgments judge-answers RUN --out ANSWER-JUDGMENTS.jsonl`` shows a stored prompt
or answer run's answers one at a time — the question, its reference (the gist), the model's
answer and, for an answer run, the passages it answered from — and records a person's verdict
on each (``correct``, ``incorrect`` or ``abstained``) as a line of an answer judgments file,
exactly as :func:`goldeneval.judgments.answer_judgments.read_answer_judgments` reads it, so
``goldeneval judgments answer-stats`` on that file gives the grader's agreement with them.
The grader's own verdict is not shown: the person judges blind.

The store keeps the answers and the context document ids; the question's text and reference
come from the run's set (``--set``, default the run's set id), and the passages' text from its
corpus (``--corpus``, default the set's).  A ``metadata_only`` run kept no answer, question
text or document id: the page says so and takes no verdict.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import InputError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.judgments.answer_judgments import VERDICTS, AnswerJudgment, read_answer_judgments
from goldeneval.judgments.judgments import utc_now
from goldeneval.judgments.page_text import shown_text
from goldeneval.prompts.details import PromptDetails
from goldeneval.store import StoredRun

__all__ = ["AnswerItem", "AnswerJudging", "AnswerReview", "Passage", "answer_review", "load_answer_review"]


@dataclass(frozen=True)
class Passage:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class AnswerItem:
    """One answer to judge: its question's id and text, the reference, the answer, the passages."""

    id: str
    question: str
    reference: str | None
    answer: str
    passages: tuple[Passage, ...] = ()


@dataclass(frozen=True)
class AnswerReview:
    """A stored run's answers as the page shows them; ``withheld`` says why there are none."""

    run_id: str
    set_id: str
    kind: str
    grader: str
    privacy: str
    items: tuple[AnswerItem, ...]
    withheld: str | None = None


def _withheld(run: StoredRun) -> str:
    return (
        f"run {run.id} was stored with metadata_only privacy: it keeps no answer, no question text and no "
        "document id, so there is nothing to judge here. Judge a run stored with full privacy."
    )


def answer_review(
    run: StoredRun, questions: Mapping[str, tuple[str, str | None]], corpus: Corpus | None = None
) -> AnswerReview:
    """The answers of ``run`` to judge: each answered question (an error has no answer) with its
    text and reference from ``questions`` (id -> (text, reference)) and its context documents
    from ``corpus``.  A question the set does not have is invalid input: set and run differ."""
    details = run.details
    if not isinstance(details, PromptDetails):
        raise InputError(f"run {run.id}: a {run.grader} run has no answers to judge (use a prompt or answer run)")
    privacy = run.privacy or PrivacyMode.FULL.value
    common = {"run_id": run.id, "set_id": run.set_id, "kind": details.kind, "grader": run.grader, "privacy": privacy}
    if privacy == PrivacyMode.METADATA_ONLY.value:
        return AnswerReview(**common, items=(), withheld=_withheld(run))
    documents = {doc.id: doc for doc in corpus} if corpus is not None else {}
    items = []
    for detail in details.prompts:
        if detail.answer is None:
            continue
        if detail.id not in questions:
            raise InputError(f"run {run.id} has question {detail.id!r}, which the set does not have: another set?")
        text, reference = questions[detail.id]
        passages = tuple(
            Passage(d, documents[d].title, shown_text(documents[d].text))
            if d in documents
            else Passage(d, "", "(this document is not in the corpus)")
            for d in detail.documents or ()
        )
        items.append(AnswerItem(detail.id, text, reference, detail.answer, passages))
    return AnswerReview(**common, items=tuple(items))


def load_answer_review(
    run: StoredRun, set_ref: str | None, sets_dirs: Iterable[Path] = (), corpus_path: Path | None = None
) -> AnswerReview:
    """:func:`answer_review` with the run's set (``set_ref``, default its set id) and corpus
    (``corpus_path``, default the set's) read here; nothing is read for a ``metadata_only`` run."""
    from goldeneval.core.sets import corpus_for
    from goldeneval.prompts.registry import resolve_prompt_set
    from goldeneval.retrieval.sets import resolve_golden_set

    details = run.details
    if not isinstance(details, PromptDetails) or run.privacy == PrivacyMode.METADATA_ONLY.value:
        return answer_review(run, {})
    folders = tuple(sets_dirs)
    reference = set_ref or run.set_id
    if details.kind == "prompts":
        prompt_set = resolve_prompt_set(reference, folders)
        loaded_id = prompt_set.id
        questions = {p.id: (p.prompt, p.reference) for p in prompt_set.prompts}
        corpus = None
    else:
        golden_set = resolve_golden_set(reference, folders)
        loaded_id = golden_set.id
        questions = {q.id: (q.text, q.answer_gist) for q in golden_set.questions}
        corpus = corpus_for(corpus_path, golden_set.corpus)
    if loaded_id != run.set_id:
        raise InputError(f"--set {reference}: set {loaded_id!r}, but run {run.id} is of set {run.set_id!r}")
    return answer_review(run, questions, corpus)


class AnswerJudging:
    """What the answer page's endpoints do: show an answer, record a verdict in the file."""

    def __init__(self, review: AnswerReview, path: Path, assessor: str) -> None:
        self.review = review
        self.path = path
        self.assessor = assessor
        self.lock = threading.Lock()
        self.by_id = {item.id: item for item in review.items}
        self.verdicts: dict[str, str] = {}
        if path.exists() and path.read_text(encoding="utf-8").strip():
            for judgment in read_answer_judgments(path):  # a bad file fails here, before the page is served
                if judgment.run == review.run_id and judgment.assessor == assessor:
                    self.verdicts[judgment.question] = judgment.verdict

    def state(self) -> dict[str, Any]:
        review = self.review
        with self.lock:
            answers = [[item.id, self.verdicts.get(item.id)] for item in review.items]
        return {
            "run": review.run_id,
            "set": review.set_id,
            "kind": review.kind,
            "privacy": review.privacy,
            "withheld": review.withheld,
            "assessor": self.assessor,
            "file": str(self.path),
            "verdicts": list(VERDICTS),
            "answers": answers,
            "judged": sum(1 for _, verdict in answers if verdict is not None),
        }

    def item(self, index: int) -> dict[str, Any] | None:
        if not 0 <= index < len(self.review.items):
            return None
        item = self.review.items[index]
        with self.lock:
            verdict = self.verdicts.get(item.id)
        return {
            "index": index,
            "id": item.id,
            "question": item.question,
            "reference": item.reference,
            "answer": item.answer,
            "passages": [{"id": p.id, "title": p.title, "text": p.text} for p in item.passages],
            "verdict": verdict,
        }

    def record(self, body: Any) -> tuple[int, dict[str, Any]]:
        """One verdict, appended at once as an answer judgment line (a later one supersedes it)."""
        if self.review.withheld is not None:
            return 400, {"error": self.review.withheld}
        if not isinstance(body, dict):
            return 400, {"error": "expected a JSON object with question and verdict"}
        question, verdict = body.get("question"), body.get("verdict")
        if verdict not in VERDICTS:
            return 400, {"error": f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}"}
        if not isinstance(question, str) or question not in self.by_id:
            return 400, {"error": f"{question!r} is not an answered question of run {self.review.run_id}"}
        judgment = AnswerJudgment(
            run=self.review.run_id, question=question, verdict=verdict, assessor=self.assessor, judged_at=utc_now()
        )
        line = json.dumps(judgment.model_dump(), ensure_ascii=False) + "\n"
        with self.lock:
            try:
                with self.path.open("a", encoding="utf-8") as handle:
                    handle.write(line)
            except OSError as exc:
                return 500, {"error": f"{self.path}: cannot write: {exc.strerror}"}
            self.verdicts[question] = verdict
        return 200, {"ok": True, "judged_at": judgment.judged_at}
