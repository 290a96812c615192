"""A third kind added through its declaration alone: installed as another package would be
(an entry point of the group ``goldeneval.kinds``, here a ``.dist-info`` folder put on the path),
the toy kind (``tests/toy_kind.py``, its Dagster part ``tests/toy_kind_dagster.py``, its command
``tests/toy_kind_cli.py``) gets its suite section, its assets, jobs, schedule and sensors in the
Definitions the suite builds, runs through the main command and through ``goldeneval``, its
stored runs are read back (compared, reported, accepted) by a fresh ``goldeneval`` process
through the details reader its declaration names, and it is in the generated suite reference;
no file of goldeneval names it."""

from __future__ import annotations

import dataclasses
import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import dagster as dg
import pytest
import yaml

import pipelines.main
from goldeneval.core.errors import InputError, StoreError
from goldeneval.core.kinds import read_details
from goldeneval.kinds import declared_kinds, forget_declared_kinds
from goldeneval.store import open_store
from goldeneval.suite import load_suite
from pipelines.build import definitions_for
from tests.dagster_support import SETS, webhook_server, write_project
from tests.toy_kind import TOY_DECLARATION

ROOT = Path(__file__).resolve().parents[1]
ENTRY = "toy-rerank = tests.toy_kind:TOY_DECLARATION"


def install(site: Path, *entries: str) -> Path:
    """A package's metadata on ``site``: its entry points in the group ``goldeneval.kinds``."""
    info = site / "goldeneval_toy_kind-0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: goldeneval-toy-kind\nVersion: 0\n")
    (info / "entry_points.txt").write_text("[goldeneval.kinds]\n" + "\n".join(entries) + "\n")
    return site


@pytest.fixture
def toy_site(tmp_path: Path) -> Iterator[Path]:
    """The toy kind installed for this process (and for the child processes given the path)."""
    site = install(tmp_path / "site", ENTRY)
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    forget_declared_kinds()
    try:
        yield site
    finally:
        sys.path.remove(str(site))
        importlib.invalidate_caches()
        forget_declared_kinds()


def toy_project(root: Path, firsts: str, alerts: Mapping[str, Any] | None = None) -> Path:
    """A suite file with a retrieval set and the toy kind's own section."""
    project = write_project(root, sets={"alpha-set": SETS["alpha-set"]}, alerts=alerts)
    config = yaml.safe_load(project.config.read_text())
    config["toy"] = {"sets": ["toy-set"], "rerankers": {"toy": {"firsts": firsts}}}
    project.config.write_text(yaml.safe_dump(config))
    return project.config


def set_firsts(config: Path, firsts: str) -> None:
    content = yaml.safe_load(config.read_text())
    content["toy"]["rerankers"]["toy"]["firsts"] = firsts
    config.write_text(yaml.safe_dump(content))


def test_the_toy_kind_is_declared_once_installed_and_not_before(toy_site: Path) -> None:
    assert [kind.name for kind in declared_kinds()] == ["retrieval", "prompts", "toy-rerank"]
    sys.path.remove(str(toy_site))
    forget_declared_kinds()
    try:
        assert [kind.name for kind in declared_kinds()] == ["retrieval", "prompts"]
    finally:
        sys.path.insert(0, str(toy_site))
        forget_declared_kinds()


def test_a_name_two_kinds_declare_fails_naming_both(tmp_path: Path) -> None:
    site = install(tmp_path / "site", ENTRY, "toy-again = tests.toy_kind:TOY_DECLARATION")
    sys.path.insert(0, str(site))
    forget_declared_kinds()
    try:
        with pytest.raises(ValueError, match=r"^run kind 'toy-rerank': kind 'toy-rerank' is declared by 'toy-rerank'"):
            declared_kinds()
    finally:
        sys.path.remove(str(site))
        forget_declared_kinds()


def test_the_suite_file_validates_the_kinds_section_naming_the_field(toy_site: Path, tmp_path: Path) -> None:
    config = toy_project(tmp_path / "project", "11x1")
    with pytest.raises(InputError, match=r"field 'toy\.rerankers\.toy\.firsts': String should match pattern"):
        load_suite(config)


