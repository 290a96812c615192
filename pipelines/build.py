"""Assemble the Definitions from a suite file: partitions, assets, jobs, schedule, sensors."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from assets import build_assets, evaluation_partitions
from assets.evaluation import TABLES_IO_MANAGER
from assets.io_manager import PartitionedParquetIOManager
from goldeneval.suite import UI_URL_ENV, WEBHOOK_ENV, load_suite
from pipelines.jobs import build_jobs
from pipelines.schedules import build_nightly_schedule
from pipelines.sensors import build_alert_sensor, build_regression_sensor
from resources import AlertsResource, GoldenEvalResource

SLACK_TOKEN_ENV = "SLACK_TOKEN"
SLACK_API_URL_ENV = "GOLDENEVAL_SLACK_API_URL"


def _secret(name: str, fallback: str | None) -> str | dg.EnvVar | None:
    """A value from the environment stays an EnvVar, so it never shows in the UI's config."""
    return dg.EnvVar(name) if os.environ.get(name) else fallback


def build_definitions(config_path: str | Path) -> dg.Definitions:
    suite = load_suite(config_path)
    partitions = evaluation_partitions(suite.set_ids, suite.retriever_names)
    alerts = suite.config.alerts
    schedule = suite.config.schedule
    goldeneval = GoldenEvalResource(config_path=str(suite.path))
    return dg.Definitions(
        assets=build_assets(partitions),
        jobs=list(build_jobs()),
        schedules=[build_nightly_schedule(partitions, schedule.cron, schedule.timezone)],
        sensors=[build_regression_sensor(partitions), build_alert_sensor()],
        resources={
            "goldeneval": goldeneval,
            TABLES_IO_MANAGER: PartitionedParquetIOManager(goldeneval=goldeneval),
            "alerts": AlertsResource(
                webhook_url=_secret(WEBHOOK_ENV, alerts.webhook_url),
                slack_token=_secret(SLACK_TOKEN_ENV, None),
                slack_channel=alerts.slack_channel,
                slack_api_url=os.environ.get(SLACK_API_URL_ENV),
                ui_url=os.environ.get(UI_URL_ENV) or alerts.ui_url,
                timeout_s=alerts.timeout_s,
            ),
        },
    )
