"""The code location loads as `dagster dev` and `dg dev` load it: validated by both CLIs, and
both dev servers show the asset graph."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from goldeneval.suite import load_suite
from pipelines.config import PROJECT_DIR
from pipelines.main import INSTANCE_TEMPLATE

BIN = Path(sys.executable).parent


def _run(home: Path, *command: str) -> subprocess.CompletedProcess[str]:
    shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
    env = {**os.environ, "VIRTUAL_ENV": str(BIN.parent), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env["DAGSTER_HOME"] = str(home)
    env.pop("GOLDENEVAL_CONFIG", None)
    return subprocess.run(
        [str(BIN / command[0]), *command[1:]],
        cwd=PROJECT_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


@pytest.mark.slow
def test_dagster_definitions_validate_passes_on_the_workspace(tmp_path: Path) -> None:
    result = _run(tmp_path, "dagster", "definitions", "validate", "-w", "workspace.yaml")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "All code locations passed validation." in result.stdout + result.stderr


@pytest.mark.slow
def test_dg_check_defs_passes_on_the_project(tmp_path: Path) -> None:
    result = _run(tmp_path, "dg", "check", "defs")
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    assert "All definitions loaded successfully." in result.stdout + result.stderr


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _asset_keys(url: str) -> list[str] | None:
    body = json.dumps({"query": "{ assetNodes { assetKey { path } } }"}).encode()
    request = urllib.request.Request(f"{url}/graphql", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            nodes = json.loads(response.read())["data"]["assetNodes"]
    except (urllib.error.URLError, ConnectionError, KeyError, TypeError):
        return None
    return sorted("/".join(node["assetKey"]["path"]) for node in nodes) or None


@pytest.mark.slow
@pytest.mark.parametrize(
    "command",
    [["dagster", "dev", "-w", "workspace.yaml"], ["dg", "dev"]],
    ids=["dagster-dev", "dg-dev"],
)
def test_the_dev_server_shows_the_asset_graph(command: list[str], tmp_path: Path) -> None:
    port = _free_port()
    env = {**os.environ, "VIRTUAL_ENV": str(BIN.parent), "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    env |= {"DAGSTER_HOME": str(tmp_path)}
    shutil.copyfile(INSTANCE_TEMPLATE, tmp_path / "dagster.yaml")  # no telemetry, the store pool
    env.pop("GOLDENEVAL_CONFIG", None)
    with (tmp_path / "dev.log").open("wb") as log:
        process = subprocess.Popen(
            [str(BIN / command[0]), *command[1:], "--host", "127.0.0.1", "--port", str(port)],
            cwd=PROJECT_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        keys = None
        while keys is None and time.monotonic() < deadline and process.poll() is None:
            time.sleep(1)
            keys = _asset_keys(f"http://127.0.0.1:{port}")
        suite = load_suite(PROJECT_DIR / "goldeneval.yaml")
        observed = [f"nightly/{s}" for s in suite.retrieval_cells.set_ids]  # assets.series: plotted per series
        observed += [f"series/{s}/{r}" for s in suite.retrieval_cells.set_ids for r in suite.retrieval_cells.series]
        observed += [f"prompt_nightly/{s}" for s in suite.prompt_cells.set_ids]
        observed += [f"prompt_series/{s}/{m}" for s in suite.prompt_cells.set_ids for m in suite.prompt_cells.series]
        assert keys == sorted(
            [
                "evaluation_summary",
                "golden_prompt_sets",
                "golden_question_sets",
                "model_responses",
                "prompt_gradings",
                "prompt_regression_check",
                "prompt_summary",
                "question_hits",
                "regression_check",
                "retriever_rankings",
                *observed,
            ]
        ), (tmp_path / "dev.log").read_text(errors="replace")[-3000:]
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # whatever of the group is left, the leader included
        process.wait(timeout=30)
