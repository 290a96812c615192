"""Sensors: a regression check after every stored summary, and alerts for failed checks.

``regression_check_sensor`` reads evaluation_summary materialisations in storage order after
its cursor and asks for one regression_check run per stored run.  First, at every tick, it
delivers the runs its summary kept in the spool while the store was down (the CLI's
``goldeneval store retry``, :mod:`goldeneval.history.delivery`) and asks for their checks.  The cursor and the run
requests are committed together with the tick, and every request carries the run key
``regression_check:<stored run id>``, so a restart neither skips a summary nor checks one
twice, and a summary re-materialised for the same hits (the same stored run) is not judged
again (the daemon drops a request whose run key already has a run).

``check_alert_sensor`` reads the executions of goldeneval's checks in id order and delivers one alert
per failed ERROR check of goldeneval.  Failed non-blocking checks do not fail runs, so this
watches check executions, not run failures.  Its progress is kept in the instance's
key-value store as well as in its cursor, advanced after each delivered alert, so the
main command and the daemon share it and an alert is not sent twice.
"""

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import dagster as dg

from assets import NO_REGRESSION, RUN_COMPLETE
from assets.metadata import float_rates, metadata_number
from assets.series import CliRuns, dimension_keys, observations, series_key
from goldeneval.core.alerts import Alert, AlertDeliveryError, AlertRate
from goldeneval.core.errors import GoldenEvalError, StoreError
from goldeneval.core.gate import GateDecision
from goldeneval.core.records import StoredRun
from goldeneval.history import door
from goldeneval.history.delivery import deliver_spooled
from goldeneval.kinds import KindDeclaration, built_in_kinds
from goldeneval.kinds.prompts import PROMPTS
from goldeneval.kinds.retrieval import RETRIEVAL
from goldeneval.store import open_store, store_exists
from goldeneval.store.spool import SpooledRun, readable_spooled, spool_folder
from goldeneval.suite_storage import load_storage
from pipelines.dagster_internals import AssetCheckExecutionRecord, AssetCheckExecutionRecordStatus
from pipelines.jobs import REGRESSION_JOB
from resources.alerts import AlertsResource
from resources.goldeneval import GoldenEvalResource

REGRESSION_SENSOR = RETRIEVAL.names.regression_sensor
PROMPT_REGRESSION_SENSOR = PROMPTS.names.regression_sensor
ALERT_SENSOR = "check_alert_sensor"
ALERT_PROGRESS_KEY = "goldeneval/check_alert_sensor/last_storage_id"
SUMMARY_KEY = dg.AssetKey("evaluation_summary")
BATCH = 100
INTERVAL_ENV = "GOLDENEVAL_SENSOR_INTERVAL_S"
SENSOR_RESOURCES = ("goldeneval", "alerts")
"""The resources the sensors take (the IO manager is a run's, not a tick's)."""


def sensor_interval_s() -> int:
    return int(os.environ.get(INTERVAL_ENV) or 30)


def stored_run_key(stored_run_id: str) -> str:
    return f"regression_check:{stored_run_id}"


def build_regression_sensor(
    partitions_def: dg.MultiPartitionsDefinition,
    *,
    name: str = REGRESSION_SENSOR,
    job_name: str = REGRESSION_JOB,
    summary_key: dg.AssetKey = SUMMARY_KEY,
    check_asset: str = "regression_check",
) -> dg.SensorDefinition:
    """The regression sensor of retrieval runs (the defaults) or of prompt runs (ADR-060)."""

    @dg.sensor(
        name=name,
        job_name=job_name,
        minimum_interval_seconds=sensor_interval_s(),
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Materialise {check_asset} once for every run {summary_key.to_user_string()} stores.",
    )
    def regression_check_sensor(context: dg.SensorEvaluationContext, goldeneval: GoldenEvalResource) -> dg.SensorResult:
        known = {str(key) for key in partitions_def.get_partition_keys()}
        cursor = RegressionCursor.parse(context.cursor)
        delivered, note = deliver_spool(context, goldeneval, summary_key)
        result = context.instance.fetch_materializations(summary_key, limit=BATCH, cursor=cursor.events, ascending=True)
        requests = []
        pending = dict(cursor.pending)
        for record in result.records:
            materialization = record.asset_materialization
            metadata = materialization.metadata if materialization else {}
            stored, spooled = metadata.get("stored_run_id"), metadata.get("spooled_run_id")
            if record.partition_key not in known:
                continue  # a partition no longer configured, or not a summary goldeneval wrote
            if stored is not None:
                tags = {"goldeneval/summary_storage_id": str(record.storage_id)}
                requests.append(check_request(str(stored.value), str(record.partition_key), check_asset, tags=tags))
            elif spooled is not None:
                pending[str(spooled.value)] = str(record.partition_key)  # judged once it is stored
        if pending:
            found, note = stored_among(goldeneval, pending, note)
            for run_id in found:
                partition = pending.pop(run_id)
                if partition not in known:
                    context.log.warning(
                        f"goldeneval: run {run_id} is stored, but partition {partition} is gone: not judged"
                    )
                    continue
                context.log.info(f"goldeneval: run {run_id}, kept in the spool, is stored: its check is asked for")
                requests.append(check_request(run_id, partition, check_asset, delivered.get(run_id)))
        events = result.cursor if result.records else cursor.events
        advanced = RegressionCursor(events, pending).text()
        return dg.SensorResult(run_requests=requests, cursor=advanced, skip_reason=note if not requests else None)

    return regression_check_sensor