def test_the_suite_definitions_hold_the_toy_kind_beside_the_shipped_ones(toy_site: Path, tmp_path: Path) -> None:
    defs = definitions_for(load_suite(toy_project(tmp_path / "project", "1111")))
    assets = {key.to_user_string() for key in defs.resolve_all_asset_keys()}
    assert {"toy_questions", "toy_firsts", "toy_summary", "toy_regression_check"} <= assets
    assert {"toy_series/toy-set/toy", "toy_nightly/toy-set", "evaluation_summary", "regression_check"} <= assets
    repository = defs.get_repository_def()
    jobs = {job.name: job for job in repository.get_all_jobs()}
    assert {"nightly_toy_evaluation", "toy_regression_check_job", "nightly_evaluation", "accept_run"} <= set(jobs)
    described = jobs["nightly_toy_evaluation"].description
    assert described == "Evaluate one (toy set x reranker) partition and store the run."
    toy_partitions = jobs["nightly_toy_evaluation"].partitions_def
    assert toy_partitions is not None and toy_partitions.get_partition_keys() == ["toy|toy-set"]
    schedules = {schedule.name: schedule for schedule in repository.schedule_defs}
    assert schedules["nightly_toy_evaluation_schedule"].job_name == "nightly_toy_evaluation"
    sensors = {sensor.name for sensor in repository.sensor_defs}
    assert {"toy_regression_check_sensor", "toy_cli_run_series_sensor", "check_alert_sensor"} <= sensors


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = pipelines.main.main(list(args))
    return status, capsys.readouterr().out


