"""One storage resolver for both doors (goldeneval.core.storage): the result store, the Parquet
tables and the cache are each the flag, else the environment variable, else the suite file's
``storage:`` value, else the default — through the ``goldeneval`` command, through the
Dagster resources and through ``python -m pipelines.main``; and ``goldeneval purge`` deletes
the table files below the suite's tables root, not below the working directory."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.storage import CACHE, SETTINGS, STORE, TABLES, StorageSetting, resolve
from goldeneval.store import RunRecord, SliceRates, StoreLocation, open_store
from goldeneval.suite import load_suite
from pipelines.build import build_definitions
from pipelines.config import PROJECT_DIR
from tests.dagster_support import SETS, write_project
from tests.records import details

STORAGE = {"store": "state/results.duckdb", "tables": "state/tables", "cache": "state/cache"}
"""What the suite files below declare: relative, so relative to the suite file."""


def _key(setting: StorageSetting) -> str:
    return setting.key


# --------------------------------------------------------------------------- the resolver


def test_each_setting_is_declared_once_with_its_variable_and_default() -> None:
    assert [(s.key, s.flag, s.env, s.default.as_posix()) for s in SETTINGS] == [
        ("store", "--store", "GOLDENEVAL_STORE", ".goldeneval/results.duckdb"),
        ("tables", "--tables-root", "GOLDENEVAL_TABLES", ".goldeneval/tables"),
        ("cache", "--cache-dir", "GOLDENEVAL_CACHE", ".goldeneval/cache"),
    ]


@pytest.mark.parametrize("setting", SETTINGS, ids=_key)
def test_the_order_is_flag_then_environment_then_suite_then_default(
    setting: StorageSetting, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "project"
    monkeypatch.setenv(setting.env, "env/value")
    assert resolve(setting, "flag/value", suite_value="suite/value", suite_folder=folder) == Path("flag/value")
    assert resolve(setting, None, suite_value="suite/value", suite_folder=folder) == Path("env/value")
    monkeypatch.setenv(setting.env, "")  # set but empty: as unset
    assert resolve(setting, "", suite_value="suite/value", suite_folder=folder) == folder / "suite/value"
    monkeypatch.delenv(setting.env)
    assert resolve(setting, suite_value="/abs/value", suite_folder=folder) == Path("/abs/value")
    # The default: beside the suite file when there is one, else in the working directory.
    assert resolve(setting, suite_folder=folder) == folder / setting.default
    assert resolve(setting) == setting.default


def test_a_store_url_is_kept_as_written_and_only_the_store_takes_one(tmp_path: Path) -> None:
    url = "postgresql://ci@db.internal/goldeneval"
    assert resolve(STORE, suite_value=url, suite_folder=tmp_path) == url
    assert resolve(TABLES, suite_value="s3://bucket/tables", suite_folder=tmp_path) == tmp_path / "s3:/bucket/tables"


# --------------------------------------------------------------------------- the CLI door


@dataclass
class Folders:
    project: Path
    """Holds goldeneval.yaml (with STORAGE), the set and its corpus."""
    work: Path
    """An empty working directory."""
    elsewhere: Path

    @property
    def suite(self) -> Path:
        return self.project / "goldeneval.yaml"


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Folders:
    project, work, elsewhere = tmp_path / "project", tmp_path / "work", tmp_path / "elsewhere"
    for folder in (project / "corpus", work, elsewhere):
        folder.mkdir(parents=True)
    (project / "corpus" / "apples.md").write_text("# Apples\nApples grow in the orchard.")
    (project / "corpus" / "dates.md").write_text("# Dates\nDates grow on palms in the desert.")
    questions = [{"id": "q1", "text": "apple orchard", "form": "MATCH", "expected": ["apples"]}]
    (project / "s.yaml").write_text(yaml.safe_dump({"id": "s", "corpus": "corpus", "questions": questions}))
    suite = {"sets": ["s.yaml"], "retrievers": {"lexical": {"id": "goldeneval.lexical"}}, "storage": STORAGE}
    (project / "goldeneval.yaml").write_text(yaml.safe_dump(suite))
    monkeypatch.chdir(work)
    return Folders(project, work, elsewhere)


def _retrieval(folders: Folders, *extra: str) -> dict[str, Any]:
    args = ["retrieval", "--set", str(folders.project / "s.yaml"), "--retriever", "goldeneval.lexical"]
    result = CliRunner().invoke(main, [*args, "--no-progress", "--format", "json", *extra])
    assert result.exit_code == ExitCode.OK, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def _written(path: Path) -> bool:
    return path.exists() and (path.is_file() or any(path.iterdir()))


@dataclass(frozen=True)
class CliCase:
    expected: str
    """Where the store and the cache must be, relative to tmp_path."""
    chdir: str = "work"
    config: bool = False
    """Name the suite file with $GOLDENEVAL_CONFIG."""
    env: bool = False
    flag: bool = False


CLI_CASES = {
    "default, no suite file": CliCase("work/.goldeneval"),
    "suite from $GOLDENEVAL_CONFIG": CliCase("project/state", config=True),
    "suite in the working directory": CliCase("project/state", chdir="project"),
    "environment over the suite": CliCase("elsewhere/env", config=True, env=True),
    "flag over the environment": CliCase("elsewhere/flag", config=True, env=True, flag=True),
}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("name", CLI_CASES)
def test_the_cli_finds_the_store_and_the_cache_flag_then_environment_then_suite_then_default(
    name: str, folders: Folders, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = CLI_CASES[name]
    monkeypatch.chdir(tmp_path / case.chdir)
    if case.config:
        monkeypatch.setenv("GOLDENEVAL_CONFIG", str(folders.suite))
    if case.env:
        monkeypatch.setenv(STORE.env, str(folders.elsewhere / "env" / "results.duckdb"))
        monkeypatch.setenv(CACHE.env, str(folders.elsewhere / "env" / "cache"))
    flags = []
    if case.flag:
        flags = ["--store", str(folders.elsewhere / "flag" / "results.duckdb")]
        flags += ["--cache-dir", str(folders.elsewhere / "flag" / "cache")]

    document = _retrieval(folders, *flags)

    store, cache = tmp_path / case.expected / "results.duckdb", tmp_path / case.expected / "cache"
    assert Path(document["store"]).resolve() == store.resolve()
    assert store.is_file() and len(open_store(store).list_runs()) == 1
    assert _written(cache / "lexical"), "the lexical index is cached where the cache resolves to"
    candidates = {tmp_path / other.expected for other in CLI_CASES.values()} - {tmp_path / case.expected}
    assert [c for c in candidates if c.exists()] == []


def test_a_bad_storage_section_names_the_file_and_the_field(folders: Folders, monkeypatch: pytest.MonkeyPatch) -> None:
    folders.suite.write_text(yaml.safe_dump({"storage": {"store": "x.duckdb", "tabels": "t"}}))
    monkeypatch.setenv("GOLDENEVAL_CONFIG", str(folders.suite))
    result = CliRunner().invoke(main, ["runs"])
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert f"{folders.suite}: field 'storage.tabels': Extra inputs are not permitted" in result.output


# --------------------------------------------------------------------------- purge


def _old_run(store: StoreLocation, tables_run: str) -> str:
    record = RunRecord(
        set_id="a",
        model="m",
        grader="retrieval_hit_rate",
        pass_rate=0.5,
        mean_score=0.5,
        question_count=2,
        scored_count=2,
        error_count=0,
        details=details(tables_run_id=tables_run),
        slices=[SliceRates("form", "GAP", 2, 2, 0.5, 0.5)],
        created_at=datetime.now(UTC) - timedelta(days=40),
    )
    return open_store(store).save_run(record).id


def _table_files(root: Path, tables_run: str) -> list[Path]:
    """The Dagster assets' hive layout: one file per table of the run's partition."""
    files = []
    for table in ("retriever_rankings", "question_hits"):
        folder = root / table / "set=a" / "retriever=m"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"20261001T020000000000Z_{tables_run}.parquet"
        path.write_bytes(b"PAR1")
        files.append(path)
    return files


def _purge(*extra: str) -> str:
    result = CliRunner().invoke(main, ["purge", "--older-than", "30d", *extra])
    assert result.exit_code == ExitCode.OK, result.output
    return result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("found_by", ["--config", "GOLDENEVAL_CONFIG", "working directory"])
def test_purge_deletes_the_table_files_below_the_suites_tables_root(
    found_by: str, folders: Folders, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not below ./.goldeneval/tables of the working directory: a same-named file there stays."""
    suite_store = StoreLocation(path=folders.project / "state" / "results.duckdb")
    _old_run(suite_store, "dg-old")
    suite_files = _table_files(folders.project / "state" / "tables", "dg-old")
    extra: list[str] = []
    if found_by == "--config":
        extra = ["--config", str(folders.suite)]
    elif found_by == "GOLDENEVAL_CONFIG":
        monkeypatch.setenv("GOLDENEVAL_CONFIG", str(folders.suite))
    else:
        monkeypatch.chdir(folders.project)
    decoys = _table_files(Path.cwd() / ".goldeneval" / "tables", "dg-old")

    output = _purge(*extra)

    assert output.splitlines()[0] == "Deleted 1 run(s) and 2 Parquet table file(s)."
    assert [f for f in suite_files if f.exists()] == []
    assert all(f.exists() for f in decoys)
    assert open_store(suite_store).list_runs() == []
    assert not (Path.cwd() / ".goldeneval" / "results.duckdb").exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("winner", ["flag", "environment", "suite"])
