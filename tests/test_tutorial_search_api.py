"""docs/guide/tutorial-search-api.md, followed word for word: its fenced blocks are parsed
and run in a fresh folder against a real search service (tests/search_server.py) that stands
in for the tutorial's ``http://127.0.0.1:8080``.

* a ``yaml title="FILE"`` block is written to FILE;
* every ``bash`` block runs, in order, in one shell (``set -eu``: a failing command fails the
  test), with the project's ``goldeneval`` first on PATH;
* a ``text`` block after a ``bash`` block lists lines that block must print;
* each line of a ``json`` block is a response the default contract must read ids from.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from goldeneval.retrieval.retrievers.http import default_ids
from tests.search_server import search_server

TUTORIAL = Path(__file__).resolve().parents[1] / "docs" / "guide" / "tutorial-search-api.md"
STAND_IN = "127.0.0.1:8080"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)
TITLE = re.compile(r'title="([^"]+)"')
MARKER = "::tutorial block {}::"


@dataclass(frozen=True)
class Block:
    language: str
    title: str | None
    text: str


def blocks() -> list[Block]:
    found = []
    for language, info, text in FENCE.findall(TUTORIAL.read_text(encoding="utf-8")):
        title = TITLE.search(info)
        found.append(Block(language, title.group(1) if title else None, text))
    return found


def test_the_tutorial_has_the_blocks_its_test_runs() -> None:
    languages = [block.language for block in blocks()]
    assert languages.count("bash") >= 4
    assert [block.title for block in blocks() if block.language == "yaml"] == ["golden.yaml"]
    assert STAND_IN in TUTORIAL.read_text(encoding="utf-8")


def test_every_response_the_tutorial_shows_is_read_by_the_default_contract() -> None:
    lines = [line for block in blocks() if block.language == "json" for line in block.text.splitlines()]
    assert len(lines) == 4
    for line in lines:
        assert default_ids(json.loads(line), "id") == ["fares/day-ticket", "fares/fare-table-2026"]


@pytest.mark.slow
def test_the_tutorial_runs_word_for_word_against_a_search_service(tmp_path: Path) -> None:
    script = ["set -eu", "exec 2>&1"]
    expected: dict[int, list[str]] = {}
    bash_blocks = 0
    with search_server() as server:
        address = server.base_url.removeprefix("http://")
        for block in blocks():
            text = block.text.replace(STAND_IN, address)
            if block.language == "yaml" and block.title:
                (tmp_path / block.title).write_text(text, encoding="utf-8")
            elif block.language == "bash":
                bash_blocks += 1
                script += [f"echo '{MARKER.format(bash_blocks)}'", text]
            elif block.language == "text" and bash_blocks:
                expected.setdefault(bash_blocks, []).extend(line for line in text.splitlines() if line.strip())
        env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
        done = subprocess.run(
            ["bash", "-c", "\n".join(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        authorizations = {request.headers.get("Authorization") for request in server.requests}
    assert done.returncode == 0, done.stdout[-3000:]
    outputs = re.split(r"^::tutorial block (\d+)::$", done.stdout, flags=re.MULTILINE)
    printed = {int(number): output.splitlines() for number, output in zip(outputs[1::2], outputs[2::2], strict=True)}
    assert sorted(printed) == list(range(1, bash_blocks + 1))
    for number, lines in expected.items():
        missing = [line for line in lines if line not in printed[number]]
        assert missing == [], f"bash block {number} did not print these lines:\n{printed[number]}"
    assert "Bearer demo-token-for-the-tutorial" in authorizations  # the header of step 6 was sent
    assert "demo-token-for-the-tutorial" not in done.stdout.replace("export SEARCH_TOKEN=", "")
    assert (tmp_path / "results.duckdb").is_file()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_stand_in_the_tutorial_names_can_be_started_by_hand(tmp_path: Path) -> None:
    """The page says how to start the stand-in (``python -m tests.search_server --port 8080``)."""

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.search_server", "--port", str(port)],
        cwd=Path(__file__).resolve().parents[1],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        assert f"http://127.0.0.1:{port}/search" in process.stdout.readline()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/search",
            data=json.dumps({"question": "day ticket zones A and B", "limit": 3}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            assert len(json.loads(response.read())["results"]) == 3
    finally:
        process.terminate()
        process.wait(10)


def dialect_rows() -> dict[str, list[str]]:
    """Step 6's table rows that name a URL: the row's first cell, and its ``KEY=VALUE`` options."""
    text = TUTORIAL.read_text(encoding="utf-8")
    step = text[text.index("## 6. ") :].split("\n## ")[0]
    rows = {}
    for line in step.splitlines():
        cells = line.split(" | ")
        if line.startswith("| ") and "`url=" in line:
            rows[cells[0].removeprefix("| ")] = re.findall(r"`([a-z_]+=[^`]+)`", cells[1])
    return rows


def test_step_6_names_the_three_dialects_its_stand_in_speaks() -> None:
    assert [options[0].partition("=")[0] for options in dialect_rows().values()] == ["url", "url", "url"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_every_dialect_row_of_step_6_finds_what_the_default_contract_finds(tmp_path: Path) -> None:
    """Each row's options, as written, against the stand-in (its address in place of the row's
    host and port): the page says the stand-in speaks every dialect of step 6."""
    from click.testing import CliRunner

    from goldeneval.cli import main

    def documents(store: Path, options: list[str]) -> dict[str, list[str]]:
        args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.http", "--store", str(store)]
        for option in options:
            args += ["--option", option]
        result = CliRunner().invoke(main, [*args, "--no-progress", "--format", "json"])
        assert result.exit_code == 0, result.output
        document = json.loads(result.stdout)
        assert document["run"]["status"] == "complete", result.output
        return {question["id"]: question["documents"] for question in document["questions"]}

    with search_server() as server:
        address = server.base_url.removeprefix("http://")
        default = documents(tmp_path / "default.duckdb", [f"url={server.url()}"])
        for name, options in dialect_rows().items():
            written = [re.sub(r"127\.0\.0\.1:\d+", address, option) for option in options]
            asked = len(server.requests)
            assert documents(tmp_path / "dialect.duckdb", written) == default, name
            sent = server.requests[asked]  # the stand-in answers the default contract too: see what was sent
            if "body=" in " ".join(options):  # Elasticsearch's own query, with the limit as its size
                assert sent.method == "POST" and set(sent.body) == {"query", "size"}, sent
            elif "method=GET" in options:  # Solr: the question in q, the limit in rows
                assert sent.method == "GET" and {"q", "rows"} <= set(sent.query), sent
            else:
                assert sent.method == "POST" and set(sent.body) == {"question", "limit"}, sent