@pytest.mark.slow  # four in-process Dagster runs: seconds; CI runs it
def test_the_main_command_runs_judges_and_summarises_the_toy_kind(
    toy_site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("GOLDENEVAL_STORE", "GOLDENEVAL_TABLES", "GOLDENEVAL_CACHE", "GOLDENEVAL_ALERT_WEBHOOK_URL"):
        monkeypatch.delenv(name, raising=False)
    with webhook_server() as webhook:
        config = toy_project(tmp_path / "project", "1111", alerts={"webhook_url": webhook.url})
        monkeypatch.setenv("DAGSTER_HOME", str(tmp_path / "home"))
        monkeypatch.setenv("GOLDENEVAL_CONFIG", str(config))
        first, first_out = _main(capsys, "--partition", "toy-set|toy")  # the toy's partition alone
        set_firsts(config, "1010")
        worse, worse_out = _main(capsys, "--partition", "toy-set|toy")

    # the toy's failed regression check is alerted as every kind's is
    assert [(alert["check"], alert["asset"]) for alert in webhook.received] == [
        ("no_regression", "toy_regression_check")
    ]

    assert (first, worse) == (0, 0), worse_out  # a regression is reported, not an error
    assert "goldeneval: nightly toy reranking" in first_out
    header = f"{'set':<24} {'reranker':<20} {'first':>6} {'mrr':>6}  verdict      checks"
    assert header in worse_out
    row = f"{'toy-set':<24} {'toy':<20} {'0.500':>6} {'0.500':>6}  {'regression':<12} run_complete succeeded, "
    assert row + "no_regression failed" in worse_out, worse_out
    stored = open_store(load_suite(config).store_location).list_runs()
    assert [(run.set_id, run.model, run.pass_rate) for run in stored] == [
        ("toy-set", "toy", 0.5),  # newest first
        ("toy-set", "toy", 1.0),
    ]
    with dg.DagsterInstance.from_config(str(tmp_path / "home")) as instance:
        nightly = instance.get_runs(filters=dg.RunsFilter(job_name="nightly_toy_evaluation"))
        checked = instance.get_runs(filters=dg.RunsFilter(job_name="toy_regression_check_job"))
        retrieval = instance.get_runs(filters=dg.RunsFilter(job_name="nightly_evaluation"))
    assert (len(nightly), len(checked), len(retrieval)) == (2, 2, 0)
    assert pipelines.main.main(["--partition", "toy-set|nobody"]) == pipelines.main.USAGE_ERROR
    assert "no such SET|RETRIEVER or PROMPT_SET|MODEL or SET|RERANKER partition" in capsys.readouterr().err


def _goldeneval(site: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GOLDENEVAL_")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-m", "goldeneval.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow  # four goldeneval processes: seconds; CI runs it
def test_the_toy_kinds_command_runs_through_goldeneval(toy_site: Path, tmp_path: Path) -> None:
    listed = _goldeneval(toy_site, tmp_path, "--help")
    assert "  toy-rerank " in listed.stdout and "Record a toy reranker-only run" in listed.stdout, listed.stderr
    store = str(tmp_path / "results.duckdb")
    first = _goldeneval(toy_site, tmp_path, "toy-rerank", "--firsts", "1111", "--store", store, "--fail-on-regression")
    worse = _goldeneval(toy_site, tmp_path, "toy-rerank", "--firsts", "1010", "--store", store, "--fail-on-regression")
    assert first.returncode == 0 and " baseline, gate pass: " in first.stdout, first.stderr
    assert worse.returncode == 1, worse.stderr
    assert " comparable, gate regression: reranked first fell 1.000 -> 0.500" in worse.stdout
    runs = _goldeneval(toy_site, tmp_path, "runs", "--store", store)
    assert runs.returncode == 0 and runs.stdout.count("toy_rerank") == 2, runs.stdout


def test_the_generated_suite_reference_holds_the_toy_kinds_section(toy_site: Path) -> None:
    # sys.path by hand, not monkeypatch.syspath_prepend: monkeypatch would restore, after the
    # toy_site fixture's teardown, a sys.path that still holds the toy's site (a leak into
    # every later test of this worker that lists the declared kinds).
    sys.path.insert(0, str(ROOT / "docs"))
    try:
        generate = importlib.import_module("generate")
        page = generate.suite_reference()
    finally:
        sys.path.remove(str(ROOT / "docs"))
    assert "| `toy.rerankers.<name>.firsts` | text | required |  | Per question, 1 when" in page
    assert page.index("`storage`") < page.index("`toy`")  # the shared keys first, then each kind's section


def _run_ids(site: Path, cwd: Path, store: str) -> list[str]:
    listed = _goldeneval(site, cwd, "runs", "--store", store, "--format", "json")
    assert listed.returncode == 0, listed.stderr
    return [run["id"] for run in json.loads(listed.stdout)]  # newest first


@pytest.mark.slow  # nine goldeneval processes: seconds; CI runs it
def test_stored_toy_runs_are_read_back_by_fresh_processes_through_the_declaration(
    toy_site: Path, tmp_path: Path
) -> None:
    """Each command is a process of its own, which imports the toy's modules only through its
    declaration: the details reader it names (``details``) reads the stored runs back."""
    store = str(tmp_path / "results.duckdb")
    for firsts in ("1111", "1010"):
        stored = _goldeneval(toy_site, tmp_path, "toy-rerank", "--firsts", firsts, "--store", store)
        assert stored.returncode == 0, stored.stderr
    worse, first = _run_ids(toy_site, tmp_path, store)

    compared = _goldeneval(toy_site, tmp_path, "compare", first, worse, "--store", store, "--fail-on-regression")
    assert compared.returncode == 1, compared.stderr  # the gate's exit code for a regression
    out = compared.stdout
    assert "Verdict: regression: reranked first fell 1.000 -> 0.500 (-0.500, allowed -0.100); " in out
    assert "mean reciprocal rank fell 1.000 -> 0.500 (-0.500, allowed -0.100)" in out
    assert "reranked first: 2 newly failing, 0 newly passing of 4; McNemar p=0.5" in out
    assert "  reranked first          1.000    0.500   -0.500  (gated)" in out
    assert "  mean reciprocal rank    1.000    0.500   -0.500  (gated)" in out
    assert "Newly failing: 2\n  q1 (reranked first)\n" in out and "\n  q3 (reranked first)\n" in out
    assert "top-1" not in out and "pass rate" not in out  # the toy's rates, not another kind's

    better = _goldeneval(toy_site, tmp_path, "compare", worse, first, "--store", store, "--fail-on-regression")
    assert better.returncode == 0, better.stderr
    assert "Verdict: pass: " in better.stdout and "Newly passing: 2\n" in better.stdout

    as_json = _goldeneval(toy_site, tmp_path, "compare", first, worse, "--store", store, "--format", "json")
    assert as_json.returncode == 0, as_json.stderr  # no --fail-on-regression: the verdict is output, not status
    document = json.loads(as_json.stdout)
    assert (document["kind"], document["verdict"]["status"], document["rates"]) == (
        "toy-rerank",
        "regression",
        ["reranked first"],
    )
    assert [(c["rate"], c["previous"], c["current"], c["regressed"]) for c in document["verdict"]["changes"]] == [
        ("reranked first", 1.0, 0.5, True),
        ("mean reciprocal rank", 1.0, 0.5, True),
    ]
    flips = {q["id"]: (q["flip"], q["earlier"]["outcomes"], q["current"]["outcomes"]) for q in document["questions"]}
    assert flips == {
        "q0": ("unchanged", {"reranked first": True}, {"reranked first": True}),
        "q1": ("newly_failing", {"reranked first": True}, {"reranked first": False}),
        "q2": ("unchanged", {"reranked first": True}, {"reranked first": True}),
        "q3": ("newly_failing", {"reranked first": True}, {"reranked first": False}),
    }

    page = tmp_path / "report.html"
    reported = _goldeneval(toy_site, tmp_path, "report", worse, "--out", str(page), "--store", store)
    assert reported.returncode == 0, reported.stderr
    assert reported.stdout.startswith(f"wrote {page} (regression: reranked first fell 1.000 -> 0.500"), reported.stdout
    html = page.read_text(encoding="utf-8")
    assert "toy-rerank" in html and "reranked first fell 1.000 -&gt; 0.500" in html

    accepted = _goldeneval(toy_site, tmp_path, "accept", worse, "--reason", "a toy", "--by", "tests", "--store", store)
    assert accepted.returncode == 0, accepted.stderr
    assert accepted.stdout.startswith(
        f"accepted run {worse} (set toy-set, series toy, reranked first 0.500, mean reciprocal rank 0.500) "
    ), accepted.stdout


BROKEN = dataclasses.replace(TOY_DECLARATION, details="tests.toy_kind:firsts_of")
"""The toy, declared with a details reader that is not one."""
UNLOADABLE = dataclasses.replace(TOY_DECLARATION, details="tests.no_such_module:DETAILS")


@pytest.mark.parametrize(
    ("declared", "message"),
    [
        ("BROKEN", "details tests.toy_kind:firsts_of is not a goldeneval.core.kinds.DetailsKind"),
        (
            "UNLOADABLE",
            "details tests.no_such_module:DETAILS cannot be loaded (No module named 'tests.no_such_module')",
        ),
    ],
)
def test_a_declared_details_reader_that_is_none_fails_one_line_naming_the_kind(
    tmp_path: Path, declared: str, message: str
) -> None:
    site = install(tmp_path / "site", f"toy-rerank = tests.test_run_kinds_declared:{declared}")
    sys.path.insert(0, str(site))
    importlib.invalidate_caches()
    forget_declared_kinds()
    try:
        with pytest.raises(StoreError, match="^" + re.escape(f"run r9: run kind 'toy-rerank': {message}")):
            read_details('{"kind": "nobody"}', "run r9")
    finally:
        sys.path.remove(str(site))
        importlib.invalidate_caches()
        forget_declared_kinds()


SHARED = ("goldeneval", "assets", "resources", "pipelines", "docs", "scripts", "pyproject.toml", "README.md")


def test_no_shared_file_names_the_toy_kind() -> None:
    """The toy kind is its declaration and its modules under tests/, nothing else."""
    named = [
        path.relative_to(ROOT)
        for top in SHARED
        for path in ([ROOT / top] if (ROOT / top).is_file() else (ROOT / top).rglob("*"))
        if path.is_file()
        and path.suffix in (".py", ".md", ".toml", ".yaml", ".sh")
        and any(word in path.read_text(encoding="utf-8") for word in ("toy_kind", TOY_DECLARATION.name))
    ]
    assert named == []