def test_purge_takes_the_tables_root_from_the_flag_then_the_environment_then_the_suite(
    winner: str, folders: Folders, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = folders.elsewhere / "results.duckdb"
    _old_run(StoreLocation(path=store), "dg-old")
    roots = {
        "flag": folders.elsewhere / "flag-tables",
        "environment": folders.elsewhere / "env-tables",
        "suite": folders.project / "state" / "tables",
    }
    files = {name: _table_files(root, "dg-old") for name, root in roots.items()}
    extra = ["--store", str(store), "--config", str(folders.suite)]
    if winner == "flag":
        extra += ["--tables-root", str(roots["flag"])]
    if winner in ("flag", "environment"):
        monkeypatch.setenv(TABLES.env, str(roots["environment"]))

    assert _purge(*extra).splitlines()[0] == "Deleted 1 run(s) and 2 Parquet table file(s)."
    assert {name: [f.exists() for f in paths] for name, paths in files.items()} == {
        name: [name != winner] * 2 for name in roots
    }


# --------------------------------------------------------------------------- the Dagster door


def _dagster_project(root: Path, storage: Mapping[str, str] | None = STORAGE) -> Path:
    project = write_project(root, sets={"alpha-set": SETS["alpha-set"]})
    config = yaml.safe_load(project.config.read_text())
    if storage is not None:
        config["storage"] = dict(storage)
    project.config.write_text(yaml.safe_dump(config, sort_keys=False))
    return project.config


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_dagster_resources_resolve_storage_environment_then_suite_then_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _dagster_project(tmp_path / "project")
    resource = (build_definitions(config).resources or {})["goldeneval"]
    suite = resource.suite()
    root = config.parent
    assert resource.open_store().location == StoreLocation(path=root / "state" / "results.duckdb")
    assert (suite.tables_root, suite.cache_dir) == (root / "state" / "tables", root / "state" / "cache")
    assert suite.run_spec("alpha-set", "lexical").cache_dir == root / "state" / "cache"

    env = tmp_path / "env"
    monkeypatch.setenv(STORE.env, str(env / "results.duckdb"))
    monkeypatch.setenv(TABLES.env, str(env / "tables"))
    monkeypatch.setenv(CACHE.env, str(env / "cache"))
    assert resource.open_store().location == StoreLocation(path=env / "results.duckdb")
    assert (suite.tables_root, suite.cache_dir) == (env / "tables", env / "cache")
    assert suite.run_spec("alpha-set", "lexical").cache_dir == env / "cache"

    for name in (STORE.env, TABLES.env, CACHE.env):
        monkeypatch.delenv(name)
    plain = load_suite(_dagster_project(tmp_path / "plain", storage=None))
    assert (plain.store_location, plain.tables_root, plain.cache_dir) == (
        StoreLocation(path=plain.folder / ".goldeneval" / "results.duckdb"),
        plain.folder / ".goldeneval" / "tables",
        plain.folder / ".goldeneval" / "cache",
    )


def test_a_postgres_url_in_the_environment_is_the_dagster_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = "postgresql://goldeneval:s3cret@db.internal:5432/goldeneval"
    monkeypatch.setenv(STORE.env, url)
    suite = load_suite(_dagster_project(tmp_path / "project"))
    assert suite.store_location == StoreLocation(url=url)
    assert "s3cret" not in str(suite.store_location)


@dataclass
class MainRun:
    project: Path
    env: Path
    result: subprocess.CompletedProcess[str]


@pytest.fixture(scope="module")
def main_with_environment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MainRun]:
    """``python -m pipelines.main`` on a suite whose storage: says state/..., with the three
    variables naming other folders, as docs/deployment.md tells operators to set them."""
    root = tmp_path_factory.mktemp("storage-main")
    config = _dagster_project(root / "project")
    env = root / "env"
    variables = {
        "DAGSTER_HOME": str(root / "dagster_home"),
        "GOLDENEVAL_CONFIG": str(config),
        STORE.env: str(env / "results.duckdb"),
        TABLES.env: str(env / "tables"),
        CACHE.env: str(env / "cache"),
        "PYTHONPATH": os.pathsep.join([str(config.parent), os.environ.get("PYTHONPATH", "")]),
    }
    clean = {k: v for k, v in os.environ.items() if not k.startswith("GOLDENEVAL_")}
    result = subprocess.run(
        [sys.executable, "-m", "pipelines.main"],
        cwd=PROJECT_DIR,
        env={**clean, **variables},
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    yield MainRun(config.parent, env, result)


@pytest.mark.slow
def test_pipelines_main_honours_the_storage_variables(main_with_environment: MainRun) -> None:
    run = main_with_environment
    assert run.result.returncode == 0, run.result.stderr[-3000:]
    stored = open_store(StoreLocation(path=run.env / "results.duckdb")).list_runs()
    assert sorted(r.model for r in stored) == ["fixed", "lexical"]
    tables = sorted(p.relative_to(run.env / "tables").parts[0] for p in (run.env / "tables").rglob("*.parquet"))
    assert {"golden_question_sets", "retriever_rankings", "question_hits"} <= set(tables)
    assert _written(run.env / "cache" / "lexical")
    assert not (run.project / "state").exists() and not (run.project / ".goldeneval").exists()
    lines = run.result.stdout.splitlines()
    assert f"Result store:    {run.env / 'results.duckdb'}" in lines
    assert any(line.startswith(f"Parquet tables:  {run.env / 'tables'}  ") for line in lines)
    assert f"Index cache:     {run.env / 'cache'}" in lines
    assert any(line.startswith(f"HTML reports:    {run.env / 'tables' / 'reports'}  ") for line in lines)


@pytest.mark.slow
def test_the_cli_reads_the_runs_the_nightly_job_wrote_under_the_same_variables(
    main_with_environment: MainRun, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = main_with_environment
    assert run.result.returncode == 0, run.result.stderr[-3000:]
    monkeypatch.setenv(STORE.env, str(run.env / "results.duckdb"))
    result = CliRunner().invoke(main, ["runs", "--format", "json"])
    assert result.exit_code == ExitCode.OK, result.output
    assert sorted(entry["retriever"] for entry in json.loads(result.stdout)) == ["fixed", "lexical"]


@pytest.mark.parametrize(("store", "kind"), [(None, "duckdb"), ("postgresql://ci@db.internal/goldeneval", "postgres")])
def test_the_summary_assets_name_the_store_the_suite_writes_to(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, store: str | None, kind: str
) -> None:
    """The UI shows an asset's kinds and description: a PostgreSQL store is not labelled DuckDB."""
    if store is not None:
        monkeypatch.setenv(STORE.env, store)
    defs = build_definitions(_dagster_project(tmp_path / "project"))
    summary = defs.resolve_assets_def("evaluation_summary")
    spec = next(iter(summary.specs))
    assert spec.kinds == {kind}
    assert "DuckDB" not in (spec.description or "")
