"""A nightly that never loses a night and never stores one twice (issue 43).

* A store outage during the nightly write: the summary keeps the run in the spool (the CLI's
  one write path, ``goldeneval.history.door.record_or_keep``), its ``run_complete`` check
  fails naming the spool file, one alert is sent, and the regression sensor's next tick
  stores the run once and asks for its check; the tick after stores nothing again.
* A re-executed partition is the same night: a run that stored the night and was then marked
  failed (its worker killed while its step went on), re-executed in full or from its
  failure, stores nothing new; a step whose run was marked failed before it wrote stores
  nothing at all.
"""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
from click.testing import CliRunner

import assets.summary
from assets import RUN_COMPLETE
from assets.series import series_key
from goldeneval.history import door
from goldeneval.store import open_store
from goldeneval.store.spool import SPOOL_ENV, read_spooled, spooled_files
from pipelines.build import build_definitions
from pipelines.jobs import NIGHTLY_JOB, REGRESSION_JOB
from tests import test_dagster_gate, test_store_retry
from tests.dagster_support import (
    QUIET,
    Project,
    Webhook,
    latest_metadata,
    run_nightly,
    run_requests,
    tick_alert_sensor,
    tick_cli_run_sensor,
    tick_regression_sensor,
    write_project,
)
from tests.test_dagster_gate import SETS, _fixed
from tests.test_store_retry import Restartable

server = test_store_retry.server  # a PostgreSQL server of this module's own, stopped and started here
webhook = test_dagster_gate.webhook  # the same fixtures as the gate's tests
instance = test_dagster_gate.instance
pytestmark = pytest.mark.slow  # the in-process asset graph, and a PostgreSQL server stopped and started

KEY = "fixed|alpha-set"
IN_PROCESS: dict[str, Any] = {**QUIET, "execution": {"config": {"in_process": {}}}}


