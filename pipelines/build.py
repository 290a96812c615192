"""Assemble the Definitions from a suite file: partitions, assets, jobs, schedule, sensors."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import dagster as dg

from assets import build_assets, evaluation_partitions
from assets.evaluation import RETRIEVAL_CLI_RUNS
from assets.io_manager import PartitionedParquetIOManager
from assets.names import TABLES_IO_MANAGER
from assets.partitions import prompt_partitions
from assets.prompts import PROMPT_CLI_RUNS, PROMPT_SUMMARY_KEY, build_prompt_assets
from assets.summary import store_kind
from goldeneval.suite import UI_URL_ENV, WEBHOOK_ENV, Suite, load_suite
from pipelines.jobs import PROMPT_JOB, PROMPT_REGRESSION_JOB, build_accept_job, build_jobs, build_prompt_jobs
from pipelines.schedules import PROMPT_SCHEDULE, build_nightly_schedule
from pipelines.sensors import (
    PROMPT_REGRESSION_SENSOR,
    build_alert_sensor,
    build_cli_run_sensor,
    build_regression_sensor,
)
from resources import AlertsResource, GoldenEvalResource
from resources.alerts import SLACK_TOKEN_ENV

SLACK_API_URL_ENV = "GOLDENEVAL_SLACK_API_URL"


def _secret(name: str, fallback: str | None) -> str | dg.EnvVar | None:
    """A value from the environment stays an EnvVar, so it never shows in the UI's config."""
    return dg.EnvVar(name) if os.environ.get(name) else fallback


def _prompt_definitions(suite: Suite) -> tuple[list[Any], list[Any], list[Any], list[Any]]:
    """Assets, jobs, schedules and sensors of the (prompt set x model) partitions; none when the
    suite file declares no prompt sets (ADR-060)."""
    if not suite.prompt_cells.set_ids:
        return [], [], [], []
    partitions = prompt_partitions(*suite.prompt_cells)
    schedule = suite.config.schedule
    return (
        build_prompt_assets(partitions, store_kind=store_kind(suite.store_location)),
        list(build_prompt_jobs()),
        [
            build_nightly_schedule(
                partitions,
                schedule.cron,
                schedule.timezone,
                name=PROMPT_SCHEDULE,
                job_name=PROMPT_JOB,
                what="golden prompt set x model",
            )
        ],
        [
            build_regression_sensor(
                partitions,
                name=PROMPT_REGRESSION_SENSOR,
                job_name=PROMPT_REGRESSION_JOB,
                summary_key=PROMPT_SUMMARY_KEY,
                check_asset="prompt_regression_check",
            ),
            build_cli_run_sensor(partitions, PROMPT_CLI_RUNS),
        ],
    )


def build_definitions(config_path: str | Path) -> dg.Definitions:
    return definitions_for(load_suite(config_path))


def definitions_for(suite: Suite) -> dg.Definitions:
    """The Definitions of a suite already loaded (the main command reads its file once for
    the definitions and its summary)."""
    partitions = evaluation_partitions(*suite.retrieval_cells)
    alerts = suite.config.alerts
    schedule = suite.config.schedule
    goldeneval = GoldenEvalResource(config_path=str(suite.path))
    prompt_assets, prompt_jobs, prompt_schedules, prompt_sensors = _prompt_definitions(suite)
    return dg.Definitions(
        assets=[*build_assets(partitions, store_kind=store_kind(suite.store_location)), *prompt_assets],
        jobs=[*build_jobs(), *prompt_jobs, build_accept_job()],
        schedules=[build_nightly_schedule(partitions, schedule.cron, schedule.timezone), *prompt_schedules],
        sensors=[
            build_regression_sensor(partitions),
            build_cli_run_sensor(partitions, RETRIEVAL_CLI_RUNS),
            *prompt_sensors,
            build_alert_sensor(),
        ],
        resources={
            "goldeneval": goldeneval,
            TABLES_IO_MANAGER: PartitionedParquetIOManager(config_path=str(suite.path)),
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
