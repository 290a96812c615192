"""People check the graders (issue 42): answer judgments, and each grader's agreement with them.

A team that trusts a grader on the calibration set still needs to know whether to trust it on
its own data.  An **answer judgments file** holds people's verdicts on a stored run's answers,
one JSON object a line::

    {"run": "<run id or unique prefix>", "question": "<prompt or question id>",
     "verdict": "correct" | "incorrect" | "abstained", "assessor": "ann"}

(``judged_at`` may be added).  A later line for the same (run, question, assessor) supersedes
an earlier one.  :func:`answer_agreements` compares them with the grader that graded the run,
read from its stored outcomes — ``pass`` is *correct*; ``fail`` and ``missed_abstention``
*incorrect*; ``abstained`` and ``over_abstention`` *abstained* (the answer abstained, whether or
not it should have); an unstable verdict or an error is no verdict and is left out — as
Cohen's kappa (:func:`goldeneval.judgments.agreement.cohen_kappa`, each verdict a category)
with its interval, per (run, assessor).  A run graded by the judge gives the judge's agreement.
``goldeneval judgments answer-stats`` prints them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldeneval.core.errors import InputError, one_line
from goldeneval.judgments.agreement import Kappa, cohen_kappa
from goldeneval.prompts.details import PromptDetail, PromptDetails
from goldeneval.store import StoredRun

__all__ = [
    "VERDICTS",
    "AnswerJudgment",
    "GraderAgreement",
    "answer_agreements",
    "grader_verdict",
    "read_answer_judgments",
]

Verdict = Literal["correct", "incorrect", "abstained"]
VERDICTS: tuple[Verdict, ...] = ("correct", "incorrect", "abstained")
_OUTCOME_VERDICTS: Mapping[str, Verdict] = {
    "pass": "correct",
    "fail": "incorrect",
    "missed_abstention": "incorrect",
    "abstained": "abstained",
    "over_abstention": "abstained",
}


class AnswerJudgment(BaseModel):
    """One person's verdict on one answer of a stored run."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run: str = Field(min_length=1)
    question: str = Field(min_length=1)
    verdict: Verdict
    assessor: str = Field(min_length=1)
    judged_at: str | None = None


def read_answer_judgments(path: Path) -> list[AnswerJudgment]:
    """The file's judgments, the last line of each (run, question, assessor) winning.  A line
    that is not a JSON object with these fields is invalid input naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read the answer judgments file ({exc.strerror or exc})") from None
    latest: dict[tuple[str, str, str], AnswerJudgment] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            judgment = AnswerJudgment.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}:{number}: not JSON ({exc.msg})") from None
        except ValidationError as exc:
            error = exc.errors()[0]
            where = ".".join(str(p) for p in error["loc"]) or "line"
            raise InputError(f"{path}:{number}: field {where!r}: {one_line(error['msg'], 120)}") from None
        latest[(judgment.run, judgment.question, judgment.assessor)] = judgment
    if not latest:
        raise InputError(f"{path}: no answer judgments (one JSON object a line: run, question, verdict, assessor)")
    return list(latest.values())


def grader_verdict(detail: PromptDetail) -> Verdict | None:
    """The grader's verdict on one answer, in the people's terms; None for an error or an
    unstable verdict (no verdict to agree with)."""
    if detail.status != "ok":
        return None
    if detail.outcome is not None:
        return _OUTCOME_VERDICTS.get(detail.outcome)
    if detail.passed is None:
        return None
    return "correct" if detail.passed else "incorrect"  # format 1 details: no outcome


@dataclass(frozen=True)
class GraderAgreement:
    """One grader's (one run's) agreement with one assessor over the answers both gave a verdict."""

    run_id: str
    grader: str
    assessor: str
    kappa: Kappa
    confusion: dict[str, dict[str, int]]
    """Grader verdict -> assessor verdict -> count."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run_id,
            "grader": self.grader,
            "assessor": self.assessor,
            **self.kappa.to_dict(),
            "confusion": self.confusion,
        }

    def to_text(self) -> str:
        k = self.kappa
        kappa = "undefined" if k.kappa is None else f"{k.kappa:.3f}"
        interval = "" if k.low is None or k.high is None else f" [{k.low:.3f}, {k.high:.3f}]"
        return (
            f"{self.run_id[:12]}  {self.grader:<24} {self.assessor:<16} {k.pairs:>6}  "
            f"{k.observed:.3f}  {kappa}{interval}"
        )


def answer_agreements(
    judgments: Sequence[AnswerJudgment], runs: Mapping[str, StoredRun], *, confidence: float = 0.95
) -> list[GraderAgreement]:
    """Per judged run and assessor, the run's grader against the assessor (``runs`` maps each
    judgment's ``run`` to its stored run, details loaded).  A judgment of a question the run
    does not have is invalid input: the file and the store do not belong together."""
    found: list[GraderAgreement] = []
    for run_ref in sorted({j.run for j in judgments}):
        run = runs[run_ref]
        details = run.details
        if not isinstance(details, PromptDetails):
            raise InputError(f"run {run.id}: a {run.grader} run has no answers to judge (use a prompt or answer run)")
        by_question = {detail.id: grader_verdict(detail) for detail in details.prompts}
        mine = [j for j in judgments if j.run == run_ref]
        unknown = sorted({j.question for j in mine} - set(by_question))
        if unknown:
            shown = ", ".join(repr(q) for q in unknown[:3]) + (" ..." if len(unknown) > 3 else "")
            raise InputError(f"run {run.id} has no question {shown}: are the judgments of another run?")
        for assessor in sorted({j.assessor for j in mine}):
            pairs = [
                (grader, j.verdict)
                for j in mine
                if j.assessor == assessor and (grader := by_question[j.question]) is not None
            ]
            kappa = cohen_kappa(
                [VERDICTS.index(g) for g, _ in pairs], [VERDICTS.index(p) for _, p in pairs], confidence=confidence
            )
            confusion: dict[str, dict[str, int]] = {
                g: {p: sum(1 for x, y in pairs if (x, y) == (g, p)) for p in VERDICTS} for g in VERDICTS
            }
            found.append(GraderAgreement(run.id, details.grader, assessor, kappa, confusion))
    return found
