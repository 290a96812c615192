"""Jobs: the nightly evaluation of every partition, the sensor-launched regression check, and
``accept_run``: a person accepts a stored run as its series' level from the Launchpad."""

from __future__ import annotations

import dagster as dg

from assets.acceptance import accept_op
from pipelines.executors import nightly_executor

NIGHTLY_JOB = "nightly_evaluation"
REGRESSION_JOB = "regression_check_job"
ACCEPT_JOB = "accept_run"
EVALUATION_ASSETS = ("golden_question_sets", "retriever_rankings", "question_hits", "evaluation_summary")


PROMPT_JOB = "nightly_prompt_evaluation"
PROMPT_REGRESSION_JOB = "prompt_regression_check_job"
PROMPT_ASSETS = ("golden_prompt_sets", "model_responses", "prompt_gradings", "prompt_summary")


def build_prompt_jobs() -> tuple[dg.UnresolvedAssetJobDefinition, ...]:
    """Partitioned like the prompt assets: (prompt set x model), ADR-060."""
    nightly = dg.define_asset_job(
        PROMPT_JOB,
        selection=dg.AssetSelection.assets(*PROMPT_ASSETS),
        description="Evaluate one (golden prompt set x model) partition and store the run.",
    )
    regression = dg.define_asset_job(
        PROMPT_REGRESSION_JOB,
        selection=dg.AssetSelection.assets("prompt_regression_check"),
        description="Judge one stored prompt run against the previous run of its series.",
    )
    return nightly, regression


def build_jobs() -> tuple[dg.UnresolvedAssetJobDefinition, ...]:
    """Both jobs are partitioned like their assets: (set x retriever)."""
    nightly = dg.define_asset_job(
        NIGHTLY_JOB,
        selection=dg.AssetSelection.assets(*EVALUATION_ASSETS),
        description="Evaluate one (golden set x retriever) partition and store the run.",
        executor_def=nightly_executor(),  # $GOLDENEVAL_EXECUTOR: Dagster's default, or dask
    )
    regression = dg.define_asset_job(
        REGRESSION_JOB,
        selection=dg.AssetSelection.assets("regression_check"),
        description="Judge one stored evaluation against the previous run of its series.",
    )
    return nightly, regression


def build_accept_job() -> dg.JobDefinition:
    """``goldeneval accept`` from the UI: launched with op config (run id, reason, by)."""

    @dg.job(
        name=ACCEPT_JOB,
        description="Accept a stored run as its series' level (baseline: accepted): a regression stays red "
        "until a person accepts a run. Launchpad config: ops.accept.config.run_id, reason, by.",
    )
    def accept_run() -> None:
        accept_op()

    return accept_run
