"""The prompts kind (ADR-060), declared: (golden prompt set x model) partitions, the graph
prompt sets -> responses -> gradings -> summary (``assets.prompts``), the nightly names, and
the commands of its family (:mod:`goldeneval.cli.prompts`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldeneval.kinds import KindCommand, KindDeclaration, KindNames


def _cells(suite: Any) -> tuple[Sequence[str], Sequence[str]]:
    cells: tuple[Sequence[str], Sequence[str]] = suite.prompt_cells
    return cells


def _spec(suite: Any, where: Mapping[str, str]) -> Any:
    return suite.prompt_run_spec(where["prompt_set"], where["model"])


PROMPTS = KindDeclaration(
    name="prompts",
    cell="golden prompt set x model",
    dimensions=("prompt_set", "model"),
    cells=_cells,
    spec=_spec,
    assets=("golden_prompt_sets", "model_responses", "prompt_gradings", "prompt_summary"),
    names=KindNames.prefixed("prompt_", cli_sensor="prompt_cli_run_series_sensor"),
    stored="prompt run",
    title="goldeneval: nightly prompt evaluation (ADR-060)",
    rates=(("pass", "pass_rate"), ("mean", "mean_score")),
    dagster="assets.prompts:PROMPT_DAGSTER",
    details="goldeneval.prompts.details:PROMPT_DETAILS",  # answers runs' details too
    commands={
        "models": KindCommand(
            "goldeneval.cli.prompts:models",
            "List the registered model ids (entry-point group goldeneval.models).",
        ),
        "prompt-schema": KindCommand(
            "goldeneval.cli.prompts:prompt_schema",
            "Print the JSON Schema of golden prompt set files.",
        ),
        "prompt-sets": KindCommand(
            "goldeneval.cli.prompts:prompt_sets",
            "List the registered golden prompt sets and where each comes from.",
        ),
        "prompts": KindCommand(
            "goldeneval.cli.prompts:prompts",
            "Run a golden prompt set against a model, grade, print and store the run, report the verdict.",
        ),
        "quality": KindCommand(
            "goldeneval.cli.prompts:quality",
            "Re-rank candidate models (series names) by their stored quality score, best first.",
        ),
    },
)
