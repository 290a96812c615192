"""The response cache of model calls (issue 24): a warm cache makes no request.

An entry is keyed by what the answer depends on — the model's immutable revision, its
pipeline identity (endpoint and settings) and the full request (every message, the
temperature, ``max_tokens``) — hashed with SHA-256: one JSON file per key under
``<cache folder>/responses/``, written to a temporary file and renamed, so a crash or a
parallel run never leaves half an entry.  An entry holds the answer text and the usage the
server reported; never the API key, never a header, never the request.

What is cached is decided in :mod:`goldeneval.prompts.calls`: only deterministic requests
(temperature 0) to a model whose revision is immutable (a mutable alias may serve another
model tomorrow, ADR-215), never under ``metadata_only`` privacy (an answer may quote the
question), and not with ``--no-cache``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from goldeneval.core.provenance import canonical_json
from goldeneval.prompts.usage import Usage, parse_usage

__all__ = ["RESPONSE_CACHE_VERSION", "CachedResponse", "ResponseCache", "response_key"]

RESPONSE_CACHE_VERSION = "responses-v1"


def response_key(model_revision: str, pipeline_identity: str | None, request: str) -> str:
    """The SHA-256 of (cache version, model revision, pipeline identity, full request)."""
    material = [RESPONSE_CACHE_VERSION, model_revision, pipeline_identity, request]
    return hashlib.sha256(canonical_json(material)).hexdigest()


@dataclass(frozen=True)
class CachedResponse:
    text: str
    usage: Usage | None = None


class ResponseCache:
    """Answers by key, one file each under ``<folder>/responses/<key[:2]>/<key>.json``."""

    def __init__(self, folder: Path) -> None:
        self.root = Path(folder) / "responses"

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> CachedResponse | None:
        """The cached answer, or None (absent, or unreadable: then it is simply asked again)."""
        try:
            document = json.loads(self.path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(document, dict) or document.get("version") != RESPONSE_CACHE_VERSION:
            return None
        text = document.get("text")
        if not isinstance(text, str):
            return None
        return CachedResponse(text, parse_usage(document.get("usage")))

    def put(self, key: str, response: CachedResponse) -> None:
        """Store atomically; a cache that cannot be written costs a request next time, not the run."""
        path = self.path(key)
        document = {
            "version": RESPONSE_CACHE_VERSION,
            "text": response.text,
            "usage": response.usage.to_json() if response.usage is not None else None,
        }
        temporary: Path | None = None
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, prefix=".tmp-", suffix=".json", delete=False
            ) as handle:
                temporary = Path(handle.name)
                json.dump(document, handle, ensure_ascii=False)
            os.replace(temporary, path)
        except OSError:
            if temporary is not None:
                with contextlib.suppress(OSError):
                    temporary.unlink(missing_ok=True)
