"""Jobs: each run kind's nightly evaluation of every partition and its sensor-launched
regression check (named by its declaration, :mod:`goldeneval.kinds`), and ``accept_run``: a
person accepts a stored run as its series' level from the Launchpad."""

from __future__ import annotations

import dagster as dg

from assets.acceptance import accept_op
from goldeneval.kinds import KindDeclaration
from goldeneval.kinds.prompts import PROMPTS
from goldeneval.kinds.retrieval import RETRIEVAL
from pipelines.executors import nightly_executor

NIGHTLY_JOB = RETRIEVAL.names.job
REGRESSION_JOB = RETRIEVAL.names.regression_job
ACCEPT_JOB = "accept_run"
EVALUATION_ASSETS = RETRIEVAL.assets
PROMPT_JOB = PROMPTS.names.job
PROMPT_REGRESSION_JOB = PROMPTS.names.regression_job
PROMPT_ASSETS = PROMPTS.assets


def build_kind_jobs(kind: KindDeclaration, *, executor: bool = False) -> tuple[dg.UnresolvedAssetJobDefinition, ...]:
    """A declared kind's two jobs, partitioned like its assets: the nightly evaluation of one
    partition (on ``$GOLDENEVAL_EXECUTOR`` when ``executor``: Dagster's default, or dask), and
    the regression check its sensor launches."""
    nightly = dg.define_asset_job(
        kind.names.job,
        selection=dg.AssetSelection.assets(*kind.assets),
        description=f"Evaluate one ({kind.cell}) partition and store the run.",
        executor_def=nightly_executor() if executor else None,
    )
    regression = dg.define_asset_job(
        kind.names.regression_job,
        selection=dg.AssetSelection.assets(kind.names.regression_check),
        description=f"Judge one stored {kind.stored} against the previous run of its series.",
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
