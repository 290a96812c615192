"""A regression stays red until a person accepts it (issue 43): ``baseline: accepted`` and
``goldeneval accept``, through the real command against a real store.

Good nights run the bundled lexical retriever on the bundled ``transit-sample`` set; bad
nights the same retriever with its three best documents moved to the end (a plug-in written
into the test's folder), under the same series name, so both measure one benchmark.
"""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import ExitCode, main
from goldeneval.core.baseline import ACCEPTED
from goldeneval.history.accepted import accept
from goldeneval.history.comparison import compare_with_history
from goldeneval.history.retention import purge_runs
from goldeneval.store import ResultStore, StoreLocation, copy_runs, open_store
from tests.conftest import CliWorkspace

WORSE = textwrap.dedent(
    '''
    """The bundled lexical retriever with its three best documents moved to the end: a regression."""

    from goldeneval.retrieval.retrievers.lexical import build as lexical


    class Worse:
        def __init__(self, inner):
            self.inner = inner

        def retrieve(self, question, limit):
            ranking = list(self.inner.retrieve(question, limit))
            return ranking[3:] + ranking[:3]

        def provenance(self):
            return self.inner.provenance()


    def build(context):
        return Worse(lexical(context))
    '''
)


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "worse_lexical.py").write_text(WORSE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("GOLDENEVAL_STORE", raising=False)
    return tmp_path


def invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def night(folder: Path, retriever: str, baseline: str = "accepted") -> tuple[int, dict[str, Any]]:
    """One nightly run of the series ``nightly``: its exit code under --fail-on-regression and its JSON."""
    result = invoke(
        "retrieval",
        "--set",
        "transit-sample",
        "--retriever",
        retriever,
        "--name",
        "nightly",
        "--baseline",
        baseline,
        "--fail-on-regression",
        "--format",
        "json",
        "--no-progress",
        "--store",
        str(folder / "results.duckdb"),
    )
    assert result.exit_code in (ExitCode.OK, ExitCode.REGRESSION), result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return result.exit_code, document


GOOD, BAD = "goldeneval.lexical", "worse_lexical:build"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_regression_stays_red_until_a_person_accepts_a_run_then_the_next_night_passes(folder: Path) -> None:
    code, first = night(folder, GOOD)
    assert (code, first["verdict"]["state"]) == (ExitCode.OK, "baseline")
    code, second = night(folder, BAD)
    assert (code, second["verdict"]["status"]) == (ExitCode.REGRESSION, "regression")
    night1, night2 = first["run"]["id"], second["run"]["id"]

    code, third = night(folder, BAD)  # the same worse retriever: still a regression against night 1
    assert (code, third["verdict"]["status"]) == (ExitCode.REGRESSION, "regression")
    assert third["verdict"]["previous_run_id"] == night1
    reason = third["verdict"]["reason"]
    assert reason.startswith("top-1 hit rate fell ")
    assert f"; compared with accepted level run {night1} (it passed the gate); " in reason
    night3 = third["run"]["id"]
    assert f"red until a person accepts a run of this series: goldeneval accept {night3} --reason TEXT" in reason

    accepted = invoke(
        "accept", night3[:10], "--reason", "new ranking trades top-1 for latency", "--by", "alice",
        "--store", str(folder / "results.duckdb"),
    )  # fmt: skip
    assert accepted.exit_code == ExitCode.OK, accepted.output
    assert accepted.output.count("\n") == 1  # one line
    assert accepted.output.startswith(f"accepted run {night3} (set transit-sample, series nightly, top-1 ")
    assert "accepted by alice: new ranking trades top-1 for latency" in accepted.output

    code, fourth = night(folder, BAD)
    assert (code, fourth["verdict"]["status"]) == (ExitCode.OK, "pass")
    assert fourth["verdict"]["previous_run_id"] == night3
    assert fourth["verdict"]["reason"].startswith("within thresholds: ")
    assert fourth["verdict"]["reason"].endswith(
        f"; compared with accepted level run {night3} (accepted by alice: new ranking trades top-1 for latency)"
    )
    assert night2 not in fourth["verdict"]["reason"]

    listed = invoke("runs", "--store", str(folder / "results.duckdb"), "--format", "json")
    marks = {run["id"]: run["accepted"] for run in json.loads(listed.stdout)}
    assert [run_id for run_id, mark in marks.items() if mark is not None] == [night3]
    assert (marks[night3]["by"], marks[night3]["reason"]) == ("alice", "new ranking trades top-1 for latency")
    table = invoke("runs", "--store", str(folder / "results.duckdb")).output
    [marked] = [line for line in table.splitlines() if line.startswith(night3[:12])]
    assert marked.endswith("by alice")


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_command_line_keeps_previous_so_a_persisting_regression_turns_green_there(folder: Path) -> None:
    night(folder, GOOD)
    night(folder, BAD)
    code, third = night(folder, BAD, baseline="previous")
    assert (code, third["verdict"]["status"]) == (ExitCode.OK, "pass")  # what ADR-060's default does
    retrieval = main.get_command(click.Context(main), "retrieval")
    assert retrieval is not None
    assert next(p.default for p in retrieval.params if p.name == "baseline_text") == "previous"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_that_passed_against_the_level_becomes_the_level(folder: Path) -> None:
    _, first = night(folder, GOOD)
    _, second = night(folder, GOOD)
    _, third = night(folder, BAD)
    assert third["verdict"]["previous_run_id"] == second["run"]["id"]
    assert f"accepted level run {second['run']['id']} (it passed the gate)" in third["verdict"]["reason"]
    _, fourth = night(folder, GOOD)  # back to the level: passes against night 2, not against night 3
    assert (fourth["verdict"]["previous_run_id"], fourth["verdict"]["status"]) == (second["run"]["id"], "pass")
    assert first["run"]["id"] != second["run"]["id"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_benchmark_change_stays_unjudged_until_a_person_accepts_a_run_of_it(
    cli_workspace: CliWorkspace,
) -> None:
    good = {"alpha": ["a", "x"], "beta": ["b", "x"], "gamma": []}
    first = json.loads(cli_workspace.evaluate(good, "--baseline", "accepted", "--format", "json").stdout)
    changed = [json.loads(cli_workspace.evaluate(good, "--baseline", "accepted", "--format", "json",
                                                 corpus="rev-2").stdout) for _ in range(2)]  # fmt: skip
    for document in changed:  # both nights against night 1: the new corpus is no level on its own
        assert (document["verdict"]["state"], document["verdict"]["previous_run_id"]) == (
            "mismatch",
            first["run"]["id"],
        )
    result = invoke("accept", changed[1]["run"]["id"], "--reason", "corpus rev-2", "--store", str(cli_workspace.store))
    assert result.exit_code == ExitCode.OK, result.output
    after = json.loads(
        cli_workspace.evaluate(good, "--baseline", "accepted", "--format", "json", corpus="rev-2").stdout
    )
    assert (after["verdict"]["status"], after["verdict"]["previous_run_id"]) == ("pass", changed[1]["run"]["id"])


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_accept_refuses_an_unknown_run_an_incomplete_run_and_an_empty_reason(cli_workspace: CliWorkspace) -> None:
    store = str(cli_workspace.store)
    missing = invoke("accept", "0123abc", "--reason", "fine", "--store", store)
    assert (missing.exit_code, missing.output) == (
        ExitCode.INVALID_INPUT,
        f"goldeneval: error: run '0123abc' not found: the store {store} does not exist\n",
    )
    assert not cli_workspace.store.exists()  # asking created nothing

    cli_workspace.evaluate({"alpha": ["a"], "beta": "raise", "gamma": []})  # one question errors
    [incomplete] = ResultStore(cli_workspace.store).list_runs()
    assert incomplete.status == "incomplete"
    refused = invoke("accept", incomplete.id, "--reason", "fine", "--store", store)
    assert refused.exit_code == ExitCode.INVALID_INPUT
    assert refused.output == (
        f"goldeneval: error: accept: run {incomplete.id} is incomplete (1 of 3 questions errored): an incomplete "
        "run cannot be a series' level\n"
    )
    cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []})
    [complete, _] = ResultStore(cli_workspace.store).list_runs()
    empty = invoke("accept", complete.id, "--reason", "  ", "--store", store)
    assert empty.exit_code == ExitCode.INVALID_INPUT
    assert empty.output == (
        "goldeneval: error: accept: --reason is empty: say why this run is accepted as its series' level\n"
    )
    unknown = invoke("accept", "ffff", "--reason", "fine", "--store", store)
    assert unknown.exit_code == ExitCode.INVALID_INPUT
    assert "run 'ffff' not found in" in unknown.output
    assert ResultStore(cli_workspace.store).acceptances([incomplete.id, complete.id]) == {}


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_accept_defaults_by_to_the_user_running_it(
    cli_workspace: CliWorkspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOGNAME", "operator-bob")
    cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []})
    [run] = ResultStore(cli_workspace.store).list_runs()
    result = invoke("accept", run.id, "--reason", "looked at it", "--store", str(cli_workspace.store))
    assert result.exit_code == ExitCode.OK, result.output
    assert "accepted by operator-bob: looked at it" in result.output
    assert ResultStore(cli_workspace.store).acceptances([run.id])[run.id].accepted_by == "operator-bob"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_acceptances_are_stored_purged_and_copied_with_their_run(
    store_location: StoreLocation, cli_workspace: CliWorkspace, tmp_path: Path
) -> None:
    cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []}, "--store", str(store_location))
    cli_workspace.evaluate({"alpha": ["x"], "beta": ["b"], "gamma": []}, "--store", str(store_location))
    store = open_store(store_location)
    later, earlier = store.list_runs()
    recorded = accept(store, later.id, "worse on alpha, accepted", by="carol")
    assert recorded.acceptance.accepted_by == "carol"
    assert store.schema_version() >= 4
    acceptance = recorded.acceptance
    assert store.acceptances([later.id, earlier.id]) == {later.id: acceptance}

    copy = ResultStore(tmp_path / "copy.duckdb")
    copy_runs(store, copy)
    copy_runs(store, copy)  # twice copies nothing twice
    assert copy.acceptances([later.id]) == {later.id: acceptance}

    purged = store.purge(datetime.now(UTC) + timedelta(seconds=1))
    assert {run.id for run in purged} == {later.id, earlier.id}
    assert store.acceptances([later.id]) == {}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_verdict_against_the_level_names_the_accepted_run_and_who_accepted_it(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []})
    cli_workspace.evaluate({"alpha": ["x"], "beta": ["x"], "gamma": []})
    cli_workspace.evaluate({"alpha": ["x"], "beta": ["x"], "gamma": []})
    store = ResultStore(cli_workspace.store)
    third, second, first = store.list_runs()
    verdict = compare_with_history(store, store.get_run(third.id) or third, baseline=ACCEPTED)
    assert (verdict.status.value, verdict.previous_run_id) == ("regression", first.id)
    assert verdict.reference == f"accepted level run {first.id} (it passed the gate)"
    accept(store, second.id, "labels were wrong", by="dana")
    verdict = compare_with_history(store, store.get_run(third.id) or third, baseline=ACCEPTED)
    assert (verdict.status.value, verdict.previous_run_id) == ("pass", second.id)
    assert verdict.reference == f"accepted level run {second.id} (accepted by dana: labels were wrong)"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_series_without_a_level_is_judged_against_the_run_before_until_one_passes(
    cli_workspace: CliWorkspace,
) -> None:
    good = {"alpha": ["a"], "beta": ["b"], "gamma": []}

    def run(corpus: str | None) -> dict[str, Any]:
        result = cli_workspace.evaluate(good, "--baseline", "accepted", "--format", "json", corpus=corpus)
        document: dict[str, Any] = json.loads(result.stdout)
        return document

    first = run(None)  # no corpus revision declared: unknown, no level
    second = run("rev-1")
    assert (second["verdict"]["state"], second["verdict"]["previous_run_id"]) == ("unknown", first["run"]["id"])
    third = run("rev-1")  # still no level: against the run before it, which it matches
    assert (third["verdict"]["status"], third["verdict"]["previous_run_id"]) == ("pass", second["run"]["id"])
    assert third["verdict"]["reason"].endswith(
        f"; compared with the previous run {second['run']['id']} (the series has no accepted level yet)"
    )
    fourth = run("rev-1")  # the third passed the gate: it is the level now
    assert fourth["verdict"]["reason"].endswith(f"accepted level run {third['run']['id']} (it passed the gate)")


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_compare_against_accepted_shows_the_level(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []})
    cli_workspace.evaluate({"alpha": ["x"], "beta": ["x"], "gamma": []})
    cli_workspace.evaluate({"alpha": ["x"], "beta": ["x"], "gamma": []})
    third, _, first = ResultStore(cli_workspace.store).list_runs()
    result = invoke("compare", third.id, "--against", "accepted", "--store", str(cli_workspace.store))
    assert result.exit_code == ExitCode.OK, result.output
    assert f"compared with accepted level run {first.id} (it passed the gate)" in result.output
    assert "regression" in result.output


