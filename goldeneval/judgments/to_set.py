"""A golden set file from judgments: the original questions, the judged-relevant documents expected.

Each question of the original set keeps its text, form, hard class and answer gist; its
``expected`` documents are the pairs judged relevant (grade >= 1), with their grades in
``grades`` (grade 1 is the default and is not written), and the pairs judged 0 are its
``not_relevant`` documents, so that every run of the set can say how much of what it
returned was judged (judged@k).  Whose grades count:

* ``assessor``: that assessor's judgments only;
* ``merge="majority"``: every assessor's latest grade of a pair; the pair's grade is the most
  common one among them, a tie going to the lower grade (so two assessors who disagree on
  relevant against not relevant make it not relevant);
* neither: the file's only assessor (more than one is an error that says to choose).

A model's suggestions (assessors ``model:...``) count only when named with ``assessor``:
they are no person's grade, so neither the default nor the majority counts them.

A question with no judgment, or with pooled pairs still unjudged and none relevant, is left
out with a notice.  A drafted question (``draft``) is decided by the grade of its source
document alone: relevant accepts it (with every other document judged relevant), 0 rejects
it and an unjudged source leaves it out, whatever the flags; a rejected draft never becomes
a no-answer question.  An accepted draft is written with the text a person gave it on the
judging page (the judgments file's latest text of the question), else its own.  A question
whose pooled pairs are all judged 0 becomes a no-answer question (empty ``expected``) with
``no_answer_when_all_negative``, else it is left out with a notice.  The file written is
read back with :func:`goldeneval.retrieval.golden.load_golden_set` before this returns, so it
is an ordinary set file.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from goldeneval.core.errors import InputError
from goldeneval.judgments.judgments import Judgments, is_model_assessor
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, load_golden_set

__all__ = ["SetFromJudgments", "merged_grades", "write_set"]


@dataclass(frozen=True)
class SetFromJudgments:
    path: Path
    golden_set: GoldenQuestionSet
    notices: tuple[str, ...]


def merged_grades(
    judgments: Judgments, *, assessor: str | None = None, merge: Literal["majority"] | None = None
) -> dict[tuple[str, str], int]:
    """(question, document) -> the grade that counts, by the rules of the module docstring."""
    assessors = judgments.assessors
    if assessor is not None and merge is not None:
        raise InputError("give either --assessor or --merge, not both")
    if assessor is not None:
        if assessor not in assessors:
            raise InputError(f"assessor {assessor!r} judged nothing here (assessors: {', '.join(assessors) or 'none'})")
        return judgments.by_assessor(assessor)
    people = judgments.people  # a model's suggestion counts only when asked for by name
    if merge is None:
        if len(people) > 1:
            raise InputError(
                f"{len(people)} assessors judged these pairs ({', '.join(people)}): "
                "choose one with --assessor NAME, or --merge majority"
            )
        return judgments.by_assessor(people[0]) if people else {}
    votes: dict[tuple[str, str], list[int]] = {}
    for (question, document, who), grade in judgments.grades.items():
        if not is_model_assessor(who):
            votes.setdefault((question, document), []).append(grade)
    return {pair: _majority(grades) for pair, grades in votes.items()}


def _majority(grades: list[int]) -> int:
    counts = Counter(grades)
    top = max(counts.values())
    return min(grade for grade, n in counts.items() if n == top)


def write_set(
    judgments: Judgments,
    original: GoldenQuestionSet,
    out: Path,
    *,
    set_id: str | None = None,
    assessor: str | None = None,
    merge: Literal["majority"] | None = None,
    no_answer_when_all_negative: bool = False,
) -> SetFromJudgments:
    """Write the set (YAML) built from ``judgments`` and ``original`` to ``out`` and load it back."""
    grades = merged_grades(judgments, assessor=assessor, merge=merge)
    pooled: dict[str, list[str]] = {}
    for question_id, document_id in judgments.pairs:
        pooled.setdefault(question_id, []).append(document_id)
    questions: list[dict[str, Any]] = []
    notices: list[str] = []
    for question in original.questions:
        if question.draft is not None:  # an accepted draft carries the text a person gave it on the page
            edited = judgments.texts.get(question.id)
            if edited is not None and edited != question.text:
                question = question.model_copy(update={"text": edited})
        entry = _question(question, pooled.get(question.id, []), grades, no_answer_when_all_negative, notices)
        if entry is not None:
            questions.append(entry)
    strays = sorted(set(pooled) - {q.id for q in original.questions})
    if strays:
        notices.append(f"{len(strays)} judged question(s) not in set {original.id!r} left out: {', '.join(strays[:5])}")
    if not questions:
        raise InputError(f"no question of set {original.id!r} has judgments that make a label; nothing written")
    document: dict[str, Any] = {"id": set_id or f"{original.id}-judged"}
    document["description"] = original.description or f"Labelled from judgments of set {original.id}."
    if original.corpus is not None:
        document["corpus"] = _relative(Path(original.corpus), out.parent)
    document["questions"] = questions
    try:
        out.write_text(yaml.safe_dump(document, sort_keys=False, allow_unicode=True), encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{out}: cannot write: {exc.strerror}") from None
    return SetFromJudgments(out, load_golden_set(out), tuple(notices))


def _question(
    question: GoldenQuestion,
    documents: list[str],
    grades: Mapping[tuple[str, str], int],
    no_answer: bool,
    notices: list[str],
) -> dict[str, Any] | None:
    graded = {d: grades[(question.id, d)] for d in documents if (question.id, d) in grades}
    relevant = {d: g for d, g in graded.items() if g >= 1}
    if question.draft is not None:  # a person decides a draft by judging its source, whatever else was found
        source = question.draft.source
        verdict = grades.get((question.id, source))
        if verdict is None:
            notices.append(f"question {question.id!r}: a draft whose source {source!r} nobody judged yet; left out")
            return None
        if verdict < 1:
            notices.append(
                f"question {question.id!r}: a draft rejected (its source {source!r} judged not relevant); left out"
            )
            return None
    if not graded:
        notices.append(f"question {question.id!r}: no judgment; left out")
        return None
    if not relevant:
        unjudged = len(documents) - len(graded)
        if unjudged:
            notices.append(f"question {question.id!r}: none relevant so far, {unjudged} pair(s) unjudged; left out")
            return None
        if not no_answer:
            notices.append(
                f"question {question.id!r}: every pooled document judged not relevant; left out "
                "(--no-answer-when-all-negative makes it a no-answer question)"
            )
            return None
    entry: dict[str, Any] = {"id": question.id, "text": question.text, "form": question.form.value}
    entry["expected"] = sorted(relevant)
    graded_above_one = {d: g for d, g in sorted(relevant.items()) if g != 1}
    if graded_above_one:
        entry["grades"] = graded_above_one
    negatives = sorted(d for d, g in graded.items() if g < 1)
    if negatives:
        entry["not_relevant"] = negatives
    if question.hard_class is not None:
        entry["hard_class"] = question.hard_class
    if question.answer_gist is not None:
        entry["answer_gist"] = question.answer_gist
    return entry


def _relative(target: Path, start: Path) -> str:
    try:
        return os.path.relpath(target.resolve(), start.resolve())
    except ValueError:  # another drive (Windows)
        return str(target.resolve())
