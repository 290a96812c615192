"""Run specifications of prompt runs (and the grading part of answer runs): frozen, validated.

The CLI builds them from flags (:mod:`goldeneval.cli.prompts`), Dagster from one suite cell
(:meth:`goldeneval.suite.Suite.prompt_run_spec`); the verbs of :mod:`goldeneval.prompts.pipeline`
evaluate them, and :func:`goldeneval.history.door.record` / :func:`goldeneval.history.door.judge`
store and judge them exactly as retrieval runs.  How a run is graded is declared once, in
:mod:`goldeneval.prompts.settings`, which the suite file and the flags share.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from goldeneval.core.spec import SpecBase
from goldeneval.prompts.settings import GradingSettings, JudgeSettings

__all__ = ["GradingSpec", "JudgeSpec", "PromptRunSpec"]


class JudgeSpec(JudgeSettings):
    """The judge model of ``llm_judge``: built only when that grader is chosen."""

    model_id: str = Field(min_length=1)
    options: dict[str, str] = Field(default_factory=dict)


class GradingSpec(SpecBase, GradingSettings):
    """What prompt and answer runs share: the model and the grader (and, from :class:`SpecBase`,
    how the run is stored and judged)."""

    model_id: str = Field(min_length=1, description="Registered model id or package.module:factory.")
    model_options: dict[str, str] = Field(default_factory=dict)
    judge: JudgeSpec | None = None


class PromptRunSpec(GradingSpec):
    """One evaluation of a golden prompt set against a model."""

    set_ref: str = Field(min_length=1, description="Registered prompt set id or prompt set file.")
    expected_set_id: str | None = None
    sets_dirs: tuple[Path, ...] = ()
    corpus: Path | None = Field(default=None, description="Corpus of retrieval-augmented models; None: the set's.")