def nightly_job(config: str) -> dg.JobDefinition:
    """The nightly job of a suite file, rebuilt by Dagster from this name and the file's path
    (a job re-executed in process must be reconstructable)."""
    return build_definitions(config).resolve_job_def(NIGHTLY_JOB)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, webhook: Webhook) -> Project:
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("GOLDENEVAL_ALERT_WEBHOOK_URL", "SLACK_TOKEN", "GOLDENEVAL_STORE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(SPOOL_ENV, str(tmp_path / "spool"))
    project = write_project(
        tmp_path, sets=SETS, retrievers=_fixed(_provenance(), tmp_path), alerts={"webhook_url": webhook.url}
    )
    return project


def _provenance() -> dict[str, str]:
    from tests.dagster_support import FIXED_PROVENANCE

    return dict(FIXED_PROVENANCE)


def _check_evaluation(instance: dg.DagsterInstance, run_id: str) -> dg.AssetCheckEvaluation:
    [evaluation] = [
        event.event_specific_data
        for event in (r.event_log_entry.dagster_event for r in instance.get_records_for_run(run_id).records)
        if event is not None and isinstance(event.event_specific_data, dg.AssetCheckEvaluation)
    ]
    return evaluation


# --------------------------------------------------------------------------- a store outage


@pytest.fixture
def postgres_store(
    server: Restartable,
    monkeypatch: pytest.MonkeyPatch,
) -> Iterator[tuple[Restartable, str]]:
    url = server.cluster.new_database("nightly")
    open_store(url)  # the store is there, with its schema, as on the nights before
    monkeypatch.setenv("GOLDENEVAL_STORE", url)
    yield server, url
    with contextlib.suppress(subprocess.CalledProcessError):  # running already
        server.resume()


def test_postgres_stopped_during_the_nightly_write_keeps_the_night_and_the_next_tick_stores_it_once(
    project: Project,
    instance: dg.DagsterInstance,
    webhook: Webhook,
    postgres_store: tuple[Restartable, str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    postgres, url = postgres_store
    write = door.record_or_keep

    def stop_then_write(*args: Any, **kwargs: Any) -> Any:
        postgres.halt()  # the store was opened (and the pinned baseline asked) a moment ago
        return write(*args, **kwargs)

    monkeypatch.setattr(door, "record_or_keep", stop_then_write)
    defs = build_definitions(project.config)
    watching = tick_cli_run_sensor(defs, instance)  # the series sensor watches from before the night
    [night] = run_nightly(defs, instance, [KEY])
    monkeypatch.setattr(door, "record_or_keep", write)
    assert night.success  # the night is kept, not lost: the run succeeds and its check says why

    [kept_file] = spooled_files(tmp_path / "spool")
    kept = read_spooled(kept_file)
    assert kept.origin["partition"] == KEY and kept.origin["summary_asset"] == "evaluation_summary"
    summary = latest_metadata(instance, "evaluation_summary", KEY)
    assert "stored_run_id" not in summary
    assert summary["spooled_run_id"].value == kept.run_id
    check = _check_evaluation(instance, night.run_id)
    assert (check.check_name, check.passed) == (RUN_COMPLETE, False)
    assert check.description is not None
    assert check.description.startswith(f"not stored: store unreachable, kept in the spool at {kept_file} (")
    logged = [r.event_log_entry.user_message for r in instance.get_records_for_run(night.run_id).records]
    assert any(m.startswith("goldeneval: store unreachable, kept in the spool at") for m in logged)

    # One alert, by the alert sensor, for the failed check; a second tick sends nothing more.
    tick_alert_sensor(defs, instance)
    tick_alert_sensor(defs, instance)
    assert len(webhook.received) == 1
    [alert] = webhook.received
    assert alert["check"] == RUN_COMPLETE and alert["verdict"]["status"] == "not stored"
    assert alert["verdict"]["reason"].startswith(f"store unreachable, kept in the spool at {kept_file} (")
    assert (alert["stored_run_id"], alert["spooled_run_id"]) == (None, kept.run_id)

    # While the store is down, the sensor's tick keeps the file and says why.
    down = tick_regression_sensor(defs, instance)
    assert not down.run_requests and kept_file.exists()
    assert down.skip_message is not None and down.skip_message.startswith("spool not delivered yet: ")

    # A check asked for while the store is down fails with goldeneval's one line, not a traceback.
    check_job = defs.resolve_job_def(REGRESSION_JOB)
    config = {**QUIET, "ops": {"regression_check": {"config": {"stored_run_id": kept.run_id}}}}
    failed = check_job.execute_in_process(partition_key=KEY, run_config=config, instance=instance, raise_on_error=False)
    [failure] = [event for event in failed.all_events if event.is_step_failure]
    error = failure.step_failure_data.error
    assert error is not None and error.message.startswith(
        "dagster._core.definitions.events.Failure: goldeneval: not judged: "
    )

    postgres.resume()
    tick = tick_regression_sensor(defs, instance, down.cursor)
    [request] = tick.run_requests or []
    assert request.run_key == f"regression_check:{kept.run_id}" and request.partition_key == KEY
    assert request.tags["goldeneval/delivered_from_spool"] == str(kept_file)
    assert not kept_file.exists()
    [stored] = open_store(url).list_runs()
    assert stored.id == kept.run_id and stored.set_id == "alpha-set" and stored.model == "fixed"
    [checked] = run_requests(defs, instance, tick)
    assert checked.success
    assert latest_metadata(instance, "regression_check", KEY)["stored_run_id"].value == kept.run_id

    again = tick_regression_sensor(defs, instance, tick.cursor)
    assert not again.run_requests
    assert [run.id for run in open_store(url).list_runs()] == [kept.run_id]

    # The night's point on its series key, which the summary could not draw, comes once it is stored.
    observed = tick_cli_run_sensor(defs, instance, watching.cursor)
    [point] = [
        {name: value.value for name, value in event.metadata.items()}
        for event in observed.asset_events
        if event.asset_key == series_key("alpha-set", "fixed")
    ]
    assert (point["stored_run_id"], point["door"], point["verdict"]) == (kept.run_id, "dagster", "baseline")
    assert not tick_cli_run_sensor(defs, instance, observed.cursor).asset_events
    tick_alert_sensor(defs, instance)
    assert len(webhook.received) == 1  # the delivered run's check passed: nothing more to alert


# --------------------------------------------------------------------------- exactly once per night


def _execute(project: Project, instance: dg.DagsterInstance, **kwargs: Any) -> dg.JobExecutionResult:
    # Keyed by the suite file: Dagster keeps a reconstructed job by its name and arguments.
    job = dg.build_reconstructable_job(__name__, nightly_job.__name__, reconstructable_args=(str(project.config),))
    return dg.execute_job(job, instance, run_config=IN_PROCESS, tags={"dagster/partition": KEY}, **kwargs)


def test_a_partition_re_executed_after_its_run_was_marked_failed_stores_the_night_once(
    project: Project, instance: dg.DagsterInstance
) -> None:
    with _execute(project, instance) as first:
        assert first.success
        first_id = first.run_id
    [stored] = open_store(project.store).list_runs()
    # The run worker was killed: the run is marked failed, though its step stored the night.
    run = instance.get_run_by_id(first_id)
    assert run is not None
    instance.report_run_failed(run)

    with _execute(project, instance, reexecution_options=dg.ReexecutionOptions(parent_run_id=first_id)) as again:
        assert again.success
        assert instance.get_run_by_id(again.run_id).root_run_id == first_id  # type: ignore[union-attr]
    assert [r.id for r in open_store(project.store).list_runs()] == [stored.id]
    summary = latest_metadata(instance, "evaluation_summary", KEY)
    assert summary["stored_run_id"].value == stored.id


def test_a_step_whose_run_was_marked_failed_before_it_wrote_stores_nothing_and_the_re_execution_stores_once(
    project: Project, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch
) -> None:
    night_key = assets.summary.night_key

    def marked_failed_meanwhile(instance_: dg.DagsterInstance, tables_run_id: str) -> str:
        run = instance_.get_run_by_id(tables_run_id)
        assert run is not None
        instance_.report_run_failed(run)  # as run monitoring does when the run worker dies
        return night_key(instance_, tables_run_id)

    monkeypatch.setattr(assets.summary, "night_key", marked_failed_meanwhile)
    with _execute(project, instance) as first:
        assert not first.success
        first_id = first.run_id
        [failure] = [event for event in first.all_events if event.is_step_failure]
    monkeypatch.setattr(assets.summary, "night_key", night_key)
    assert open_store(project.store).list_runs() == []
    assert failure.step_key == "evaluation_summary"
    error = failure.step_failure_data.error
    assert error is not None
    assert f"run {first_id} was marked failure while this step ran" in error.message

    options = dg.ReexecutionOptions.from_failure(first_id, instance)
    with _execute(project, instance, reexecution_options=options) as again:
        assert again.success
    [stored] = open_store(project.store).list_runs()
    assert stored.tables_run_id == first_id  # the tables of the failed run, stored by its re-execution
    with _execute(project, instance, reexecution_options=dg.ReexecutionOptions(parent_run_id=first_id)) as third:
        assert third.success
    assert [r.id for r in open_store(project.store).list_runs()] == [stored.id]


# --------------------------------------------------------------------------- delivered, whoever delivers


def test_a_kept_night_is_judged_once_stored_by_hand_or_by_a_tick_that_failed_and_a_bad_file_stops_nothing(
    project: Project, instance: dg.DagsterInstance, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from goldeneval.cli.app import main
    from tests.test_store_retry import _block_writes

    defs = build_definitions(project.config)
    spool = tmp_path / "spool"
    spool.mkdir()
    (spool / "0-unreadable.json").write_text("{not json", encoding="utf-8")  # older than every kept night

    def kept_night() -> str:
        before = {p.name for p in spooled_files(spool)}
        assert all(r.success for r in run_nightly(defs, instance, [KEY]))
        [new] = [p for p in spooled_files(spool) if p.name not in before]
        return read_spooled(new).run_id

    def judged(tick: Any) -> list[str]:
        assert all(r.success for r in run_requests(defs, instance, tick))
        return sorted(r.run_key or "" for r in tick.run_requests or [])

    assert all(r.success for r in run_nightly(defs, instance, [KEY]))
    tick = tick_regression_sensor(defs, instance)
    assert len(judged(tick)) == 1  # the unreadable file stops nothing

    # Night 2 is kept, then stored by hand, as the error line says: the next tick judges it.
    lock = _block_writes(project.store)
    two = kept_night()
    down = tick_regression_sensor(defs, instance, tick.cursor)
    assert not down.run_requests
    lock.rmdir()
    retried = CliRunner().invoke(main, ["store", "retry", "--store", str(project.store), "--spool", str(spool)])
    assert retried.exit_code == 3 and "0-unreadable.json: cannot be read" in retried.stderr  # kept, named, last
    assert f"Stored {two} " in retried.output
    after = tick_regression_sensor(defs, instance, down.cursor)
    assert judged(after) == [f"regression_check:{two}"]

    # Night 3 is delivered by a tick that fails afterwards (its cursor is not committed): the
    # next tick, from the cursor before it, judges the night all the same.
    lock = _block_writes(project.store)
    three = kept_night()
    down = tick_regression_sensor(defs, instance, after.cursor)
    lock.rmdir()
    monkeypatch.setattr(type(instance), "fetch_materializations", _fails_once(type(instance).fetch_materializations))
    with pytest.raises(RuntimeError, match="the tick failed"):
        tick_regression_sensor(defs, instance, down.cursor)
    assert [p.name for p in spooled_files(spool)] == ["0-unreadable.json"]  # night 3 was delivered
    last = tick_regression_sensor(defs, instance, down.cursor)
    assert judged(last) == [f"regression_check:{three}"]
    assert not tick_regression_sensor(defs, instance, last.cursor).run_requests
    assert {two, three} < {run.id for run in open_store(project.store).list_runs()}


def _fails_once(fetch: Any) -> Any:
    calls = {"n": 0}

    def failing(self: dg.DagsterInstance, *args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("the tick failed")
        return fetch(self, *args, **kwargs)

    return failing


def test_the_main_command_exits_5_when_the_store_could_not_take_a_night(tmp_path: Path) -> None:
    from tests.dagster_support import SETS as ALL_SETS
    from tests.test_dagster_main import _main

    project = write_project(tmp_path / "project", sets={"alpha-set": ALL_SETS["alpha-set"]})
    project.store.parent.mkdir(parents=True)
    project.store.mkdir()  # a folder where the DuckDB file should be: the store cannot be opened
    env = {SPOOL_ENV: str(tmp_path / "spool")}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        result = _main(project.root, tmp_path / "home", "--partition", "alpha-set|fixed")
    assert result.returncode == 5, result.stderr
    [kept] = spooled_files(tmp_path / "spool")
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .startswith(f"goldeneval: error: the store could not take 1 night(s); kept in the spool: {kept}; ")
    )


def test_a_re_execution_that_measures_the_night_differently_says_its_measurement_is_not_stored(
    project: Project, instance: dg.DagsterInstance
) -> None:
    from tests.dagster_support import WORSE_ALPHA

    with _execute(project, instance) as first:
        assert first.success
        first_id = first.run_id
    [stored] = open_store(project.store).list_runs()
    project.set_rankings(WORSE_ALPHA)  # the retriever changed before the re-execution
    with _execute(project, instance, reexecution_options=dg.ReexecutionOptions(parent_run_id=first_id)) as again:
        assert again.success
        [check] = [
            e.event_specific_data
            for e in again.all_events
            if isinstance(e.event_specific_data, dg.AssetCheckEvaluation)
        ]
    assert [r.id for r in open_store(project.store).list_runs()] == [stored.id]
    assert not check.passed
    assert check.description == (
        f"not stored: this night was stored already from the tables of run {first_id} (stored run {stored.id}); "
        "this re-execution measured it again, differently, and the store keeps the first measurement: launch a "
        "new run (not a re-execution) to measure again"
    )
