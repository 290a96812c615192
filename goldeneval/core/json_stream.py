"""``--format json`` written as it is produced: a 100,000-question run is never one string.

``json.dumps(document, indent=2)`` of a large run first builds every question as a Python
object, then the whole text (hundreds of MB), then prints it.  :func:`write_json` writes a
top-level object key by key instead; a value that is an *iterator* (``questions``, produced
one record at a time from the run's columns) is written one element per line, each element
compact (``json``'s C encoder: indentation would switch it to the pure-Python one).  Every
other value is written as ``json.dumps(value, indent=2)`` would write it at that depth, so a
document without iterators is printed byte for byte as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

__all__ = ["write_json"]

_INDENT = "  "
_CHUNK = 256
"""Elements of a streamed array written per call of ``write``."""


def _nested(value: Any, depth: int) -> str:
    """``value`` as ``json.dumps(indent=2)`` writes it ``depth`` levels deep."""
    return json.dumps(value, indent=2).replace("\n", "\n" + _INDENT * depth)


def write_json(document: Mapping[str, Any], write: Callable[[str], object]) -> None:
    """Write ``document`` (a JSON object) with ``write``, followed by a newline."""
    if not document:
        write("{}\n")
        return
    write("{")
    for position, (key, value) in enumerate(document.items()):
        write(("," if position else "") + "\n" + _INDENT + json.dumps(key) + ": ")
        if isinstance(value, Iterator):
            _write_array(value, write)
        else:
            write(_nested(value, 1))
    write("\n}\n")


def _write_array(items: Iterator[Any], write: Callable[[str], object]) -> None:
    encode = json.JSONEncoder().encode  # compact separators, C-accelerated
    prefix = "\n" + _INDENT * 2
    chunk: list[str] = []
    written = False
    for item in items:
        chunk.append(prefix + encode(item))
        if len(chunk) == _CHUNK:
            write(("," if written else "[") + ",".join(chunk))
            written, chunk = True, []
    if chunk:
        write(("," if written else "[") + ",".join(chunk))
        written = True
    write("\n" + _INDENT + "]" if written else "[]")