def test_accept_refuses_an_empty_by(cli_workspace: CliWorkspace) -> None:
    cli_workspace.evaluate({"alpha": ["a"], "beta": ["b"], "gamma": []})
    [run] = ResultStore(cli_workspace.store).list_runs()
    result = invoke("accept", run.id, "--reason", "fine", "--by", " ", "--store", str(cli_workspace.store))
    assert (result.exit_code, result.output) == (
        ExitCode.INVALID_INPUT,
        "goldeneval: error: accept: --by is empty: name who accepts the run\n",
    )


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_retention_keeps_the_accepted_level_so_a_lasting_regression_stays_red(folder: Path) -> None:
    """Purging the good night before a lasting regression must not make a bad night the
    series' baseline: the level (night 1) stays, and night 4 is still red against it."""
    _, first = night(folder, GOOD)
    _, second = night(folder, BAD)
    night(folder, BAD)
    store = open_store(StoreLocation.parse(str(folder / "results.duckdb")))
    night1, night2 = first["run"]["id"], store.get_run(second["run"]["id"])
    assert night2 is not None
    # an age between night 1 and night 2: only night 1 is old enough to go
    report = purge_runs(store, timedelta(0), now=night2.created_at)
    assert ([run.id for run in report.runs], [run.id for run in report.kept]) == ([], [night1])
    assert store.get_run(night1) is not None

    code, fourth = night(folder, BAD)
    assert (code, fourth["verdict"]["status"], fourth["verdict"]["previous_run_id"]) == (
        ExitCode.REGRESSION,
        "regression",
        night1,
    )
    assert f"compared with accepted level run {night1} (it passed the gate)" in fourth["verdict"]["reason"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_purge_says_which_runs_it_kept_as_levels_and_deletes_the_rest(folder: Path) -> None:
    _, first = night(folder, GOOD)
    bad = [night(folder, BAD)[1]["run"]["id"] for _ in range(2)]
    result = invoke("purge", "--older-than", "0m", "--store", str(folder / "results.duckdb"))
    assert result.exit_code == ExitCode.OK, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Deleted 2 run(s) and 0 Parquet table file(s)."
    assert "Kept 1 run(s): accepted levels of their series." in lines
    assert lines[-1].startswith(f"  {first['run']['id']}  ")
    remaining = [run["id"] for run in json.loads(invoke("runs", "--store", str(folder / "results.duckdb"),
                                                        "--format", "json").stdout)]  # fmt: skip
    assert remaining == [first["run"]["id"]]
    assert not set(bad) & set(remaining)
    code, after = night(folder, BAD)
    assert (code, after["verdict"]["previous_run_id"]) == (ExitCode.REGRESSION, first["run"]["id"])


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_retention_keeps_the_latest_acceptances_run(folder: Path) -> None:
    night(folder, GOOD)
    _, second = night(folder, BAD)
    accepted = invoke("accept", second["run"]["id"], "--reason", "new ranking", "--by", "alice",
                      "--store", str(folder / "results.duckdb"))  # fmt: skip
    assert accepted.exit_code == ExitCode.OK, accepted.output
    _, third = night(folder, GOOD)  # better than the accepted level: passes, and is the level now
    assert third["verdict"]["status"] == "pass"
    store = open_store(StoreLocation.parse(str(folder / "results.duckdb")))
    report = purge_runs(store, timedelta(0))
    assert {run.id for run in report.kept} == {second["run"]["id"], third["run"]["id"]}
    assert store.acceptances([second["run"]["id"]])[second["run"]["id"]].accepted_by == "alice"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_retention_keeps_the_older_runs_the_walk_needs_to_reach_the_level(
    cli_workspace: CliWorkspace, store_location: StoreLocation
) -> None:
    """Night 2 measured another corpus (red, never a level on its own), night 3 the first one
    again and passed against night 1.  Deleting night 1 alone would make night 2 the series'
    first run, its baseline and level, and night 3 a mismatch against it: night 1 stays."""
    good = {"alpha": ["a", "x"], "beta": ["b", "x"], "gamma": []}

    def evaluate(corpus: str) -> dict[str, Any]:
        result = cli_workspace.evaluate(
            good, "--baseline", "accepted", "--format", "json", "--store", str(store_location), corpus=corpus
        )
        document: dict[str, Any] = json.loads(result.stdout)
        return document

    first, second, third = evaluate("rev-1"), evaluate("rev-2"), evaluate("rev-1")
    assert (second["verdict"]["state"], third["verdict"]["status"]) == ("mismatch", "pass")
    store = open_store(store_location)  # both backends: the walk's queries that leave runs out
    night2 = store.get_run(second["run"]["id"])
    assert night2 is not None
    report = purge_runs(store, timedelta(0), now=night2.created_at)
    assert (report.runs, [run.id for run in report.kept]) == ((), [first["run"]["id"]])
    after = evaluate("rev-1")
    assert (after["verdict"]["status"], after["verdict"]["previous_run_id"]) == ("pass", third["run"]["id"])


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_later_acceptance_of_an_older_run_undoes_an_acceptance(folder: Path) -> None:
    _, first = night(folder, GOOD)
    _, second = night(folder, BAD)
    store = str(folder / "results.duckdb")
    oops = invoke("accept", second["run"]["id"], "--reason", "oops", "--by", "bob", "--store", store)
    assert oops.exit_code == ExitCode.OK, oops.output
    rollback = invoke("accept", first["run"]["id"], "--reason", "rollback", "--by", "bob", "--store", store)
    assert rollback.exit_code == ExitCode.OK, rollback.output
    # night 2 is walked again against night 1, fails, so night 1 is the level and the line says nothing else
    assert "the level now is" not in rollback.output
    code, third = night(folder, BAD)
    assert (code, third["verdict"]["previous_run_id"]) == (ExitCode.REGRESSION, first["run"]["id"])
    assert f"accepted level run {first['run']['id']} (accepted by bob: rollback)" in third["verdict"]["reason"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_accept_line_says_whom_it_binds_and_which_run_is_the_level_now(folder: Path) -> None:
    _, first = night(folder, GOOD)
    _, second = night(folder, GOOD)  # passed the gate: the level
    result = invoke("accept", first["run"]["id"], "--reason", "re-baseline", "--by", "carol",
                    "--store", str(folder / "results.duckdb"))  # fmt: skip
    assert result.exit_code == ExitCode.OK, result.output
    assert result.output.count("\n") == 1
    assert (
        "; from now on, the series' runs judged against the accepted level (baseline: accepted, the nightly's "
        "default) compare with it until a later run passes the gate; a run measured after it passed the gate "
        f"against it (default thresholds), so the level now is run {second['run']['id']} and the series' next "
        "run compares with that\n"
    ) in result.output
    _, third = night(folder, GOOD)
    assert third["verdict"]["previous_run_id"] == second["run"]["id"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_purge_including_levels_deletes_the_levels_too_and_the_next_run_is_the_baseline(folder: Path) -> None:
    night(folder, GOOD)
    night(folder, BAD)
    result = invoke("purge", "--older-than", "0m", "--including-levels", "--store", str(folder / "results.duckdb"))
    assert result.exit_code == ExitCode.OK, result.output
    assert result.output.startswith("Deleted 2 run(s) and 0 Parquet table file(s).")
    assert "Kept" not in result.output
    code, after = night(folder, BAD)
    assert (code, after["verdict"]["state"]) == (ExitCode.OK, "baseline")
