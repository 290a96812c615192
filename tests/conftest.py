"""Shared fixtures: a clean goldeneval environment, set-file writers and the SciFact data."""

from __future__ import annotations

import json
import os
import textwrap
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.store import StoreLocation
from tests.postgres_cluster import PostgresCluster, find_server_binaries, start_cluster

GOLDENEVAL_ENV_PREFIX = "GOLDENEVAL_"
"""Every variable goldeneval reads starts so; a test starts with none of them set."""
SCIFACT_DIR = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"

WriteSet = Callable[..., Path]
"""``write_set(name, content, *, jsonl_header=True) -> Path``; see the fixture."""


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--unmarked-slow-limit",
        type=float,
        default=None,
        metavar="CPU_SECONDS",
        help="fail the run, naming them, when tests not marked slow or e2e took over CPU_SECONDS of "
        "processor time (their process and the child processes they waited for; setup, call and "
        "teardown together): the fast lane's limit, see docs/testing.md",
    )
    parser.addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="list the N tests that took the most processor time (0: all), as --durations does for wall time",
    )


CPU_PROPERTY = "goldeneval_cpu_s"
"""The user property each test report carries: the processor time of its test so far."""
_CPU_START = pytest.StashKey[float]()


def _cpu_now() -> float:
    """Processor time of this process (all its threads) and of the child processes it has waited for."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    item.stash[_CPU_START] = _cpu_now()
    return (yield)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    report: pytest.TestReport = yield
    if _CPU_START in item.stash:  # the processor time so far: the teardown report's is the test's
        report.user_properties.append((CPU_PROPERTY, _cpu_now() - item.stash[_CPU_START]))
    return report


class _UnmarkedSlowTests:
    """Keeps each test's processor time (setup, call and teardown); fails the run when a test not
    marked slow or e2e is over the limit.  Processor time, not wall time, so that a loaded
    machine (other jobs, the other xdist workers) does not make a fast test look slow; it runs
    in the xdist controller, which gets the workers' reports with their user properties and
    marker names (keywords)."""

    def __init__(self, limit_s: float | None, listed: int | None) -> None:
        self.limit_s = limit_s
        self.listed = listed
        self.cpu_s: dict[str, float] = {}
        self.wall_s: dict[str, float] = {}
        self.marked: set[str] = set()

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name == CPU_PROPERTY and isinstance(value, float):
                self.cpu_s[report.nodeid] = max(self.cpu_s.get(report.nodeid, 0.0), float(value))
        self.wall_s[report.nodeid] = self.wall_s.get(report.nodeid, 0.0) + report.duration
        if "slow" in report.keywords or "e2e" in report.keywords:
            self.marked.add(report.nodeid)

    def over(self) -> list[tuple[float, str]]:
        if self.limit_s is None:
            return []
        over = [(s, nodeid) for nodeid, s in self.cpu_s.items() if s > self.limit_s and nodeid not in self.marked]
        return sorted(over, reverse=True)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if self.over() and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        if self.listed is not None:
            most = sorted(((s, nodeid) for nodeid, s in self.cpu_s.items()), reverse=True)
            terminalreporter.write_sep("=", f"processor time of the {len(most[: self.listed or None])} busiest tests")
            for seconds, nodeid in most[: self.listed or None]:
                wall = self.wall_s.get(nodeid, 0.0)
                terminalreporter.write_line(f"{seconds:.2f}s cpu {wall:.2f}s wall {nodeid}")
            total = sum(self.cpu_s.values())
            terminalreporter.write_line(f"{total:.1f}s cpu in all tests, {len(self.cpu_s)} tests")
        over = self.over()
        if not over:
            return
        tests = "1 test" if len(over) == 1 else f"{len(over)} tests"
        terminalreporter.write_sep(
            "=", f"FAILED: {tests} not marked slow took over {self.limit_s:g} s of processor time", red=True
        )
        for seconds, nodeid in over:
            terminalreporter.write_line(f"{seconds:.2f}s cpu {self.wall_s.get(nodeid, 0.0):.2f}s wall {nodeid}")
        terminalreporter.write_line(
            "mark each @pytest.mark.slow (the full run still runs it; the fast lane skips it) or make it "
            "cheaper; docs/testing.md"
        )


def pytest_configure(config: pytest.Config) -> None:
    limit_s = config.getoption("unmarked_slow_limit")
    listed = config.getoption("cpu_durations")
    if (limit_s is not None or listed is not None) and not hasattr(config, "workerinput"):  # the controller
        config.pluginmanager.register(_UnmarkedSlowTests(limit_s, listed), "goldeneval-unmarked-slow-tests")


@pytest.fixture(autouse=True)
def _no_goldeneval_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own GOLDENEVAL_* settings must not leak into any test."""
    for name in [name for name in os.environ if name.startswith(GOLDENEVAL_ENV_PREFIX)]:
        monkeypatch.delenv(name, raising=False)


def _jsonl(content: Mapping[str, Any], *, header: bool) -> str:
    lines = []
    if header:
        lines.append(json.dumps({"set": {k: v for k, v in content.items() if k != "questions"}}))
    lines.extend(json.dumps(question) for question in content["questions"])
    return "\n".join(lines) + "\n"