def sensor_context(
    defs: dg.Definitions, instance: dg.DagsterInstance, cursor: str | None = None
) -> dg.SensorEvaluationContext:
    """A tick's context as the daemon builds it, with the definitions' resources (the
    regression sensors read the suite file's store through ``goldeneval``; the alert sensor
    delivers through ``alerts``): for the main command and the tests."""
    resources = {key: value for key, value in (defs.resources or {}).items() if key in SENSOR_RESOURCES}
    return dg.build_sensor_context(instance=instance, cursor=cursor, definitions=defs, resources=resources)


def check_request(
    stored_run_id: str,
    partition: str,
    check_asset: str,
    delivered_from: str | None = None,
    *,
    tags: Mapping[str, str] | None = None,
) -> dg.RunRequest:
    """The run request that judges one stored run: keyed by it, so it runs once however often
    it is asked for (by a summary, or by the delivery of a run kept in the spool)."""
    shown = dict(tags or {})
    if delivered_from is not None:
        shown["goldeneval/delivered_from_spool"] = delivered_from
    return dg.RunRequest(
        run_key=stored_run_key(stored_run_id),
        partition_key=partition,
        run_config={"ops": {check_asset: {"config": {"stored_run_id": stored_run_id}}}},
        tags=shown,
    )


@dataclass(frozen=True)
class RegressionCursor:
    """A regression sensor's cursor: where it is in the summaries' materialisations, and the
    runs their summaries kept in the spool that it has not judged yet (id: partition).  A kept
    run is judged once the store holds it, whoever delivered it (this sensor, or ``goldeneval
    store retry`` by hand), and even when the tick that delivered it failed."""

    events: str | None
    pending: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def parse(cls, text: str | None) -> "RegressionCursor":
        if not text or not text.startswith("{"):
            return cls(text)  # a cursor written before kept runs were followed: the event cursor alone
        raw = json.loads(text)
        return cls(raw.get("events"), dict(raw.get("pending") or {}))

    def text(self) -> str | None:
        if not self.pending:
            return self.events
        return json.dumps({"events": self.events, "pending": dict(sorted(self.pending.items()))})


def stored_among(
    goldeneval: GoldenEvalResource, pending: Mapping[str, str], note: str | None
) -> tuple[list[str], str | None]:
    """Which of the pending kept runs the store holds now; the store down is a note, not a failure."""
    location = load_storage(goldeneval.config_path).store()
    try:
        if not store_exists(location):
            return [], note
        store = open_store(location)
        return [run_id for run_id in pending if store.get_run(run_id) is not None], note
    except StoreError as exc:
        return [], note or f"kept runs not judged yet: {exc}"


