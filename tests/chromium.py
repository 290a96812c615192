"""Headless Chromium driven over the DevTools protocol: open a page, wait for text, screenshot.

Debian's ``chromium`` started with --headless --no-sandbox --disable-gpu
--disable-background-networking, bound to 127.0.0.1; every wait is bounded and the browser
is killed when the context manager exits.
"""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import os
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection, connect

CHROMIUM = "/usr/bin/chromium"


def require_chromium() -> None:
    """Skip the calling test when Chromium is missing; under CI (``CI=true``) fail instead:
    ``.ci/run`` installs it, so a missing browser there is a broken set-up, not a skip."""
    if chromium_path() is None:
        reason = "chromium not installed (.ci/run installs Debian's chromium)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)


def chromium_path() -> str | None:
    return CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


class Page:
    """One browser tab."""

    def __init__(self, socket: ClientConnection) -> None:
        self._socket = socket
        self._ids = itertools.count(1)
        self.events: list[dict[str, Any]] = []
        """The DevTools events read while waiting for replies (``Network.enable`` makes them
        hold every request the page made)."""

    def call(self, method: str, **params: Any) -> dict[str, Any]:
        message_id = next(self._ids)
        self._socket.send(json.dumps({"id": message_id, "method": method, "params": params}))
        while True:
            reply = json.loads(self._socket.recv(timeout=60))
            if reply.get("id") == message_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                result: dict[str, Any] = reply.get("result", {})
                return result
            if "method" in reply:
                self.events.append(reply)

    def open(self, url: str) -> None:
        self.call("Page.navigate", url=url)

    def text(self) -> str:
        result = self.call("Runtime.evaluate", expression="document.body ? document.body.innerText : ''")
        return str(result.get("result", {}).get("value", ""))

    def wait_for_text(self, *needles: str, timeout_s: float = 60.0) -> str:
        """The page text once it holds every needle; fails with what it showed instead."""
        deadline = time.monotonic() + timeout_s
        text = ""
        while time.monotonic() < deadline:
            text = self.text()
            if all(needle in text for needle in needles):
                return text
            time.sleep(0.5)
        missing = [n for n in needles if n not in text]
        raise AssertionError(f"page never showed {missing} within {timeout_s:g} s; it showed:\n{text[:2000]}")

    def dismiss(self, label: str, timeout_s: float = 5.0) -> bool:
        """Click the button labelled ``label`` if one shows up within ``timeout_s``."""
        script = (
            "(() => { const b = [...document.querySelectorAll('button')]"
            f".find(e => e.innerText.trim() === {json.dumps(label)});"
            " if (b) { b.click(); return true; } return false; })()"
        )
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.call("Runtime.evaluate", expression=script).get("result", {}).get("value"):
                return True
            time.sleep(0.5)
        return False

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png")["data"]
        path.write_bytes(base64.b64decode(data))
        return path


@contextmanager
def headless_chromium(profile: Path, width: int = 1600, height: int = 1000) -> Iterator[Page]:
    binary = chromium_path()
    if binary is None:
        raise RuntimeError("chromium not found: install Debian's chromium package (.ci/run does)")
    profile.mkdir(parents=True, exist_ok=True)
    port_file = profile / "DevToolsActivePort"
    port_file.unlink(missing_ok=True)  # a stale one from an earlier browser would mislead us
    command = [
        binary,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-dev-shm-usage",
        "--no-first-run",
        "--remote-debugging-address=127.0.0.1",
        "--remote-debugging-port=0",
        f"--user-data-dir={profile}",
        f"--window-size={width},{height}",
        "about:blank",
    ]
    log = (profile / "chromium.log").open("wb")
    process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not (port_file.exists() and port_file.read_text().strip()):
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"chromium did not start; see {profile / 'chromium.log'}")
            time.sleep(0.2)
        port = int(port_file.read_text().split()[0])
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as response:
            targets = json.loads(response.read())
        page_target = next(t for t in targets if t.get("type") == "page")
        with connect(page_target["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024, open_timeout=30) as socket:
            page = Page(socket)
            page.call("Page.enable")
            page.call(
                "Emulation.setDeviceMetricsOverride",
                width=width,
                height=height,
                deviceScaleFactor=1,
                mobile=False,
            )
            yield page
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)  # chromium and the helpers it started
        process.wait(timeout=30)
        log.close()
