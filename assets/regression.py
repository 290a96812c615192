"""regression_check: the verdict of one stored summary, and the gate as an asset check.

Materialised by the regression sensor once per stored run (the sensor passes the stored run
id in the run config); materialised by hand, it judges the partition's latest summary.  The
verdict is :func:`goldeneval.core.door.judge`, and ``no_regression`` passes exactly when the
gate of ``--fail-on-regression`` would: only a baseline and a passing comparable run.
"""

from typing import Any

import dagster as dg

from assets.checks import partitioned_check
from assets.evaluation import GROUP, STORE_POOL
from assets.partitions import cell
from goldeneval.core import door
from goldeneval.core.errors import StoreError
from goldeneval.core.regression import GateDecision
from resources.goldeneval import GoldenEvalResource

NO_REGRESSION = "no_regression"
SUMMARY_KEY = dg.AssetKey("evaluation_summary")


class RegressionCheckConfig(dg.Config):
    stored_run_id: str = ""
    """The stored run to judge (an id or a unique prefix); empty: the partition's latest summary."""


def _latest_summary_run_id(context: dg.AssetExecutionContext) -> str:
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=SUMMARY_KEY, asset_partitions=[context.partition_key]), limit=1
    ).records
    if not records or records[0].asset_materialization is None:
        raise StoreError(f"partition {context.partition_key}: no evaluation_summary yet; materialise it first")
    return str(records[0].asset_materialization.metadata["stored_run_id"].value)


def regression_check(
    context: dg.AssetExecutionContext, config: RegressionCheckConfig, goldeneval: GoldenEvalResource
) -> dg.MaterializeResult:  # type: ignore[type-arg]
    spec = goldeneval.run_spec(cell(context.partition_key))
    store = goldeneval.open_store()
    stored = store.find_run(config.stored_run_id or _latest_summary_run_id(context))
    verdict = door.judge(store, stored, spec)
    gate = verdict.gate(stored.complete)
    identity: dict[str, Any] = {
        "set": stored.set_id,
        "retriever": stored.model,
        "stored_run_id": stored.id,
        "verdict": verdict.status.value,
        "state": verdict.state.value,
        "reason": verdict.reason,
        "gate": gate.value,
        "previous_run_id": verdict.previous_run_id or "none",
    }
    for name, value in (("top1_hit_rate", stored.pass_rate), ("top3_hit_rate", stored.mean_score)):
        if value is not None:
            identity[name] = dg.MetadataValue.float(value)
    return dg.MaterializeResult(
        metadata={
            **identity,
            "regressed": verdict.regressed,
            "verdict_details": dg.MetadataValue.json(verdict.to_dict()),
        },
        check_results=[
            dg.AssetCheckResult(
                check_name=NO_REGRESSION,
                passed=gate is GateDecision.PASS,
                severity=dg.AssetCheckSeverity.ERROR,
                metadata=identity,
            )
        ],
    )


def build_regression_assets(partitions_def: dg.MultiPartitionsDefinition) -> list[Any]:
    check = dg.asset(
        name="regression_check",
        partitions_def=partitions_def,
        group_name=GROUP,
        deps=[SUMMARY_KEY],
        pool=STORE_POOL,
        check_specs=[
            partitioned_check(
                NO_REGRESSION,
                "regression_check",
                partitions_def,
                "The gate passes: a baseline, or a run comparable with the previous one within every threshold "
                "(a mismatch or an unknown comparison fails it).",
            )
        ],
        description="The regression verdict of one stored evaluation against the previous "
        "run of its series; materialised by a sensor after each evaluation_summary.",
    )(regression_check)
    return [check]


__all__ = ["NO_REGRESSION", "RegressionCheckConfig", "build_regression_assets", "regression_check"]