def deliver_spool(
    context: dg.SensorEvaluationContext, goldeneval: GoldenEvalResource, summary_key: dg.AssetKey
) -> tuple[dict[str, str], str | None]:
    """Store the runs this sensor's summary asset kept in the spool when the store was down
    (:func:`goldeneval.history.delivery.deliver_spooled`, the same as ``goldeneval store
    retry``): the spool file of each run stored, by run id, and a note when the store still
    cannot take them (the files stay for the next tick).  A file that cannot be read is
    skipped with a warning: it never stops the other files nor the checks."""
    folder = spool_folder()
    asset = summary_key.to_user_string()

    def ours(kept: SpooledRun) -> bool:
        return kept.origin.get("summary_asset") == asset

    def unreadable(path: Path, error: GoldenEvalError) -> None:
        context.log.warning(f"goldeneval: {error}; the file is left in the spool")

    if not any(ours(kept) for kept in readable_spooled(folder)):
        return {}, None  # the common case: nothing kept; the suite file is not read
    location = load_storage(goldeneval.config_path).store()
    delivered: dict[str, str] = {}
    elsewhere: list[str] = []
    try:
        for item in deliver_spooled(location, folder, wanted=ours, on_unreadable=unreadable):
            if item.stored is None:
                elsewhere.append(f"{item.kept.path} (for {item.kept.target})")
                continue
            done = "already stored" if item.already else "stored"
            context.log.info(f"goldeneval: {done} run {item.stored.id} kept in the spool at {item.kept.path}")
            delivered[item.stored.id] = str(item.kept.path)
    except StoreError as exc:  # the store still down: the files stay
        context.log.warning(f"goldeneval: the spool is not delivered yet: {exc}")
        return delivered, f"spool not delivered yet: {exc}"
    if elsewhere:
        context.log.warning(
            f"goldeneval: {len(elsewhere)} spool file(s) kept for another store than {location} are left: "
            + ", ".join(elsewhere[:5])
        )
    return delivered, None


LATE_RUN_WINDOW = timedelta(days=1)
"""How long after its measurement started a run may still be stored and be observed: a run is
dated by when it was measured, not by when it was stored, so a CLI run that took long is
stored after runs measured later than it."""


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class _Seen:
    """A CLI-run sensor's cursor: the newest measurement time it has seen, and the runs it has
    seen measured within :data:`LATE_RUN_WINDOW` before it (id and time), so a run stored late,
    or in the same microsecond as another, is neither skipped nor observed twice."""

    at: datetime | None
    seen: Mapping[str, datetime] = field(default_factory=dict)

    @classmethod
    def parse(cls, cursor: str | None) -> "_Seen":
        if not cursor:
            return cls(None)
        raw = json.loads(cursor)
        return cls(
            datetime.fromisoformat(raw["at"]),
            {run_id: datetime.fromisoformat(at) for run_id, at in raw["seen"].items()},
        )

    def text(self) -> str:
        at = self.at or EPOCH  # an empty store: every run stored later is new
        return json.dumps({"at": at.isoformat(), "seen": {run_id: t.isoformat() for run_id, t in self.seen.items()}})

    def newer(self, run: StoredRun) -> bool:
        return self.at is None or (run.created_at > self.at - LATE_RUN_WINDOW and run.id not in self.seen)

    def after(self, runs: list[StoredRun]) -> "_Seen":
        """The cursor once ``runs`` are seen too."""
        times = [run.created_at for run in runs] + ([self.at] if self.at is not None else [])
        if not times:
            return self
        at = max(times)
        seen = {**self.seen, **{run.id: run.created_at for run in runs}}
        return _Seen(at, {run_id: t for run_id, t in seen.items() if t > at - LATE_RUN_WINDOW})


def observed_ids(instance: dg.DagsterInstance, key: dg.AssetKey, limit: int = BATCH) -> set[str]:
    """The stored runs among the latest observations of a series key."""
    records = instance.fetch_observations(key, limit=limit).records
    return {
        str(record.asset_observation.metadata["stored_run_id"].value)
        for record in records
        if record.asset_observation is not None and "stored_run_id" in record.asset_observation.metadata
    }


