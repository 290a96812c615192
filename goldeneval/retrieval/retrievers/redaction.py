"""Secrets kept out of what a retriever says: every message hides them before anything is shortened.

A search service may echo what it was sent (an ``Authorization`` header, an ``api_key`` query
parameter) in an error page or a body that is not JSON.  A message quotes such a body cut to a
few dozen characters, and a message is cut again where it is stored; a secret hidden only after
a cut survives minus the characters the cut took.  So :class:`Secrets` hides every secret
first, in every form a service may echo it (as sent, percent-encoded, JSON- or HTML-escaped,
with its whitespace collapsed: :func:`_echoed_forms`), and only then shortens; a secret that straddles a cut edge of the
window it reads (or any ``...`` of a message cut elsewhere) loses its kept prefix too, down to
fewer than :data:`MIN_KEPT` characters.
"""

from __future__ import annotations

import html
import json
import re
import urllib.parse
from collections.abc import Iterable, Mapping
from typing import Any

from goldeneval.core.errors import one_line

__all__ = ["HIDDEN", "MIN_KEPT", "Secrets"]

HIDDEN = "***"
MIN_KEPT = 4
"""A prefix of a secret this long at a cut edge is hidden too (shorter ones say nothing)."""
_CUT_MARK = "..."


def _hex(number: int, digits: int) -> str:
    """``number`` in hex, either case (``2f`` or ``2F``)."""
    return "".join(f"[{d.lower()}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{digits}x}")


def _char_pattern(char: str) -> str:
    """Every way an encoder may write ``char`` of a secret: as it is, JSON-escaped (``\\/``,
    ``\\u002f``), percent-encoded (either case; ``+`` for a space), an HTML entity (named,
    decimal or hex), a space as any run of whitespace.  Letters and digits stand as they are."""
    if char.isalnum() and char.isascii():
        return char
    code = ord(char)
    ways = {re.escape(char), re.escape(json.dumps(char)[1:-1]), re.escape(html.escape(char))}
    ways.add(rf"\\u{_hex(code, 4)}")
    ways.add(rf"&#0*{code};")
    ways.add(rf"&#[xX]0*{_hex(code, 2 if code < 256 else 4)};")
    ways.add("".join(f"%{_hex(byte, 2)}" for byte in char.encode("utf-8")))
    if char == "/":
        ways.add(r"\\/")
    if char.isspace():
        ways.update((r"\s+", r"\+"))
    return "(?:" + "|".join(sorted(ways, key=len, reverse=True)) + ")"


def _echoed_pattern(value: str) -> str:
    """A pattern of ``value`` in any mix of the encodings of :func:`_char_pattern`, character
    by character (a service that escapes only ``/``, or only some characters, is caught too)."""
    return "".join(_char_pattern(char) for char in value)


def _echoed_forms(value: str) -> set[str]:
    """Literal forms of ``value`` (their prefixes find a secret cut at an edge): as sent,
    percent-encoded, JSON-escaped, Python's repr, its whitespace collapsed."""
    return {
        value,
        urllib.parse.quote(value, safe=""),
        urllib.parse.quote_plus(value),
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        json.dumps(value)[1:-1].replace("/", "\\/"),
        repr(value)[1:-1],
        " ".join(value.split()),
    }


class Secrets:
    """The secrets one retriever read from the environment, and the one way to quote around them."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        patterns: list[str] = []
        values_seen = sorted({value for value in values if value}, key=len, reverse=True)
        for value in values_seen:
            forms.update(_echoed_forms(value))
            patterns.append(_echoed_pattern(value))
        forms.discard("")
        self._forms = tuple(sorted(forms, key=len, reverse=True))
        literal = [re.escape(form) for form in self._forms]
        self._pattern = re.compile("|".join([*patterns, *literal])) if self._forms else None
        # the longest echo: a literal form, or every character an entity such as ``&#x2f;``
        self._longest = max((len(self._forms[0]), 8 * max(map(len, values_seen), default=0))) if self._forms else 0

    def __bool__(self) -> bool:
        return self._pattern is not None

    def hide(self, text: str) -> str:
        """``text`` with every secret hidden, and any prefix of one left before a cut mark or at
        the end (where something cut it before it came here)."""
        if self._pattern is None:
            return text
        text = self._pattern.sub(HIDDEN, text)
        edges = [match.start() for match in re.finditer(re.escape(_CUT_MARK), text)]
        for edge in sorted({*edges, len(text)}, reverse=True):
            text = self._hide_dangling(text, edge)
        return text

    def quote(self, raw: bytes | str, width: int) -> str:
        """What a server sent, on one line of at most ``width`` characters, secrets hidden first."""
        window = 4 * (width + self._longest) + 64  # characters enough for ``width`` after a secret is hidden
        if isinstance(raw, bytes):
            text = raw[:window].decode("utf-8", "replace")
            cut = len(raw) > window
        else:
            text, cut = raw[:window], len(raw) > window
        if self._pattern is not None:
            text = self._pattern.sub(HIDDEN, text)
            if cut:  # a secret may straddle the window's end
                text = self._hide_dangling(text, len(text))
        return self.hide(one_line(text, width))

    def hide_in(self, document: Any) -> Any:
        """A JSON document with every secret hidden in its strings and keys (to describe it)."""
        if self._pattern is None:
            return document
        if isinstance(document, str):
            return self.hide(document)
        if isinstance(document, list):
            return [self.hide_in(item) for item in document]
        if isinstance(document, Mapping):
            return {self.hide(str(key)): self.hide_in(value) for key, value in document.items()}
        return document

    def _hide_dangling(self, text: str, edge: int) -> str:
        """``text`` with the longest prefix of a secret (``MIN_KEPT`` characters or more) that
        ends at ``edge`` hidden."""
        head = text[:edge]
        kept = 0
        for form in self._forms:
            for size in range(min(len(form) - 1, len(head)), max(MIN_KEPT, kept + 1) - 1, -1):
                if head.endswith(form[:size]):
                    kept = size
                    break
        return head[:-kept] + HIDDEN + text[edge:] if kept else text
