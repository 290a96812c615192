"""The prompt assets (ADR-060): prompt sets -> model responses -> gradings -> stored summary,
and the regression check of each stored summary, over (prompt set x model) partitions.

The same shape as the retrieval assets, and thin in the same way: each body builds the
partition's run specification and calls one verb — :func:`goldeneval.prompts.pipeline.evaluate`,
then :func:`goldeneval.history.door.record` and :func:`goldeneval.history.door.judge`, the verbs
every run kind shares.  The checks are named as the retrieval ones (``run_complete`` on
``prompt_summary``, ``no_regression`` on ``prompt_regression_check``), so the alert sensor
treats them alike.
"""

import warnings
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import dagster as dg
import pyarrow as pa

from assets.kinds import KindAssets
from assets.metadata import RunLabels, float_rates, shown_counts, shown_rates, table_metadata
from assets.partitions import PROMPT_FOLDERS, prompt_cell
from assets.regression import CheckedKind, build_regression_check
from assets.series import PROMPT_SERIES, CliRuns, build_series_specs, observe
from assets.summary import SpooledSummary, observed_run, record_summary, spooled_result, summary_result
from assets.tables import EvaluatedKind, Table, build_kind_assets, full_table, table_output
from goldeneval.kinds.prompts import PROMPTS
from goldeneval.prompts import pipeline as prompt_pipeline
from goldeneval.prompts.details import PROMPT_RATE_NAMES, PROMPTS_COMPLETION, PromptRate
from goldeneval.prompts.golden import prompt_set_digest
from goldeneval.prompts.tables import (
    gradings_privacy,
    gradings_table,
    gradings_tables_run_id,
    prompt_set_table,
    responses_table,
    run_from_gradings,
)
from resources.goldeneval import GoldenEvalResource

PROMPT_GROUP = "goldeneval_prompts"
PROMPT_SUMMARY_KEY = dg.AssetKey("prompt_summary")
PROMPT_ASSETS = ("golden_prompt_sets", "model_responses", "prompt_gradings", "prompt_summary")
PROMPT_LABELS = RunLabels.of(PROMPTS, PROMPT_RATE_NAMES)
"""How the prompt summary and checks name a run: its prompt set and model, ``pass rate`` and ``mean score``."""
GRADINGS_PREVIEW_COLUMNS = ("prompt_id", "status", "passed", "score", "unstable", "assertions_passed", "latency_ms")

__all__ = [
    "PROMPT_ASSETS",
    "PROMPT_CLI_RUNS",
    "PROMPT_DAGSTER",
    "PROMPT_GROUP",
    "PROMPT_SUMMARY_KEY",
    "build_prompt_assets",
]


def prompt_rates(rate: PromptRate) -> dict[str, float | None]:
    """A prompt summary's pass rate and mean score, by name: shown as text on the partitioned
    assets, plotted as floats on the per-series keys (``assets.metadata``)."""
    return {"pass_rate": rate.pass_rate, "mean_score": rate.mean_score}


PROMPT_CLI_RUNS = CliRuns(
    series=PROMPT_SERIES,
    sensor="prompt_cli_run_series_sensor",
    spec=lambda goldeneval, where: goldeneval.prompt_run_spec(where),
    plotted=lambda _store, stored: {"pass_rate": stored.pass_rate, "mean_score": stored.mean_score},
)
"""A prompt run the CLI stored plots what :func:`prompt_rates` gives the summary's."""


def golden_prompt_sets(context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource) -> dg.Output[pa.Table]:
    spec = goldeneval.prompt_run_spec(prompt_cell(context.partition_key))
    prompt_set = prompt_pipeline.load_prompt_set(spec)
    digest = prompt_set_digest(prompt_set)
    table = prompt_set_table(prompt_set, spec.privacy, context.run.run_id, datetime.now(UTC))
    types = Counter(a.type.value for p in prompt_set.prompts for a in p.assertions)
    with warnings.catch_warnings():  # Output's data_version is a beta parameter of Dagster 1.13
        warnings.filterwarnings("ignore", category=dg.BetaWarning)
        return dg.Output(
            table,
            metadata={
                **shown_counts({"prompt_count": len(prompt_set.prompts)}),
                "assertions_by_type": dg.MetadataValue.json(dict(sorted(types.items()))),
                "label_digest": digest,
                "privacy": spec.privacy.value,
                **table_metadata(table),
            },
            data_version=dg.DataVersion(digest),
        )


