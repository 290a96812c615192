"""How a question becomes an HTTP request for ``goldeneval.http``: the endpoint (``url`` and
``method``, values from the environment filled in, and as provenance records it), the request's
shape (``body``, ``query_param``, ``limit_param``, headers) and :class:`RequestWriter`, which
encodes each request as the bytes sent, in one write, the header block built once."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import re
import urllib.parse
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import canonical_text
from goldeneval.retrieval.retrievers.base import option_label
from goldeneval.retrieval.retrievers.external import expand_environment, refuse_secret, without_placeholders
from goldeneval.retrieval.retrievers.http_ids import IdsPath

__all__ = [
    "HEADER_PREFIX",
    "RETRIEVER_ID",
    "Endpoint",
    "RequestShape",
    "RequestWriter",
    "fill",
    "mentions_question",
    "parse_endpoint",
    "split_server_url",
    "with_environment",
]

RETRIEVER_ID = "goldeneval.http"
HEADER_PREFIX = "header."
_TEMPLATE_FIELD = re.compile(r"\{(question|limit)\}")
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
"""What a request path keeps as it is (RFC 3986 ``pchar`` and ``/``); anything else is percent-encoded."""


@dataclass(frozen=True)
class Endpoint:
    """Where requests go: the URL as sent (with values from the environment) and as recorded."""

    method: str
    scheme: str
    host: str
    port: int | None
    path: str
    query: tuple[tuple[str, str], ...]
    """The URL's own query parameters, values from the environment filled in."""
    identity: str
    """The endpoint as provenance records it: no value from the environment."""

    @property
    def base(self) -> str:
        """``scheme://host[:port]/path``: how messages name the endpoint."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}{f':{self.port}' if self.port is not None else ''}{self.path}"

    def target(self, extra: Sequence[tuple[str, str]] = ()) -> str:
        """The request target: the path and the query (the URL's own parameters, then ``extra``)."""
        pairs = [*self.query, *extra]
        return f"{self.path}?{urllib.parse.urlencode(pairs)}" if pairs else self.path

    @functools.cached_property
    def _wire_path(self) -> str:
        return urllib.parse.quote(self.path, safe=_PATH_SAFE)

    @functools.cached_property
    def _wire_post_target(self) -> bytes:
        pairs = self.query
        return (f"{self._wire_path}?{urllib.parse.urlencode(pairs)}" if pairs else self._wire_path).encode("ascii")

    def wire_target(self, extra: Sequence[tuple[str, str]] = ()) -> bytes:
        """:meth:`target` as sent: ASCII, the path percent-encoded where it needs to be."""
        if not extra:
            return self._wire_post_target
        return f"{self._wire_path}?{urllib.parse.urlencode([*self.query, *extra])}".encode("ascii")


def _header_block(endpoint: Endpoint, headers: Mapping[str, str]) -> bytes:
    """The header lines every request of ``endpoint`` sends, built once: ``Host`` and
    ``Accept-Encoding: identity`` (as ``http.client`` sends them, unless ``headers`` has its
    own), then ``headers``."""
    names = {name.lower() for name in headers}
    lines: list[bytes] = []
    if "host" not in names:
        try:
            host = endpoint.host.encode("ascii")
        except UnicodeEncodeError:
            host = endpoint.host.encode("idna")
        if ":" in endpoint.host:
            host = b"[" + host + b"]"
        lines.append(b"Host: " + host + (b":%d" % endpoint.port if endpoint.port is not None else b""))
    if "accept-encoding" not in names:
        lines.append(b"Accept-Encoding: identity")
    for name, value in headers.items():
        try:
            lines.append(f"{name}: {value}".encode("latin-1"))
        except UnicodeEncodeError:
            raise RetrieverError(
                f"{option_label(HEADER_PREFIX + name, RETRIEVER_ID)}: a header value must be Latin-1 text"
            ) from None
    return b"".join(line + b"\r\n" for line in lines)


def split_server_url(raw: str, label: str, example: str, credentials_hint: str) -> tuple[urllib.parse.SplitResult, str]:
    """``raw`` split, and its host, once it is an http(s) URL with a host and no credentials:
    a server URL is recorded as provenance and printed, so credentials reach the server another
    way, which ``credentials_hint`` names (``example`` is a URL of the right form)."""
    parts = urllib.parse.urlsplit(raw.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise RetrieverError(f"{label}: expected an http(s) URL such as {example}, got {raw!r}")
    if parts.username is not None or parts.password is not None:
        raise RetrieverError(f"{label}: holds credentials; {credentials_hint}")
    return parts, parts.hostname


def parse_endpoint(raw: str, method: str, secrets: list[str]) -> Endpoint:
    label = option_label("url", RETRIEVER_ID)
    parts, host = split_server_url(
        raw,
        label,
        "http://127.0.0.1:8080/search",
        "send them in a header from an environment variable, "
        "e.g. --option 'header.Authorization=Basic ${SEARCH_CREDENTIALS}'",
    )
    if parts.fragment:
        raise RetrieverError(f"{label}: a URL sent to a server has no #fragment, got {raw!r}")
    try:
        port = parts.port
    except ValueError as exc:
        raise RetrieverError(f"{label}: {exc}") from None
    refuse_secret(without_placeholders(parts.path), label)
    if without_placeholders(parts.path) != parts.path:
        raise RetrieverError(f"{label}: ${{NAME}} may stand only for a query parameter's value")
    query: list[tuple[str, str]] = []
    recorded: list[tuple[str, str]] = []
    for name, value in urllib.parse.parse_qsl(parts.query, keep_blank_values=True):
        written = without_placeholders(value)
        refuse_secret(f"{name}={written}" if written else name, label)
        query.append((name, expand_environment(value, label, secrets)))
        if written == value:
            recorded.append((name, value))
    endpoint = Endpoint(method, parts.scheme, host, port, parts.path or "/", tuple(query), "")
    identity = f"{endpoint.base}?{urllib.parse.urlencode(recorded)}" if recorded else endpoint.base
    return dataclasses.replace(endpoint, identity=identity)


def fill(template: Any, question: str, limit: int) -> Any:
    """``template`` with ``"{question}"`` and ``"{limit}"`` filled in (option ``body`` of ``goldeneval.http``)."""
    if isinstance(template, str):
        if template == "{limit}":
            return limit
        if template == "{question}":
            return question
        return _TEMPLATE_FIELD.sub(lambda m: question if m.group(1) == "question" else str(limit), template)
    if isinstance(template, list):
        return [fill(item, question, limit) for item in template]
    if isinstance(template, dict):
        return {key: fill(value, question, limit) for key, value in template.items()}
    return template


def with_environment(template: Any, label: str, secrets: list[str]) -> Any:
    if isinstance(template, str):
        return expand_environment(template, label, secrets)
    if isinstance(template, list):
        return [with_environment(item, label, secrets) for item in template]
    if isinstance(template, dict):
        return {key: with_environment(value, label, secrets) for key, value in template.items()}
    return template


def mentions_question(template: Any) -> bool:
    if isinstance(template, str):
        return "{question}" in template
    if isinstance(template, list):
        return any(mentions_question(item) for item in template)
    if isinstance(template, dict):
        return any(mentions_question(value) for value in template.values())
    return False


@dataclass(frozen=True)
class RequestShape:
    """How a question becomes a request, and where the ids are in the answer."""

    body: Any = None
    """The ``POST`` body template (None: the default ``{"question", "limit"}``)."""
    query_param: str = "q"
    limit_param: str = "limit"
    ids_path: IdsPath | None = None
    id_field: str = "id"
    strip_prefix: str = ""
    add_prefix: str = ""
    headers: tuple[tuple[str, str], ...] = ()
    """Header names and values as written (``${VAR}`` unexpanded): part of the identity."""
    recorded: Any = field(default=None, compare=False)
    """The body template as written (``${VAR}`` unexpanded), for the identity."""

    def identity(self, method: str) -> str | None:
        """A digest of the shape, or None when it is the default for ``method``."""
        if (
            self.recorded is None
            and self.ids_path is None
            and (self.id_field, self.strip_prefix, self.add_prefix, self.headers) == ("id", "", "", ())
            and (method == "POST" or (self.query_param, self.limit_param) == ("q", "limit"))
        ):
            return None
        shape = {
            "body": self.recorded,
            "query_param": self.query_param if method == "GET" else None,
            "limit_param": self.limit_param if method == "GET" else None,
            "ids_path": self.ids_path.text if self.ids_path else None,
            "id_field": self.id_field,
            "strip_prefix": self.strip_prefix,
            "add_prefix": self.add_prefix,
            "headers": sorted(self.headers),
        }
        return hashlib.sha256(canonical_text([method, shape]).encode("utf-8")).hexdigest()[:16]


class RequestWriter:
    """Each question's request as the bytes sent: the request line, the header lines every
    request sends (built once: ``Host``, ``Accept-Encoding: identity``, then ``headers``), a
    ``Content-Length`` for a body, and the body."""

    def __init__(self, endpoint: Endpoint, shape: RequestShape, headers: Mapping[str, str]) -> None:
        self.endpoint, self.shape = endpoint, shape
        self._head = _header_block(endpoint, headers)
        names = {name.lower(): value for name, value in headers.items()}
        self._counts_length = "content-length" not in names
        self.closes = "close" in {token.strip().lower() for token in names.get("connection", "").split(",")}
        """The requests ask the server to close the connection after answering (``Connection: close``)."""

    def encode(self, question: str, limit: int) -> bytes:
        method = self.endpoint.method
        if method == "GET":
            extra = [(self.shape.query_param, question), (self.shape.limit_param, str(limit))]
            return b"GET %s HTTP/1.1\r\n%s\r\n" % (self.endpoint.wire_target(extra), self._head)
        if self.shape.body is None:  # json.dumps({"question": ..., "limit": ...}), byte for byte
            body = b'{"question": %s, "limit": %d}' % (json.dumps(question).encode("ascii"), limit)
        else:
            body = json.dumps(fill(self.shape.body, question, limit)).encode("utf-8")
        length = b"Content-Length: %d\r\n" % len(body) if self._counts_length else b""
        return b"%s %s HTTP/1.1\r\n%s%s\r\n%s" % (
            method.encode(),
            self.endpoint.wire_target(),
            self._head,
            length,
            body,
        )
