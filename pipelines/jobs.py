"""Jobs: the nightly evaluation of every partition, and the sensor-launched regression check."""

from __future__ import annotations

import dagster as dg

NIGHTLY_JOB = "nightly_evaluation"
REGRESSION_JOB = "regression_check_job"
EVALUATION_ASSETS = ("golden_question_sets", "retriever_rankings", "question_hits", "evaluation_summary")


def build_jobs() -> tuple[dg.UnresolvedAssetJobDefinition, ...]:
    """Both jobs are partitioned like their assets: (set x retriever)."""
    nightly = dg.define_asset_job(
        NIGHTLY_JOB,
        selection=dg.AssetSelection.assets(*EVALUATION_ASSETS),
        description="Evaluate one (golden set x retriever) partition and store the run.",
    )
    regression = dg.define_asset_job(
        REGRESSION_JOB,
        selection=dg.AssetSelection.assets("regression_check"),
        description="Judge one stored evaluation against the previous run of its series.",
    )
    return nightly, regression
