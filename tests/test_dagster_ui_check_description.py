"""The ``no_regression`` check's description as a person sees it in the Dagster UI.

Two nights of the bundled sample (the second one worse, ``tests.test_dagster_check_description``)
are materialised in process into a Dagster instance on disk; dagster-webserver then serves that
instance on 127.0.0.1, and headless Chromium opens the check's page (the asset's Checks tab).
The description renders as Markdown there: the verdict, then the newly failing questions as a
list with their text and what came back instead, then the HTML report's path.  A screenshot is
left under the test's folder.
"""

from __future__ import annotations

import contextlib
import importlib
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
from collections.abc import Iterator
from pathlib import Path

import dagster as dg
import pytest

from pipelines.config import PROJECT_DIR
from pipelines.main import INSTANCE_TEMPLATE
from tests.chromium import Page, headless_chromium, require_chromium
from tests.test_dagster_check_description import (
    FIRST_TEXT,
    NOW_TOP,
    sample_rankings,
    two_nights,
    write_sample_project,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow]

BIN = Path(sys.executable).parent
LOCATION = "{ workspaceOrError { ... on Workspace { locationEntries { locationOrLoadError { __typename } } } } }"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _loaded(url: str) -> bool:
    body = json.dumps({"query": LOCATION}).encode()
    request = urllib.request.Request(f"{url}/graphql", data=body, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            document = json.loads(response.read())
    except (urllib.error.URLError, ConnectionError):
        return False
    entries = document.get("data", {}).get("workspaceOrError", {}).get("locationEntries") or []
    kind = entries[0]["locationOrLoadError"] if entries else None
    assert not kind or kind["__typename"] != "PythonError", kind
    return bool(kind)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """End the webserver and every process it started (its own process group)."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGTERM)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=20)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=20)


@pytest.fixture(scope="module")
def webserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The UI's address, serving an instance that holds two nights of the sample."""
    require_chromium()
    tmp = tmp_path_factory.mktemp("ui-check")
    good, worse, _ = sample_rankings()
    project = write_sample_project(tmp / "project", "full", good)
    home = tmp / "dagster_home"
    home.mkdir()
    shutil.copyfile(INSTANCE_TEMPLATE, home / "dagster.yaml")
    with pytest.MonkeyPatch.context() as patch:
        patch.syspath_prepend(str(project.root))
        importlib.invalidate_caches()
        with dg.DagsterInstance.from_config(str(home)) as instance:
            two_nights(project, instance, worse)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "DAGSTER_HOME": str(home),
        "GOLDENEVAL_CONFIG": str(project.config),
        "PYTHONPATH": os.pathsep.join([str(project.root), os.environ.get("PYTHONPATH", "")]),
    }
    log = tmp / "webserver.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", str(port), "-w", "workspace.yaml"],
            cwd=PROJECT_DIR,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + 120
        while not _loaded(url):
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"the webserver did not load the code location:\n{log.read_text()[-3000:]}")
            time.sleep(1.0)
        yield url, tmp
    finally:
        _stop(process)


@pytest.fixture(scope="module")
def browser(webserver: tuple[str, Path]) -> Iterator[Page]:
    with headless_chromium(webserver[1] / "chromium") as page:
        yield page


LISTED = """(() => [...document.querySelectorAll('li')]
  .filter(li => li.innerText.includes(%s) && li.getBoundingClientRect().height > 0).length)()"""


def test_the_checks_tab_shows_the_newly_failing_question_and_what_came_back(
    webserver: tuple[str, Path], browser: Page
) -> None:
    url, tmp = webserver
    browser.open(f"{url}/assets/regression_check?view=checks")
    browser.dismiss("Skip")  # Dagster's one-time community dialog
    text = browser.wait_for_text(
        "no_regression",
        "Latest execution",
        "regression: top-1 hit rate fell",
        "Newly failing against run",
        FIRST_TEXT,
        NOW_TOP,
        "HTML report:",
        timeout_s=90,
    )
    assert "... and 7 more" in text
    # rendered as Markdown: each newly failing question is a list item on the page
    listed = browser.call("Runtime.evaluate", expression=LISTED % json.dumps(FIRST_TEXT))
    assert listed["result"]["value"] == 1
    assert browser.screenshot(tmp / "no-regression-check.png").stat().st_size > 10_000
