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
        "--list-unmarked-slow",
        type=float,
        default=None,
        metavar="SECONDS",
        help="after the run, list the tests not marked slow whose setup and call took over SECONDS "
        "(a warning for the fast lane and the before-commit routine: it never fails the run)",
    )


class _UnmarkedSlowTests:
    """Adds up each test's setup and call time; lists those over the limit not marked slow.
    Runs in the xdist controller too: the workers' reports carry the marker names as keywords."""

    def __init__(self, limit_s: float) -> None:
        self.limit_s = limit_s
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when in ("setup", "call") and "slow" not in report.keywords:
            self.seconds[report.nodeid] = self.seconds.get(report.nodeid, 0.0) + report.duration

    def pytest_terminal_summary(self, terminalreporter: pytest.TerminalReporter) -> None:
        over = sorted(((s, nodeid) for nodeid, s in self.seconds.items() if s > self.limit_s), reverse=True)
        if not over:
            return
        tests = "1 test" if len(over) == 1 else f"{len(over)} tests"
        terminalreporter.write_sep("=", f"warning: {tests} not marked slow took over {self.limit_s:g} s", yellow=True)
        for seconds, nodeid in over:
            terminalreporter.write_line(f"{seconds:.2f}s setup+call {nodeid}")
        terminalreporter.write_line("mark each @pytest.mark.slow (CI still runs it; --fast skips it) or make it faster")


def pytest_configure(config: pytest.Config) -> None:
    limit_s = config.getoption("list_unmarked_slow")
    if limit_s is not None and not hasattr(config, "workerinput"):  # the xdist controller, or no xdist
        config.pluginmanager.register(_UnmarkedSlowTests(limit_s), "goldeneval-unmarked-slow-tests")


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
