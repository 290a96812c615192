"""What any Dagster job costs before it does any work: the floor under the README's main command.

One process that imports dagster, opens the instance in ``$DAGSTER_HOME`` (with the instance
settings ``pipelines.main`` copies into a new home) and runs, in process and with the garbage
collector tuned as ``pipelines.main`` tunes it (``goldeneval.core.collector``, the only part of
goldeneval imported), two jobs of one partitioned asset that does nothing, one after the
other -- as ``pipelines.main`` runs, for a partition, the ``nightly_evaluation`` job (several
assets) and then the ``regression_check`` job the sensor asks for.  Whatever those jobs do,
``python -m pipelines.main`` cannot take less wall time than this, so the dagster section sets
it beside the CLI: where this floor (plus what the questions cost the CLI) is more than the
target ratio of the CLI's whole run, the job as it is run -- two Dagster runs a partition, the
regression check its own run, as its sensor starts it in a deployment -- cannot meet the
target, whatever its assets do.

    DAGSTER_HOME=... .venv/bin/python -m benchmarks.dagster_floor
"""

from __future__ import annotations

import gc
import os
import shutil
import sys
from pathlib import Path

INSTANCE_TEMPLATE = Path(__file__).resolve().parent.parent / "pipelines" / "dagster.yaml"
"""The settings ``pipelines.main.prepare_home`` copies into a new ``$DAGSTER_HOME``."""


def main() -> int:
    home = Path(os.environ["DAGSTER_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    if not (home / "dagster.yaml").exists():
        shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")

    import dagster as dg

    from goldeneval.core.collector import fewer_collections

    partitions = dg.StaticPartitionsDefinition(["only"])

    @dg.asset(partitions_def=partitions)
    def evaluated() -> None:
        """Does nothing: stands for the nightly job's assets."""

    @dg.asset(partitions_def=partitions)
    def checked() -> None:
        """Does nothing: stands for the regression check's asset."""

    jobs = [
        dg.define_asset_job("nightly_floor", selection=[evaluated]),  # partitioned as its asset
        dg.define_asset_job("check_floor", selection=[checked]),
    ]
    defs = dg.Definitions(assets=[evaluated, checked], jobs=jobs)
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    with fewer_collections(), dg.DagsterInstance.get() as instance:  # as pipelines.main.main
        results = [
            defs.resolve_job_def(job.name).execute_in_process(
                partition_key="only", instance=instance, run_config=quiet, raise_on_error=False
            )
            for job in jobs
        ]
    gc.freeze()  # as pipelines.main.ending: the interpreter's teardown does not rescan it all
    return 0 if all(result.success for result in results) else 1


if __name__ == "__main__":
    sys.exit(main())
