"""Secrets kept out of what a retriever says: every message hides them before anything is shortened.

A search service may echo what it was sent (an ``Authorization`` header, an ``api_key`` query
parameter) in an error page or a body that is not JSON.  A message quotes such a body cut to a
few dozen characters, and a message is cut again where it is stored; a secret hidden only after
a cut survives minus the characters the cut took.  So :class:`Secrets` hides every secret
first, in every form a service may echo it (as sent, percent-encoded, JSON-escaped, with its
whitespace collapsed), and only then shortens; a secret that straddles a cut edge of the
window it reads (or any ``...`` of a message cut elsewhere) loses its kept prefix too, down to
fewer than :data:`MIN_KEPT` characters.
"""

from __future__ import annotations

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


class Secrets:
    """The secrets one retriever read from the environment, and the one way to quote around them."""

    def __init__(self, values: Iterable[str] = ()) -> None:
        forms: set[str] = set()
        for value in values:
            if not value:
                continue
            forms.update(
                (
                    value,
                    urllib.parse.quote(value, safe=""),
                    urllib.parse.quote_plus(value),
                    json.dumps(value)[1:-1],
                    json.dumps(value, ensure_ascii=False)[1:-1],
                    repr(value)[1:-1],
                    " ".join(value.split()),
                )
            )
        forms.discard("")
        self._forms = tuple(sorted(forms, key=len, reverse=True))
        self._pattern = re.compile("|".join(map(re.escape, self._forms))) if self._forms else None
        self._longest = len(self._forms[0]) if self._forms else 0

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