@pytest.fixture
def write_set(tmp_path: Path) -> WriteSet:
    """Write a golden set file below ``tmp_path`` and return its path.

    ``name`` is a path relative to ``tmp_path``; its suffix picks the format.  ``content`` is
    either the set as data (a mapping, or any value for YAML/JSON) or the raw file as ``str`` /
    ``bytes``, written verbatim.  For ``.jsonl`` a mapping becomes one question per line,
    preceded by a ``{"set": {...}}`` header line unless ``jsonl_header=False``.
    """

    def write(name: str, content: Any, *, jsonl_header: bool = True) -> Path:
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
            return path
        if isinstance(content, str):
            text = content
        elif path.suffix == ".jsonl":
            text = _jsonl(content, header=jsonl_header)
        elif path.suffix == ".json":
            text = json.dumps(content, indent=2)
        else:
            text = yaml.safe_dump(content, sort_keys=False)
        path.write_text(text, encoding="utf-8")
        return path

    return write


@pytest.fixture(scope="session")
def scifact_dir() -> Path:
    """The BEIR SciFact dataset beside the repository: required in CI, optional elsewhere."""
    if SCIFACT_DIR.is_dir():
        return SCIFACT_DIR
    reason = (
        f"../shared/datasets/scifact not found: expected the BEIR SciFact folder (corpus.jsonl, "
        f"queries.jsonl, qrels/test.tsv) at {SCIFACT_DIR}"
    )
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason}; CI must provide it")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[PostgresCluster]:
    """A throwaway PostgreSQL cluster on 127.0.0.1 for the whole session (tests/postgres_cluster.py):
    required in CI (``.ci/run`` installs Debian's postgresql), optional elsewhere."""
    bin_dir = find_server_binaries()
    if bin_dir is None:
        reason = "PostgreSQL server binaries (initdb, pg_ctl) not found: install Debian's postgresql package"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{reason}; CI must provide them (.ci/run installs them)")
        pytest.skip(reason)
    cluster = start_cluster(bin_dir)
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def postgres_url(postgres_cluster: PostgresCluster) -> str:
    """The URL of a new, empty database in the throwaway cluster (one per test)."""
    return postgres_cluster.new_database()


STORE_BACKENDS = ("duckdb", "postgres")


@pytest.fixture(params=STORE_BACKENDS)
def store_location(request: pytest.FixtureRequest, tmp_path: Path) -> StoreLocation:
    """Where a new, empty result store lives, once per backend: a DuckDB file below
    ``tmp_path``, and a fresh database in the throwaway PostgreSQL cluster."""
    if request.param == "duckdb":
        return StoreLocation(path=tmp_path / "results.duckdb")
    return StoreLocation.parse(request.getfixturevalue("postgres_url"))


FIXED_RANKINGS_PLUGIN = textwrap.dedent(
    '''
    import json
    from pathlib import Path

    from goldeneval.core.provenance import Provenance


    class FixedRankings:
        """Answers each question text with the ranking a JSON file gives for it."""

        def __init__(self, rankings, provenance):
            self.rankings = rankings
            self._provenance = provenance

        def retrieve(self, question, limit):
            ranking = self.rankings[question]
            if ranking == "raise":
                raise ConnectionError("backend unreachable")
            return ranking[:limit]

        def provenance(self):
            return self._provenance


    def build(context):
        options = context.options
        provenance = Provenance(
            corpus_revision=options.get("corpus"),
            model_revision=options.get("model", "not_applicable"),
            chunking_identity="not_applicable",
            pipeline_identity="fixed-rankings",
        )
        return FixedRankings(json.loads(Path(options["rankings"]).read_text()), provenance)
    '''
)
FIXED_QUESTIONS: list[dict[str, Any]] = [
    {"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"], "hard_class": "normal"},
    {"id": "q2", "text": "beta", "form": "GAP", "expected": ["b"], "hard_class": "prose-free"},
    {"id": "q3", "text": "gamma", "form": "GAP", "expected": [], "hard_class": None},
]


@dataclass
class CliWorkspace:
    """A folder with a golden set, a retriever plugin importable as ``fixed_rankings_plugin:build``
    (it replays rankings from a JSON file and declares provenance from its options), and a store."""

    root: Path

    @property
    def set_path(self) -> Path:
        return self.root / "set.yaml"

    @property
    def store(self) -> Path:
        return self.root / "results.duckdb"

    def write_set(self, questions: list[dict[str, Any]], set_id: str = "tiny") -> None:
        self.set_path.write_text(yaml.safe_dump({"id": set_id, "questions": questions}))

    def evaluate(
        self, rankings: Mapping[str, object], *extra: str, corpus: str | None = "rev-1", model: str | None = None
    ) -> Result:
        path = self.root / "rankings.json"
        path.write_text(json.dumps(rankings))
        options = [f"rankings={path}"]
        if corpus is not None:
            options.append(f"corpus={corpus}")
        if model is not None:
            options.append(f"model={model}")
        args = ["retrieval", "--set", str(self.set_path), "--retriever", "fixed_rankings_plugin:build"]
        for option in options:
            args += ["--option", option]
        args += ["--store", str(self.store), "--no-progress", *extra]
        return CliRunner().invoke(main, args)


@pytest.fixture
def cli_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> CliWorkspace:
    (tmp_path / "fixed_rankings_plugin.py").write_text(FIXED_RANKINGS_PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    workspace = CliWorkspace(tmp_path)
    workspace.write_set(FIXED_QUESTIONS)
    return workspace
