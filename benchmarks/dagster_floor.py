"""What any Dagster job costs before it does any work: the floor under the README's main command.

One process that imports dagster, opens the instance in ``$DAGSTER_HOME`` (with the instance
settings ``pipelines.main`` copies into a new home) and runs, in process, a job of one
partitioned asset that does nothing -- once, where ``pipelines.main`` runs the
``nightly_evaluation`` job (several assets) and then the ``regression_check`` job.  Nothing of
goldeneval is imported.  Whatever the job does, ``python -m pipelines.main`` cannot take less
wall time than this, so the dagster section sets it beside the CLI: where this floor alone is
more than the target ratio of the CLI's whole run, no change inside goldeneval can meet the
target.

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

    partitions = dg.StaticPartitionsDefinition(["only"])

    @dg.asset(partitions_def=partitions)
    def nothing() -> None:
        """Does nothing: the floor is Dagster's own cost."""

    job = dg.define_asset_job("floor", selection=[nothing], partitions_def=partitions)
    defs = dg.Definitions(assets=[nothing], jobs=[job])
    quiet = {"loggers": {"console": {"config": {"log_level": "WARNING"}}}}
    with dg.DagsterInstance.get() as instance:
        result = defs.resolve_job_def("floor").execute_in_process(
            partition_key="only", instance=instance, run_config=quiet, raise_on_error=False
        )
    gc.freeze()  # as pipelines.main.ending: the interpreter's teardown does not rescan it all
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main())
