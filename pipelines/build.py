"""Assemble the Definitions from a suite file: for every declared run kind (``goldeneval.kinds``)
with partitions in the file, its assets, jobs, schedule and sensors; then the accept job, the
alert sensor and the resources."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import dagster as dg

from assets.io_manager import PartitionedParquetIOManager
from assets.kinds import KindAssets, kind_assets
from assets.names import TABLES_IO_MANAGER
from assets.partitions import kind_partitions
from assets.summary import store_kind
from goldeneval.kinds import KindDeclaration, declared_kinds
from goldeneval.suite import UI_URL_ENV, WEBHOOK_ENV, Suite, load_suite
from pipelines.jobs import build_accept_job, build_kind_jobs
from pipelines.schedules import build_kind_schedule
from pipelines.sensors import alerted_checks, build_alert_sensor, build_kind_sensors
from resources import AlertsResource, GoldenEvalResource
from resources.alerts import SLACK_TOKEN_ENV

SLACK_API_URL_ENV = "GOLDENEVAL_SLACK_API_URL"


def _secret(name: str, fallback: str | None) -> str | dg.EnvVar | None:
    """A value from the environment stays an EnvVar, so it never shows in the UI's config."""
    return dg.EnvVar(name) if os.environ.get(name) else fallback


@dataclass(frozen=True)
class KindDefinitions:
    """One kind's part of the Definitions."""

    kind: KindDeclaration
    assets: list[Any]
    jobs: list[Any]
    schedules: list[Any]
    sensors: list[Any]


def kind_definitions(suite: Suite, kind: KindDeclaration) -> KindDefinitions | None:
    """The assets, jobs, schedule and sensors of ``kind`` over the suite's partitions of it;
    None when the suite file declares none (no prompt sets, say: ADR-060)."""
    set_ids, members = suite.cells(kind)
    if not set_ids:
        return None
    part: KindAssets = kind_assets(kind)
    partitions = kind_partitions(kind, set_ids, members)
    schedule = suite.config.schedule
    return KindDefinitions(
        kind,
        assets=part.build(partitions, store_kind(suite.store_location)),
        jobs=list(build_kind_jobs(kind, executor=part.nightly_executor)),
        schedules=[build_kind_schedule(kind, partitions, schedule.cron, schedule.timezone)],
        sensors=build_kind_sensors(kind, partitions, part.cli_runs),
    )


def suite_kinds(suite: Suite, kinds: Sequence[KindDeclaration] | None = None) -> list[KindDefinitions]:
    """Every declared kind the suite file has partitions of, in declaration order."""
    built = (kind_definitions(suite, kind) for kind in (declared_kinds() if kinds is None else kinds))
    return [found for found in built if found is not None]


def build_definitions(config_path: str | Path) -> dg.Definitions:
    return definitions_for(load_suite(config_path))


def definitions_for(suite: Suite) -> dg.Definitions:
    """The Definitions of a suite already loaded (the main command reads its file once for
    the definitions and its summary)."""
    alerts = suite.config.alerts
    goldeneval = GoldenEvalResource(config_path=str(suite.path))
    kinds = suite_kinds(suite)
    return dg.Definitions(
        assets=[asset for found in kinds for asset in found.assets],
        jobs=[*(job for found in kinds for job in found.jobs), build_accept_job()],
        schedules=[schedule for found in kinds for schedule in found.schedules],
        sensors=[
            *(sensor for found in kinds for sensor in found.sensors),
            build_alert_sensor(alerted_checks(declared_kinds())),  # a kind the file no longer runs too
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