def build_cli_run_sensor(partitions_def: dg.MultiPartitionsDefinition, kind: CliRuns) -> dg.SensorDefinition:
    """A sensor that observes the runs of the kind's nightly series that the CLI stored (no
    Dagster run wrote them) on their series keys, judged as the nightly judges its own; it
    starts from the runs stored after its first tick."""
    series = kind.series
    members = dimension_keys(partitions_def, series.member_dimension)
    cells = [
        {series.set_dimension: set_id, series.member_dimension: member}
        for set_id in dimension_keys(partitions_def, series.set_dimension)
        for member in members
    ]

    @dg.sensor(
        name=kind.sensor,
        minimum_interval_seconds=sensor_interval_s(),
        default_status=dg.DefaultSensorStatus.RUNNING,
        description=f"Observe on {series.series_prefix}/<set>/<{series.member_dimension}> the runs of the "
        "nightly's series that the goldeneval command stored (door: cli), and the nights kept in the spool "
        "once delivered (door: dagster).",
    )
    def cli_run_sensor(context: dg.SensorEvaluationContext, goldeneval: GoldenEvalResource) -> dg.SensorResult:
        seen = _Seen.parse(context.cursor)
        location = load_storage(goldeneval.config_path).store()
        if not store_exists(location):
            return dg.SensorResult(cursor=context.cursor, skip_reason=f"no store at {location} yet")
        store = open_store(location)
        listed = [
            (run, where)
            for where in cells
            for run in store.list_runs(
                set_id=where[series.set_dimension], model=where[series.member_dimension], limit=BATCH
            )
            if seen.newer(run)
        ]
        advanced = seen.after([run for run, _ in listed])
        if seen.at is None:  # the first tick: from now on
            return dg.SensorResult(cursor=advanced.text(), skip_reason="watching runs stored from now on")
        events: list[dg.AssetObservation] = []
        pending: dict[dg.AssetKey, dict[str, Any]] = {}
        for run, where in sorted(listed, key=lambda pair: (pair[0].created_at, pair[0].id)):
            stored = store.get_run(run.id)
            if stored is None:
                continue  # purged meanwhile
            key = series_key(where[series.set_dimension], where[series.member_dimension], series)
            if run.tables_run_id is not None and run.id in observed_ids(context.instance, key):
                continue  # the nightly's own, observed by its summary (one kept in the spool was not)
            verdict = door.judge(store, stored, kind.spec(goldeneval, where))
            values = {
                **float_rates(kind.plotted(store, stored)),
                "stored_run_id": stored.id,
                "verdict": verdict.status.value,
                "status": stored.status,
                "door": "cli" if run.tables_run_id is None else "dagster",
            }
            for observation in observations(context.instance, where, members, values, series, pending=pending):
                pending[observation.asset_key] = {name: value.value for name, value in observation.metadata.items()}
                events.append(observation)
        note = None if events else "no new run of a nightly series to observe"
        return dg.SensorResult(asset_events=events, cursor=advanced.text(), skip_reason=note)

    return cli_run_sensor


def build_kind_sensors(
    kind: KindDeclaration, partitions_def: dg.MultiPartitionsDefinition, cli_runs: CliRuns | None
) -> list[dg.SensorDefinition]:
    """A declared kind's regression sensor, and its CLI-run sensor when it plots the CLI's runs."""
    regression = build_regression_sensor(
        partitions_def,
        name=kind.names.regression_sensor,
        job_name=kind.names.regression_job,
        summary_key=dg.AssetKey(kind.summary),
        check_asset=kind.names.regression_check,
    )
    return [regression, *([build_cli_run_sensor(partitions_def, cli_runs)] if cli_runs is not None else [])]


def alerted_checks(kinds: Sequence[KindDeclaration]) -> tuple[dg.AssetCheckKey, ...]:
    """The checks whose failures are alerted: each kind's ``run_complete`` on its summary and
    ``no_regression`` on its regression check."""
    return tuple(
        key
        for kind in kinds
        for key in (
            dg.AssetCheckKey(dg.AssetKey(kind.summary), RUN_COMPLETE),
            dg.AssetCheckKey(dg.AssetKey(kind.names.regression_check), NO_REGRESSION),
        )
    )


ALERTED_CHECKS = alerted_checks(built_in_kinds())
"""The checks of the kinds goldeneval ships."""


def _progress(context: dg.SensorEvaluationContext) -> int:
    stored = context.instance.run_storage.get_cursor_values({ALERT_PROGRESS_KEY}).get(ALERT_PROGRESS_KEY)
    return max(int(context.cursor or 0), int(stored or 0))


def _advance(context: dg.SensorEvaluationContext, execution_id: int) -> None:
    context.instance.run_storage.set_cursor_values({ALERT_PROGRESS_KEY: str(execution_id)})


def _value(metadata: dict[str, Any], key: str) -> Any:
    entry = metadata.get(key)
    return None if entry is None else entry.value


