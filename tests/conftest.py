"""Shared fixtures: a clean goldeneval environment, set-file writers and the SciFact data."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

GOLDENEVAL_ENV_VARS = ("GOLDENEVAL_SETS_PATH", "GOLDENEVAL_STORE", "GOLDENEVAL_CACHE")
SCIFACT_DIR = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "scifact"

WriteSet = Callable[..., Path]
"""``write_set(name, content, *, jsonl_header=True) -> Path``; see the fixture."""


@pytest.fixture(autouse=True)
def _no_goldeneval_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A developer's own GOLDENEVAL_* settings must not leak into any test."""
    for name in GOLDENEVAL_ENV_VARS:
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