def prompt_evaluation(
    context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource
) -> Iterator[dg.Output[pa.Table]]:
    """Ask the model every prompt and grade the answers (one step: in ``metadata_only`` the
    answers are never written, so grading cannot read them back from a table)."""
    spec = goldeneval.prompt_run_spec(prompt_cell(context.partition_key))
    run = prompt_pipeline.evaluate(spec)
    for notice in run.notices:
        context.log.warning(notice)
    responses = responses_table(run, spec.privacy, context.run.run_id)
    counted = shown_counts(
        {"prompt_count": len(run.results), "model_errors": sum(1 for r in run.results if r.stage == "model")}
    )
    yield table_output(responses, "model_responses", spec.privacy, counted)
    gradings = gradings_table(run, spec.privacy, context.run.run_id)
    overall = run.aggregates.overall
    rated = {
        **shown_rates(prompt_rates(overall)),
        **shown_counts({"errors": overall.errors, "unstable": run.aggregates.unstable}),
        "grader": run.grader,
        "notices": dg.MetadataValue.json(list(run.notices)),
    }
    where = prompt_cell(context.partition_key)
    full = full_table(goldeneval.suite().tables_root, "prompt_gradings", where, context.run.run_id)
    yield table_output(gradings, "prompt_gradings", spec.privacy, rated, preview=GRADINGS_PREVIEW_COLUMNS, full=full)


def prompt_summary(
    context: dg.AssetExecutionContext, goldeneval: GoldenEvalResource, prompt_gradings: pa.Table
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    """Record the run the gradings describe (once: :func:`assets.summary.record_summary`)."""
    where = prompt_cell(context.partition_key)
    run = run_from_gradings(prompt_gradings)
    recorded = record_summary(
        context,
        goldeneval,
        goldeneval.prompt_run_spec(where),
        run,
        grader=run.grader,
        tables_privacy=gradings_privacy(prompt_gradings),
        tables_run_id=gradings_tables_run_id(prompt_gradings),
    )
    overall = run.aggregates.overall
    identity = PROMPT_LABELS.identity(where["prompt_set"], where["model"], overall.pass_rate, overall.mean_score)
    if isinstance(recorded, SpooledSummary):
        return spooled_result(recorded, identity)
    stored = recorded.stored
    metadata = {
        **shown_counts(
            {
                "prompt_count": overall.prompts,
                "graded_count": overall.graded,
                "error_count": overall.errors,
                "unstable_count": run.aggregates.unstable,
            }
        ),
        "status": stored.status,
        "grader": stored.grader,
        **full_table(goldeneval.suite().tables_root, "prompt_gradings", where, recorded.tables_run_id),
    }
    observe(
        context,
        where,
        goldeneval.suite().prompt_cells.series,
        observed_run(recorded, float_rates(prompt_rates(overall))),  # plotted per series, over the nights
        PROMPT_SERIES,
    )
    return summary_result(recorded, identity, metadata, PROMPTS_COMPLETION.of(overall.errors, overall.prompts))


PROMPT_CHECK = CheckedKind(
    name="prompt_regression_check",
    summary_key=PROMPT_SUMMARY_KEY,
    group=PROMPT_GROUP,
    spec=lambda goldeneval, key: goldeneval.prompt_run_spec(prompt_cell(key)),
    labels=PROMPT_LABELS,
    check_description="The gate passes: a baseline, or a run comparable with the previous one within every threshold.",
    description="The regression verdict of one stored prompt run against the previous run of its series; "
    "materialised by a sensor after each prompt_summary.",
)


PROMPT_KIND = EvaluatedKind(
    group=PROMPT_GROUP,
    golden=Table("golden_prompt_sets", "The validated golden prompt set, one row per prompt (Parquet, hive layout)."),
    load=golden_prompt_sets,
    step="prompt_evaluation",
    evaluate=prompt_evaluation,
    outputs=(
        Table("model_responses", "Per prompt: the model's answer (full privacy only), latency, status."),
        Table("prompt_gradings", "Per prompt: passed, score, assertions, judge samples and spread, unstable, status."),
    ),
    summary=Table("prompt_summary", "Pass rate and mean score, stored as one run in the result store."),
    summarise=prompt_summary,
    check_description="Every prompt was answered and graded: the run is complete.",
    folders=PROMPT_FOLDERS,  # the summary rebuilds its run from its table: it reads the file as written
)


def build_prompt_assets(partitions_def: dg.MultiPartitionsDefinition, *, store_kind: str = "duckdb") -> list[Any]:
    """The prompt assets and the prompt regression check over (prompt set x model) partitions."""
    check_asset = build_regression_check(PROMPT_CHECK, partitions_def)
    series = build_series_specs(partitions_def, PROMPT_SERIES)  # plotted per series (assets.series)
    return [*build_kind_assets(PROMPT_KIND, partitions_def, store_kind=store_kind), check_asset, *series]


PROMPT_DAGSTER = KindAssets(
    build=lambda partitions_def, store_kind: build_prompt_assets(partitions_def, store_kind=store_kind),
    cli_runs=PROMPT_CLI_RUNS,
)
"""The prompts kind's Dagster part, as its declaration names it (``goldeneval.kinds.prompts``)."""
