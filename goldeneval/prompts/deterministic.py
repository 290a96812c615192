"""The deterministic grader (the default, id ``deterministic``): the prompt's assertions, or the
facts of its reference (:mod:`goldeneval.prompts.facts`), after the one abstention rule
(:func:`grade_abstention`) every grader shares.  No model call, no tokens."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.assertions import check_assertion
from goldeneval.prompts.facts.grading import FACTS_VERSION, MAX_ANSWER_WORDS, grade_reference
from goldeneval.prompts.facts.overlap import MIN_BEYOND_RECALL, MIN_RECALL
from goldeneval.prompts.golden import Assertion
from goldeneval.prompts.grades import (
    DEFAULT_PASS_THRESHOLD,
    DETERMINISTIC,
    Grading,
    GradingItem,
)

__all__ = ["DeterministicGrader", "grade_abstention", "grade_assertions", "grade_assertions_or_reference"]


def grade_abstention(
    rules: AbstentionRules, item: GradingItem, answer: str, grade: Callable[[], Grading], *, ask: bool
) -> Grading:
    """The one abstention rule, for every grader.

    An item that does not say whether it is answerable is graded as it is.  Otherwise an
    answer that abstains (``rules``) passes an unanswerable question (outcome ``abstained``)
    and fails an answerable one (``over_abstention``, score 0) — with no model call either
    way.  An answer that does not abstain on an unanswerable question fails
    (``missed_abstention``) unless ``ask``: then the grader (a judge, which sees the gist
    saying nothing answers it) is asked whether it is an abstention in other words."""
    if item.answerable is None:
        return grade().with_outcome()
    phrase = rules.match(answer)
    if phrase is not None:
        if item.answerable:
            return Grading(
                passed=False,
                score=0.0,
                reason=f"over-abstention: the answer abstains ({phrase!r}) although a document answers the question",
                outcome="over_abstention",
            )
        return Grading(
            passed=True,
            score=1.0,
            reason=f"abstained ({phrase!r}): no document answers the question",
            outcome="abstained",
        )
    if item.answerable:
        return grade().with_outcome()
    if not ask:
        return Grading(
            passed=False,
            score=0.0,
            reason="no document answers the question, and the answer does not abstain (no abstention phrase found)",
            outcome="missed_abstention",
        )
    graded = grade().with_outcome()
    if graded.outcome == "pass":
        return replace(graded, outcome="abstained")
    return replace(graded, outcome="missed_abstention") if graded.outcome == "fail" else graded


def grade_assertions(assertions: Sequence[Assertion], answer: str) -> Grading:
    """A prompt's assertions, for every grader that checks them: the score is the weighted
    share that passed, and the prompt passes when all do."""
    outcomes = tuple(check_assertion(a, answer) for a in assertions)
    total = sum(o.weight for o in outcomes)
    score = sum(o.weight for o in outcomes if o.passed) / total
    return Grading(passed=all(o.passed for o in outcomes), score=score, assertions=outcomes)


def grade_assertions_or_reference(
    rules: AbstentionRules, item: GradingItem, answer: str, against_reference: Callable[[str, str], Grading]
) -> Grading:
    """How every grader without a judge grades (deterministic, semantic), decided once: the
    abstention rule (never asking), then the prompt's assertions when it has any, else
    ``against_reference(answer, reference)`` (the reference is empty when there is none)."""

    def grade() -> Grading:
        if item.assertions:
            return grade_assertions(item.assertions, answer)
        return against_reference(answer, item.reference or "")

    return grade_abstention(rules, item, answer, grade, ask=False)


@dataclass(frozen=True)
class DeterministicGrader:
    """Assertions, or the reference answer: no model call."""

    pass_threshold: float = DEFAULT_PASS_THRESHOLD
    id: str = DETERMINISTIC
    abstention: AbstentionRules = field(default_factory=AbstentionRules)

    @property
    def identity(self) -> str:
        return (
            f"deterministic/v11(assertions;reference={FACTS_VERSION}(max_words={MAX_ANSWER_WORDS})"
            f"|best-sentences-recall>={MIN_RECALL:.3f}|beyond-question-recall>={MIN_BEYOND_RECALL:g}|token-f1>={self.pass_threshold:g};{self.abstention.identity})"
        )

    def grade(self, item: GradingItem, answer: str) -> Grading:
        return grade_assertions_or_reference(
            self.abstention, item, answer, lambda text, reference: self._against_reference(text, reference, item.prompt)
        )

    def _against_reference(self, answer: str, reference: str, question: str) -> Grading:
        graded = grade_reference(answer, reference, self.pass_threshold, question)
        return Grading(passed=graded.passed, score=graded.score, reason=graded.reason)
