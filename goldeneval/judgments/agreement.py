"""Agreement between two assessors on the pairs both judged: Cohen's kappa with an interval.

Cohen's (unweighted) kappa treats each grade as a category:
``kappa = (p_o - p_e) / (1 - p_e)``, with ``p_o`` the share of pairs given the same grade and
``p_e`` the agreement expected by chance from each assessor's own grade distribution
(Cohen 1960, "A coefficient of agreement for nominal scales").

Its standard error is the large-sample one of Fleiss, Cohen and Everitt (1969), "Large
sample standard errors of kappa and weighted kappa", which does not assume kappa is 0::

    var = ( sum_i p_ii [1 - (p_i. + p_.i)(1 - k)]^2
          + (1 - k)^2 sum_{i != j} p_ij (p_.i + p_j.)^2
          - [k - p_e (1 - k)]^2 ) / (n (1 - p_e)^2)

and the interval is ``kappa -/+ z * se`` (z = 1.96 for 95 %), clipped to [-1, 1].  Kappa is
undefined (None) when ``p_e`` is 1: both assessors gave one and the same grade to every pair.
tests/test_judgments_agreement.py checks kappa against scikit-learn's ``cohen_kappa_score``
and the standard error against a hand computation.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from statistics import NormalDist

__all__ = ["Agreement", "JudgmentStats", "Kappa", "QuestionProgress", "agreements", "cohen_kappa", "judgment_stats"]


@dataclass(frozen=True)
class Kappa:
    pairs: int
    observed: float
    """``p_o``: the share of pairs given the same grade."""
    kappa: float | None
    se: float | None
    low: float | None
    high: float | None
    confidence: float

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "pairs": self.pairs,
            "observed_agreement": self.observed,
            "kappa": self.kappa,
            "se": self.se,
            "ci_low": self.low,
            "ci_high": self.high,
            "confidence": self.confidence,
        }


def cohen_kappa(first: Sequence[int], second: Sequence[int], *, confidence: float = 0.95) -> Kappa:
    """Cohen's kappa of two assessors' grades of the same pairs (``first[i]`` and ``second[i]``
    grade pair ``i``), with its Fleiss-Cohen-Everitt standard error and interval."""
    if len(first) != len(second):
        raise ValueError(f"two assessors must grade the same pairs: got {len(first)} and {len(second)} grades")
    n = len(first)
    if n == 0:
        return Kappa(0, math.nan, None, None, None, None, confidence)
    categories = sorted(set(first) | set(second))
    index = {grade: i for i, grade in enumerate(categories)}
    m = len(categories)
    p = [[0.0] * m for _ in range(m)]
    for a, b in zip(first, second, strict=True):
        p[index[a]][index[b]] += 1.0 / n
    rows = [sum(p[i]) for i in range(m)]
    cols = [sum(p[i][j] for i in range(m)) for j in range(m)]
    observed = sum(p[i][i] for i in range(m))
    expected = sum(rows[i] * cols[i] for i in range(m))
    if math.isclose(expected, 1.0):
        return Kappa(n, observed, None, None, None, None, confidence)
    k = (observed - expected) / (1.0 - expected)
    diagonal = sum(p[i][i] * (1.0 - (rows[i] + cols[i]) * (1.0 - k)) ** 2 for i in range(m))
    off = sum(p[i][j] * (cols[i] + rows[j]) ** 2 for i in range(m) for j in range(m) if i != j)
    variance = (diagonal + (1.0 - k) ** 2 * off - (k - expected * (1.0 - k)) ** 2) / (n * (1.0 - expected) ** 2)
    se = math.sqrt(max(variance, 0.0))
    z = NormalDist().inv_cdf(0.5 + confidence / 2.0)  # the standard library: scipy costs a second at start-up
    return Kappa(n, observed, k, se, max(-1.0, k - z * se), min(1.0, k + z * se), confidence)


@dataclass(frozen=True)
class Agreement:
    first: str
    second: str
    kappa: Kappa

    def to_dict(self) -> dict[str, object]:
        return {"assessors": [self.first, self.second], **self.kappa.to_dict()}


def agreements(
    by_assessor: Mapping[str, Mapping[tuple[str, str], int]], *, confidence: float = 0.95
) -> list[Agreement]:
    """Kappa of every two assessors over the pairs both judged (pairs of assessors sharing none are left out)."""
    found: list[Agreement] = []
    for first, second in combinations(sorted(by_assessor), 2):
        shared = sorted(set(by_assessor[first]) & set(by_assessor[second]))
        if not shared:
            continue
        kappa = cohen_kappa(
            [by_assessor[first][pair] for pair in shared],
            [by_assessor[second][pair] for pair in shared],
            confidence=confidence,
        )
        found.append(Agreement(first, second, kappa))
    return found


# --------------------------------------------------------------------------- the file's statistics


@dataclass(frozen=True)
class QuestionProgress:
    question: str
    pairs: int
    judged: int
    """Pairs at least one assessor graded."""

    @property
    def unjudged(self) -> int:
        return self.pairs - self.judged


@dataclass(frozen=True)
class JudgmentStats:
    questions: tuple[QuestionProgress, ...]
    grades: dict[str, dict[int, int]]
    """Assessor -> grade -> how many of their judgments have it."""
    agreement: tuple[Agreement, ...]

    def to_dict(self) -> dict[str, object]:
        return {
            "pairs": sum(q.pairs for q in self.questions),
            "judged": sum(q.judged for q in self.questions),
            "unjudged": sum(q.unjudged for q in self.questions),
            "questions": [
                {"question": q.question, "pairs": q.pairs, "judged": q.judged, "unjudged": q.unjudged}
                for q in self.questions
            ],
            "grades": {a: {str(g): n for g, n in sorted(c.items())} for a, c in sorted(self.grades.items())},
            "agreement": [a.to_dict() for a in self.agreement],
        }

    def to_text(self) -> str:
        pairs = sum(q.pairs for q in self.questions)
        judged = sum(q.judged for q in self.questions)
        lines = [
            f"{judged} of {pairs} pairs judged, {pairs - judged} unjudged, over {len(self.questions)} questions",
            "",
        ]
        lines.append("question\tpairs\tjudged\tunjudged")
        lines.extend(f"{q.question}\t{q.pairs}\t{q.judged}\t{q.unjudged}" for q in self.questions)
        lines.append("")
        lines.append("grades by assessor:" if self.grades else "grades by assessor: none yet")
        for assessor, counts in sorted(self.grades.items()):
            shown = ", ".join(f"{grade}: {n}" for grade, n in sorted(counts.items()))
            lines.append(f"  {assessor}: {shown}")
        if self.agreement:
            lines.append("")
            lines.append("agreement (Cohen's kappa, 95% interval, Fleiss-Cohen-Everitt standard error):")
        for found in self.agreement:
            k = found.kappa
            if k.kappa is None or k.low is None or k.high is None:
                value = "undefined (both gave one grade only)"
            else:
                value = f"{k.kappa:.3f} [{k.low:.3f}, {k.high:.3f}]"
            lines.append(f"  {found.first} / {found.second}: {value} over {k.pairs} pairs, {k.observed:.1%} agree")
        return "\n".join(lines)


def judgment_stats(
    pairs: Sequence[tuple[str, str]], grades: Mapping[tuple[str, str, str], int], *, confidence: float = 0.95
) -> JudgmentStats:
    """Progress per question (in first-seen order), grade counts per assessor, pairwise kappa."""
    judged_pairs = {(q, d) for q, d, _ in grades}
    progress: dict[str, list[int]] = {}
    for question, document in pairs:
        counts = progress.setdefault(question, [0, 0])
        counts[0] += 1
        counts[1] += (question, document) in judged_pairs
    by_assessor: dict[str, dict[tuple[str, str], int]] = {}
    counted: dict[str, dict[int, int]] = {}
    for (question, document, assessor), grade in grades.items():
        by_assessor.setdefault(assessor, {})[(question, document)] = grade
        counts_of = counted.setdefault(assessor, {})
        counts_of[grade] = counts_of.get(grade, 0) + 1
    return JudgmentStats(
        questions=tuple(QuestionProgress(q, n, j) for q, (n, j) in progress.items()),
        grades=counted,
        agreement=tuple(agreements(by_assessor, confidence=confidence)),
    )