def check_executions_after(
    instance: dg.DagsterInstance, after: int, checks: Sequence[dg.AssetCheckKey] = ALERTED_CHECKS
) -> list[AssetCheckExecutionRecord]:
    """Executions of goldeneval's checks with an id above ``after``, oldest first.

    Check executions live in the instance's index (one id sequence for all runs), on every
    storage; event-log queries across runs do not work on the default run-sharded SQLite one.
    """
    found: list[AssetCheckExecutionRecord] = []
    for key in checks:
        cursor = None
        while True:
            page = instance.event_log_storage.get_asset_check_execution_history(key, limit=BATCH, cursor=cursor)
            fresh = [r for r in page if r.id > after]
            found += fresh
            if len(page) < BATCH or len(fresh) < len(page):
                break
            cursor = page[-1].id
    return sorted(found, key=lambda r: r.id)


def alert_for(record: AssetCheckExecutionRecord, alerts: AlertsResource) -> Alert | None:
    """The alert a completed check execution calls for, or None when it passed.

    An incomplete run fails both checks; ``GateDecision.raises_alert`` says it is alerted
    once, by ``run_complete``.  The kind, the set, the series and the rates are what the check's
    metadata says of the run (``assets.metadata.RunLabels``, the same for every kind).
    """
    event = record.event.dagster_event if record.event is not None else None
    evaluation = event.event_specific_data if event is not None else None
    if (
        not isinstance(evaluation, dg.AssetCheckEvaluation)
        or evaluation.passed
        or evaluation.severity != dg.AssetCheckSeverity.ERROR
    ):
        return None
    metadata = dict(evaluation.metadata)
    gate = _value(metadata, "gate")
    if evaluation.check_name == NO_REGRESSION and gate is not None and not GateDecision(gate).raises_alert:
        return None
    names = _value(metadata, "rate_names")
    dimension = str(_value(metadata, "series_dimension") or "series")
    return Alert(
        check=evaluation.check_name,
        asset=evaluation.asset_key.to_user_string(),
        kind=str(_value(metadata, "kind") or "unknown"),
        set_id=str(_value(metadata, "set")),
        set_dimension=str(_value(metadata, "set_dimension") or "set"),
        series_dimension=dimension,
        series=str(_value(metadata, dimension) if dimension in metadata else record.partition),
        rates=tuple(
            AlertRate(str(key), str(name), metadata_number(metadata.get(str(key))))
            for key, name in (names if isinstance(names, list) else ())
        ),
        verdict=str(_value(metadata, "verdict")),
        state=_value(metadata, "state"),
        reason=str(_value(metadata, "reason")),
        run_id=record.run_id,
        run_url=alerts.run_url(record.run_id),
        stored_run_id=_value(metadata, "stored_run_id"),
        extra={"partition": record.partition, **{k: _value(metadata, k) for k in ("spooled_run_id",) if k in metadata}},
    )


def build_alert_sensor(checks: Sequence[dg.AssetCheckKey] = ALERTED_CHECKS) -> dg.SensorDefinition:
    @dg.sensor(
        name=ALERT_SENSOR,
        minimum_interval_seconds=sensor_interval_s(),
        default_status=dg.DefaultSensorStatus.RUNNING,
        description="Post a JSON alert (and a Slack message) for every failed goldeneval check.",
    )
    def check_alert_sensor(context: dg.SensorEvaluationContext, alerts: AlertsResource) -> dg.SensorResult:
        last = _progress(context)
        sent = 0
        for record in check_executions_after(context.instance, last, checks):
            if record.status is AssetCheckExecutionRecordStatus.PLANNED:
                run = context.instance.get_run_by_id(record.run_id)
                if run is not None and not run.is_finished:
                    break  # still running: look again next tick, in order
                # the run ended without evaluating the check: a run failure, not a check result
            else:
                alert = alert_for(record, alerts)
                if alert is not None and alerts.channels:
                    try:
                        alerts.deliver(alert)
                    except AlertDeliveryError as exc:
                        context.log.warning(f"alert for run {alert.run_id} not sent, retried next tick: {exc}")
                        return dg.SensorResult(cursor=str(last), skip_reason=f"delivery failed: {exc}")
                    sent += 1
                elif alert is not None:
                    why = f" ({alerts.unusable})" if alerts.unusable else ""
                    context.log.warning(f"no alert channel configured{why}; not sent: {alert.text()}")
            last = record.id
            _advance(context, last)
        unusable = f"; {alerts.unusable}" if alerts.unusable else ""
        return dg.SensorResult(cursor=str(last), skip_reason=f"{sent} alert(s) sent{unusable}")

    return check_alert_sensor
