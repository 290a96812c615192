"""Line-by-line JSONL reading with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["DuplicateKeyError", "iter_jsonl", "unique_keys"]


class DuplicateKeyError(Exception):
    """A JSON object names one key twice (raised by :func:`unique_keys`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A ``json.loads`` ``object_pairs_hook``: the object as a dict, refusing a key given twice.

    ``json.loads`` keeps the last value silently and other readers may keep the first, so a
    file with a repeated key means different things to different tools; YAML files are
    refused for it too (goldeneval.core.yaml_errors)."""
    found = dict(pairs)
    if len(found) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise DuplicateKeyError(key)
            seen.add(key)
    return found


def iter_jsonl(path: Path, error: Callable[[str], Exception]) -> Iterator[tuple[int, Any]]:
    """Yield ``(line number, decoded object)`` for every non-blank line.

    ``error`` turns a problem description into the exception to raise, so corpus and
    golden-set readers each raise their own error type with the same wording.
    """
    try:
        handle = path.open("rb")
    except OSError as exc:
        raise error(f"cannot read: {exc.strerror}") from None
    with handle:
        for lineno, raw in enumerate(handle, start=1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise error(f"line {lineno}: not valid UTF-8 (byte {exc.start + 1} of the line)") from None
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line)
            except json.JSONDecodeError as exc:
                raise error(f"line {lineno}: malformed JSON: {exc.msg}") from None
