"""regression_check: the verdict of one stored summary against the previous comparable run.

Materialised by the regression sensor once per evaluation_summary materialisation; the
sensor passes the stored run id in the run config.  Materialised by hand, it checks the
partition's latest summary.
"""

from typing import Any

import dagster as dg

from assets.checks import partitioned_check
from assets.evaluation import GROUP, STORE_POOL
from goldeneval.errors import StoreError
from goldeneval.service import verdict_for
from resources.goldeneval import GoldenEvalResource

NO_REGRESSION = "no_regression"
SUMMARY_KEY = dg.AssetKey("evaluation_summary")


class RegressionCheckConfig(dg.Config):
    stored_run_id: str = ""
    """The stored run to judge; empty: the partition's latest evaluation_summary."""


def _latest_summary_run_id(context: dg.AssetExecutionContext) -> str:
    records = context.instance.fetch_materializations(
        dg.AssetRecordsFilter(asset_key=SUMMARY_KEY, asset_partitions=[context.partition_key]), limit=1
    ).records
    if not records or records[0].asset_materialization is None:
        raise StoreError(f"partition {context.partition_key}: no evaluation_summary yet; materialise it first")
    value = records[0].asset_materialization.metadata["stored_run_id"].value
    return str(value)


def build_regression_assets(partitions_def: dg.MultiPartitionsDefinition) -> list[Any]:
    @dg.asset(
        partitions_def=partitions_def,
        group_name=GROUP,
        deps=[SUMMARY_KEY],
        pool=STORE_POOL,
        check_specs=[
            partitioned_check(
                NO_REGRESSION,
                "regression_check",
                partitions_def,
                "Neither hit rate fell by more than its threshold against the previous comparable run.",
            )
        ],
        description="The regression verdict of one stored evaluation against the previous "
        "run of its series; materialised by a sensor after each evaluation_summary.",
    )
    def regression_check(
        context: dg.AssetExecutionContext, config: RegressionCheckConfig, goldeneval: GoldenEvalResource
    ) -> dg.MaterializeResult:  # type: ignore[type-arg]
        stored_run_id = config.stored_run_id or _latest_summary_run_id(context)
        store = goldeneval.open_store()
        stored = store.get_run(stored_run_id)
        if stored is None:
            raise StoreError(f"{store.path}: no stored run {stored_run_id!r}")
        verdict = verdict_for(store, stored, goldeneval.suite().thresholds)
        identity: dict[str, Any] = {
            "set": stored.set_id,
            "retriever": stored.model,
            "stored_run_id": stored.id,
            "verdict": verdict.status.value,
            "reason": verdict.reason,
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
                    passed=not verdict.regressed,
                    severity=dg.AssetCheckSeverity.ERROR,
                    metadata=identity,
                )
            ],
        )

    return [regression_check]


__all__ = ["NO_REGRESSION", "RegressionCheckConfig", "build_regression_assets"]
