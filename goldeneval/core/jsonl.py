"""Line-by-line JSONL reading with errors that name the file and the line."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

__all__ = ["iter_jsonl"]


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
