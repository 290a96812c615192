"""``goldeneval.http``: measure a search service over HTTP, one request per question.

The default contract needs only ``--option url=...``: ``POST`` of the JSON
``{"question": <text>, "limit": <n>}``, answered by JSON that is a list of ids, or an object
whose ``ids`` is that list, or whose ``results`` or ``hits`` is a list of objects with an
``id``.  Options adapt it to any other API:

* ``method=GET`` sends the question as query parameter ``query_param`` (``q``) and the limit as
  ``limit_param`` (``limit``), after the parameters the URL already has;
* ``body`` is a JSON template for ``POST``: a string ``"{question}"`` becomes the question, a
  string ``"{limit}"`` the limit as a number, and ``{question}`` / ``{limit}`` inside a longer
  string are replaced in it;
* ``ids_path`` is where the ids are: a dotted path with ``[*]`` (every element) and ``[N]``,
  e.g. ``hits.hits[*]._id`` (Elasticsearch, OpenSearch), ``response.docs[*].id`` (Solr),
  ``result[*].id`` (Qdrant); ``id_field`` names the id of each ``results`` / ``hits`` object of
  the default contract instead; ``strip_prefix`` and ``add_prefix`` map the returned ids to the
  golden set's (strip first);
* ``header.NAME=VALUE`` sends a header; ``${VAR}`` in it (and in the query of ``url`` and in
  ``body``) is the environment variable ``VAR``, read when the retriever is built and never
  stored or printed.  A value written in an option that looks like a credential is refused;
* ``timeout_s`` (30) bounds each question's requests and waits together; ``max_retries`` (2)
  retries HTTP 408, 429 and 5xx and failed connections after ``backoff_s`` (0.5 s, doubling)
  or the server's ``Retry-After`` when it is at most 30 s and fits in ``timeout_s``.

Standard library only (sockets, ``ssl``, ``http.client``'s error types): each thread that asks
questions (``--workers``) keeps its own connection alive, so no connection is shared and no
request waits for another.  What a question costs is mostly this module's own work, so it is
kept small: the headers every request sends are encoded once, each request goes out in one
write (``http.client`` writes the headers and the body apart), and responses are read by a
small HTTP/1.x reader (:func:`_read_response`: ``Content-Length``, chunked, or up to the close)
instead of ``http.client``'s, whose ``email``-package header parsing was the largest cost of an
exchange (``benchmarks/http_retriever.py`` measures it against an in-process plug-in).  A
response that is not JSON, holds no ids where they should be, or holds an id that is not a
string is that question's error, saying what was found.

Provenance: the pipeline identity is the method and the endpoint (scheme, host, port, path
and the query parameters written in the URL, never those from the environment), plus a digest
of the request's shape when an option changes it; the corpus and model revisions are those
declared by ``corpus_revision`` / ``model_revision``, or read from the response header named
by ``corpus_revision_header`` / ``model_revision_header`` (a response without it, or with
another value than the first response's, is that question's error), and unknown otherwise.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import http.client
import io
import json
import re
import socket
import ssl
import threading
import time
import urllib.parse
import weakref
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from typing import Any, Protocol

from goldeneval.core.errors import RetrieverError, one_line
from goldeneval.core.provenance import Provenance, canonical_text
from goldeneval.core.retry_after import RetryableError, retry_after_s
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision, option_label
from goldeneval.retrieval.retrievers.external import (
    REVISION_OPTIONS,
    SearchError,
    bounded_identity,
    checked_revision,
    describe_json,
    expand_environment,
    refuse_secret,
    string_ids,
    without_placeholders,
)
from goldeneval.retrieval.retrievers.options import check_known_options, float_option, int_option, str_option
from goldeneval.retrieval.retrievers.revisions import declared_revisions

__all__ = ["HEADER_OPTION", "HTTP_OPTIONS", "HTTPRetriever", "IdsPath", "build", "split_server_url"]

RETRIEVER_ID = "goldeneval.http"
HEADER_OPTION = "header.NAME"
"""How the docs write the header options (``header.Authorization=Bearer ${TOKEN}``)."""
HEADER_PREFIX = "header."
HTTP_OPTIONS = (
    "url",
    "method",
    "body",
    "query_param",
    "limit_param",
    "ids_path",
    "id_field",
    "strip_prefix",
    "add_prefix",
    HEADER_OPTION,
    "timeout_s",
    "max_retries",
    "backoff_s",
    *REVISION_OPTIONS,
    "corpus_revision_header",
    "model_revision_header",
)
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_BACKOFF_S = 0.5
MAX_RETRY_AFTER_S = 30.0
MAX_RESPONSE_BYTES = 64 * 1024 * 1024
RETRYABLE_STATUS = frozenset({408, 429})
_HEADER_NAME = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")
_CREDENTIAL_HEADER = re.compile(r"(?i)auth|cookie|key|token|secret|pass")
_SCHEME_WORD = re.compile(r"\s*[A-Za-z-]*\s*")
_TEMPLATE_FIELD = re.compile(r"\{(question|limit)\}")
_PATH_SAFE = "/%:@!$&'()*+,;=-._~"
"""What a request path keeps as it is (RFC 3986 ``pchar`` and ``/``); anything else is percent-encoded."""


# ---------------------------------------------------------------------------------- ids


@dataclass(frozen=True)
class IdsPath:
    """A dotted path to the ids of a response, with ``[*]`` for every element of a list and
    ``[N]`` for one: ``hits.hits[*]._id``, ``response.docs[*].id``, ``data.ids``."""

    text: str
    steps: tuple[str | int | None, ...]
    """A key (str), an index (int) or every element (None)."""

    _SYNTAX = re.compile(r"(?:[^.\[\]\s]+|\[(?:\*|\d+)\])(?:\.[^.\[\]\s]+|\[(?:\*|\d+)\])*")
    _STEP = re.compile(r"\.?([^.\[\]\s]+)|\[(\*|\d+)\]")

    @classmethod
    def parse(cls, text: str, label: str) -> IdsPath:
        text = text.strip()
        if not cls._SYNTAX.fullmatch(text):
            raise RetrieverError(
                f"{label}: expected a dotted path such as hits.hits[*]._id or response.docs[*].id, got {text!r}"
            )
        steps: list[str | int | None] = []
        for match in cls._STEP.finditer(text):
            key, index = match.groups()
            steps.append(key if key is not None else None if index == "*" else int(index))
        return cls(text, tuple(steps))

    def ids(self, document: Any) -> list[str]:
        """The ids at this path: every value the ``[*]`` steps reach, else the list the path names."""
        found: list[tuple[str, Any]] = [("", document)]
        for step in self.steps:
            found = [reached for where, value in found for reached in self._step(step, where, value)]
        if None not in self.steps:
            ((where, value),) = found
            if not isinstance(value, list):
                raise SearchError(f"no ids at {self.text!r}: {where} is {describe_json(value)}, not a list")
            return string_ids(value, lambda i: f"{where}[{i}]")
        return string_ids([value for _, value in found], lambda i: found[i][0])

    def _step(self, step: str | int | None, where: str, value: Any) -> list[tuple[str, Any]]:
        place = where or "the response"
        if isinstance(step, str):
            if not isinstance(value, Mapping):
                raise SearchError(f"no ids at {self.text!r}: {place} is {describe_json(value)}, not an object")
            if step not in value:
                raise SearchError(f"no ids at {self.text!r}: {place} has no {step!r} (it is {describe_json(value)})")
            return [(f"{where}.{step}" if where else step, value[step])]
        if not isinstance(value, list):
            raise SearchError(f"no ids at {self.text!r}: {place} is {describe_json(value)}, not a list")
        if step is None:
            return [(f"{where}[{i}]", item) for i, item in enumerate(value)]
        if step >= len(value):
            raise SearchError(f"no ids at {self.text!r}: {place} is {describe_json(value)}, with no [{step}]")
        return [(f"{where}[{step}]", value[step])]


def default_ids(document: Any, id_field: str) -> list[str]:
    """The default contract: a list of ids, ``{"ids": [...]}``, or ``{"results" | "hits": [{"id": ...}]}``."""
    if isinstance(document, list):
        return string_ids(document, lambda i: f"[{i}]")
    if isinstance(document, Mapping):
        if isinstance(document.get("ids"), list):
            return string_ids(document["ids"], lambda i: f"ids[{i}]")
        for key in ("results", "hits"):
            items = document.get(key)
            if isinstance(items, list):
                for i, item in enumerate(items):
                    if not isinstance(item, Mapping) or id_field not in item:
                        raise SearchError(
                            f"no ids in the response: {key}[{i}] has no {id_field!r} (it is {describe_json(item)})"
                        )
                return string_ids([item[id_field] for item in items], _field_of_item(key, id_field))
    raise SearchError(
        "no ids in the response: expected a list of ids, or an object whose 'ids', 'results' or 'hits' "
        f"is a list; found {describe_json(document)}{_path_hint(document)}"
    )


def _field_of_item(key: str, id_field: str) -> Callable[[int], str]:
    return lambda i: f"{key}[{i}].{id_field}"


def _path_hint(document: Any) -> str:
    """The ``ids_path`` of a well-known engine whose response this looks like."""
    if not isinstance(document, Mapping):
        return ""
    hits, response = document.get("hits"), document.get("response")
    if isinstance(hits, Mapping) and isinstance(hits.get("hits"), list):
        return " (Elasticsearch or OpenSearch? --option ids_path=hits.hits[*]._id)"
    if isinstance(response, Mapping) and isinstance(response.get("docs"), list):
        return " (Solr? --option ids_path=response.docs[*].id)"
    if isinstance(document.get("result"), list):
        return " (Qdrant? --option ids_path=result[*].id)"
    return ""


# ---------------------------------------------------------------------------------- requests


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


def _fill(template: Any, question: str, limit: int) -> Any:
    """``template`` with ``"{question}"`` and ``"{limit}"`` filled in (see the module docstring)."""
    if isinstance(template, str):
        if template == "{limit}":
            return limit
        if template == "{question}":
            return question
        return _TEMPLATE_FIELD.sub(lambda m: question if m.group(1) == "question" else str(limit), template)
    if isinstance(template, list):
        return [_fill(item, question, limit) for item in template]
    if isinstance(template, dict):
        return {key: _fill(value, question, limit) for key, value in template.items()}
    return template


def _with_environment(template: Any, label: str, secrets: list[str]) -> Any:
    if isinstance(template, str):
        return expand_environment(template, label, secrets)
    if isinstance(template, list):
        return [_with_environment(item, label, secrets) for item in template]
    if isinstance(template, dict):
        return {key: _with_environment(value, label, secrets) for key, value in template.items()}
    return template


def _mentions_question(template: Any) -> bool:
    if isinstance(template, str):
        return "{question}" in template
    if isinstance(template, list):
        return any(_mentions_question(item) for item in template)
    if isinstance(template, dict):
        return any(_mentions_question(value) for value in template.values())
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


class _Connection:
    """One socket to the endpoint, kept alive between requests (None until opened, and after
    a failure or a response that closes it), and the buffered reader its responses are read
    from (one for the connection's life: each response is read to its end)."""

    __slots__ = ("__weakref__", "reader", "sock")

    def __init__(self) -> None:
        self.sock: socket.socket | None = None
        self.reader: io.BufferedReader | None = None

    def close(self) -> None:
        sock, reader, self.sock, self.reader = self.sock, self.reader, None, None
        if reader is not None:
            reader.close()
        if sock is not None:
            sock.close()


class _Headers(dict[str, str]):
    """Response headers by lower-case name; repeated headers joined with ``", "``."""

    def get(self, name: str, default: Any = None) -> Any:
        return dict.get(self, name.lower(), default)


@dataclass(frozen=True)
class _Response:
    status: int
    reason: str
    headers: _Headers
    body: bytes
    complete: bool
    """The body was read to its end (not cut at ``MAX_RESPONSE_BYTES``)."""
    will_close: bool
    """The server closes the connection after this response (or the body ran to its close)."""


class _Reader(Protocol):
    """What a response is read from (a connection's :class:`_DeadlineReader`)."""

    def readline(self, limit: int = -1, /) -> bytes: ...

    def read(self, size: int, /) -> bytes: ...


_MAX_LINE = 65536
_MAX_HEADERS = 100
_NO_BODY = frozenset({204, 304})


def _line(reader: _Reader, what: str) -> bytes:
    line = reader.readline(_MAX_LINE + 1)
    if len(line) > _MAX_LINE:
        raise http.client.LineTooLong(what)
    return line


def _read_headers(reader: _Reader) -> _Headers:
    headers = _Headers()
    last = ""
    for _ in range(_MAX_HEADERS + 1):
        line = _line(reader, "header line")
        if line in (b"\r\n", b"\n", b""):
            return headers
        if line[:1] in (b" ", b"\t") and last:  # an obsolete folded continuation
            headers[last] += " " + line.strip().decode("latin-1")
            continue
        name, colon, value = line.partition(b":")
        if not colon:
            continue  # not a header: passed over, as http.client's parser does
        last = name.strip().lower().decode("latin-1")
        text = value.strip().decode("latin-1")
        headers[last] = f"{headers[last]}, {text}" if last in headers else text
    raise http.client.HTTPException(f"got more than {_MAX_HEADERS} headers")


def _read_chunked(reader: _Reader, limit: int) -> tuple[bytes, bool]:
    """A chunked body up to ``limit`` bytes, and whether it was read to its end (trailers too)."""
    parts: list[bytes] = []
    total = 0
    while True:
        size_text = _line(reader, "chunk size").split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise http.client.IncompleteRead(b"".join(parts)) from None
        if size == 0:
            break
        data = reader.read(size)
        if len(data) < size:
            raise http.client.IncompleteRead(b"".join(parts) + data, size - len(data))
        parts.append(data)
        total += size
        if total > limit:
            return b"".join(parts), False
        if reader.read(2) not in (b"\r\n", b"\n"):
            raise http.client.IncompleteRead(b"".join(parts))
    while _line(reader, "trailer line") not in (b"\r\n", b"\n", b""):
        pass
    return b"".join(parts), True


def _read_response(reader: _Reader, limit: int) -> _Response:
    """One HTTP/1.x response, read as ``http.client`` reads it (interim ``1xx`` responses passed
    over; the body by ``Transfer-Encoding: chunked``, ``Content-Length``, or up to the close),
    but with the few headers a search answer needs kept in a dict instead of parsed by the
    ``email`` package: the largest per-question cost of the exchange.  At most ``limit`` bytes
    of body are read; a status line that is not HTTP raises ``http.client``'s errors."""
    while True:
        line = _line(reader, "status line")
        if not line:
            raise http.client.RemoteDisconnected("Remote end closed connection without response")
        version, _, rest = line.rstrip(b"\r\n").partition(b" ")
        code, _, reason = rest.strip().partition(b" ")
        if not version.startswith(b"HTTP/1.") or len(code) != 3 or not code.isdigit():
            raise http.client.BadStatusLine(repr(line[:80]))
        status = int(code)
        headers = _read_headers(reader)
        if not 100 <= status < 200 or status == 101:
            break
    tokens = {token.strip().lower() for token in headers.get("connection", "").split(",")}
    will_close = "close" in tokens or (version == b"HTTP/1.0" and "keep-alive" not in tokens)
    if status in _NO_BODY or 100 <= status < 200:
        return _Response(status, reason.decode("latin-1"), headers, b"", True, will_close)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body, complete = _read_chunked(reader, limit)
        return _Response(status, reason.decode("latin-1"), headers, body, complete, will_close)
    length_text = headers.get("content-length")
    length = int(length_text) if length_text is not None and length_text.strip().isdigit() else None
    if length is None:  # the body runs to the close
        body = reader.read(limit + 1)
        return _Response(status, reason.decode("latin-1"), headers, body[:limit], len(body) <= limit, True)
    body = reader.read(min(length, limit + 1))
    if len(body) < min(length, limit + 1):
        raise http.client.IncompleteRead(body, length - len(body))
    return _Response(status, reason.decode("latin-1"), headers, body, length <= limit, will_close)


class _DeadlineReader:
    """A connection's reader that gives every socket read only what is left of the question's
    time: a server that trickles its answer a byte at a time cannot stretch one question past
    ``timeout_s`` (each read alone would stay within a per-read timeout)."""

    __slots__ = ("deadline", "reader", "sock")

    def __init__(self, reader: io.BufferedReader, sock: socket.socket, deadline: float) -> None:
        self.reader, self.sock, self.deadline = reader, sock, deadline

    def _arm(self) -> None:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the question's time ran out while reading the answer")
        self.sock.settimeout(left)

    def readline(self, limit: int = -1) -> bytes:
        self._arm()
        return self.reader.readline(limit)

    def read(self, size: int) -> bytes:
        parts: list[bytes] = []
        left = size
        while left > 0:
            self._arm()
            chunk = self.reader.read1(min(left, 1 << 16))  # at most one socket read each time
            if not chunk:
                break
            parts.append(chunk)
            left -= len(chunk)
        return b"".join(parts)


class _Connections:
    """One kept-alive connection per thread: a connection serves one request at a time, so
    each ``--workers`` thread has its own, and no lock is held while waiting."""

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self._local = threading.local()
        self._every: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._lock = threading.Lock()
        self._tls = ssl.create_default_context() if endpoint.scheme == "https" else None
        default_port = http.client.HTTPS_PORT if self._tls is not None else http.client.HTTP_PORT
        self._address = (endpoint.host, endpoint.port or default_port)

    def get(self, timeout_s: float) -> tuple[_Connection, bool]:
        """This thread's connection, open, with ``timeout_s`` for each socket operation, and
        whether it was used before (and so may have been closed by the server meanwhile)."""
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = _Connection()
            with self._lock:
                self._every.add(connection)
        if connection.sock is None:
            connection.sock = self._open(timeout_s)
            connection.reader = connection.sock.makefile("rb")
            return connection, False
        connection.sock.settimeout(timeout_s)
        return connection, True

    def _open(self, timeout_s: float) -> socket.socket:
        """A new connection, as ``http.client`` opens one (``TCP_NODELAY``, TLS with the host name)."""
        sock = socket.create_connection(self._address, timeout_s)
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=self.endpoint.host)
        except BaseException:
            sock.close()
            raise
        return sock

    def drop(self) -> None:
        """Close this thread's connection (after a failure or an unread body): the next request opens one."""
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()

    def close(self) -> None:
        with self._lock:
            every = list(self._every)
        for connection in every:
            connection.close()


# ---------------------------------------------------------------------------------- retriever


class HTTPRetriever:
    """One search endpoint, asked once per question; safe to call from many threads at once."""

    def __init__(
        self,
        endpoint: Endpoint,
        shape: RequestShape | None = None,
        *,
        headers: Mapping[str, str] | None = None,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        revisions: Mapping[str, str | None] | None = None,
        revision_headers: Mapping[str, str] | None = None,
        probe_question: str = "goldeneval",
        secrets: Sequence[str] = (),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.endpoint = endpoint
        self.shape = shape or RequestShape()
        self.timeout_s, self.max_retries, self.backoff_s = timeout_s, max_retries, backoff_s
        self.revisions = dict(revisions or {})
        self.revision_headers = dict(revision_headers or {})
        """Provenance field -> the response header it is read from."""
        self.probe_question = probe_question
        self._secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))
        self._sleep = sleep
        sent = {"Accept": "application/json", "User-Agent": f"goldeneval/{package_version('goldeneval')}"}
        if endpoint.method == "POST":
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        self._head = _header_block(endpoint, sent)
        self._counts_length = "content-length" not in {name.lower() for name in sent}
        self._connections = _Connections(endpoint)
        self._seen: dict[str, str] = {}
        self._lock = threading.Lock()

    # -- the contract

    def retrieve(self, question: str, limit: int) -> list[str]:
        try:
            document = self._document(*self._exchange(question, limit))
            shape = self.shape
            ids = shape.ids_path.ids(document) if shape.ids_path else default_ids(document, shape.id_field)
        except SearchError as exc:
            raise SearchError(self._scrubbed(str(exc))) from None
        if shape.strip_prefix:
            ids = [i.removeprefix(shape.strip_prefix) for i in ids]
        if shape.add_prefix:
            ids = [shape.add_prefix + i for i in ids]
        return ids

    def provenance(self) -> Provenance:
        declared = dict(self.revisions)
        for name, header in self.revision_headers.items():
            declared[name] = checked_revision(self._revision(name, header), f"the {header} header", name)
        identity = f"{RETRIEVER_ID}/{self.endpoint.method} {self.endpoint.identity}"
        shape = self.shape.identity(self.endpoint.method)
        return Provenance(
            corpus_revision=declared.get("corpus_revision"),
            model_revision=declared.get("model_revision"),
            pipeline_identity=bounded_identity(identity + (f" request:sha256:{shape}" if shape else "")),
            execution_revision=execution_revision(),
        )

    def close(self) -> None:
        """Close the kept-alive connections (a later question opens new ones)."""
        self._connections.close()

    # -- one question

    def _request(self, question: str, limit: int) -> bytes:
        """The whole request as sent, in one write: the request line, the headers built once
        (:func:`_header_block`), and the body."""
        method = self.endpoint.method
        if method == "GET":
            extra = [(self.shape.query_param, question), (self.shape.limit_param, str(limit))]
            return b"GET %s HTTP/1.1\r\n%s\r\n" % (self.endpoint.wire_target(extra), self._head)
        if self.shape.body is None:  # json.dumps({"question": ..., "limit": ...}), byte for byte
            body = b'{"question": %s, "limit": %d}' % (json.dumps(question).encode("ascii"), limit)
        else:
            body = json.dumps(_fill(self.shape.body, question, limit)).encode("utf-8")
        length = b"Content-Length: %d\r\n" % len(body) if self._counts_length else b""
        return b"%s %s HTTP/1.1\r\n%s%s\r\n%s" % (
            method.encode(),
            self.endpoint.wire_target(),
            self._head,
            length,
            body,
        )

    def _exchange(self, question: str, limit: int) -> tuple[bytes, str]:
        """The body and content type of a 2xx response, after any retries."""
        request = self._request(question, limit)
        deadline = time.monotonic() + self.timeout_s
        attempts = 0
        while True:
            attempts += 1
            try:
                raw, content_type, headers = self._send(request, deadline)
            except RetryableError as exc:
                problem, wait = str(exc), exc.retry_after_s
            else:
                self._check_revisions(headers)
                return raw, content_type
            if attempts > self.max_retries:
                raise SearchError(f"{problem} (after {attempts} attempt{'s' if attempts > 1 else ''})")
            if wait is not None and wait > MAX_RETRY_AFTER_S:
                raise SearchError(f"{problem}: Retry-After asks for {wait:g} s, more than goldeneval waits")
            wait = self.backoff_s * 2 ** (attempts - 1) if wait is None else wait
            if time.monotonic() + wait >= deadline:
                raise SearchError(
                    f"{problem}: a retry in {wait:g} s would pass option timeout_s ({self.timeout_s:g} s)"
                )
            self._sleep(wait)

    def _send(self, request: bytes, deadline: float) -> tuple[bytes, str, _Headers]:
        """One HTTP exchange: the body, content type and headers of a 2xx response.  The
        response is read by ``http.client`` (status line, headers, ``Content-Length`` or chunked
        body); the connection is kept for the next question unless the server closes it."""
        base = self.endpoint.base
        for fresh in (False, True):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise self._timed_out()
            reused = False
            try:
                connection, reused = self._connections.get(remaining)
                sock, reader = connection.sock, connection.reader
                assert sock is not None and reader is not None
                sock.sendall(request)
                response = _read_response(_DeadlineReader(reader, sock, deadline), MAX_RESPONSE_BYTES)
                if response.will_close or not response.complete:
                    self._connections.drop()
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError) as exc:
                self._connections.drop()
                if reused and not fresh:
                    continue  # the server closed a kept-alive connection: once more on a new one
                raise RetryableError(f"the connection to {base} failed: {_reason(exc)}") from None
            except TimeoutError:
                self._connections.drop()
                raise self._timed_out() from None
            except ConnectionRefusedError as exc:
                self._connections.drop()
                raise RetryableError(f"cannot connect to {base}: {_reason(exc)}") from None
            except ssl.SSLError as exc:
                self._connections.drop()
                raise SearchError(f"TLS with {base} failed: {_reason(exc)}") from None
            except OSError as exc:  # an unreachable network, a host name that does not resolve ...
                self._connections.drop()
                raise RetryableError(f"the connection to {base} failed: {_reason(exc)}") from None
            except http.client.HTTPException as exc:
                self._connections.drop()
                raise SearchError(f"{base} did not answer in HTTP ({type(exc).__name__})") from None
            break
        if not response.complete:
            raise SearchError(f"the response is larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB")
        if time.monotonic() > deadline:
            raise self._timed_out()
        status, headers, raw = response.status, response.headers, response.body
        if 200 <= status < 300:
            return raw, headers.get("Content-Type", ""), headers
        problem = f"HTTP {status} {response.reason or ''}".rstrip() + _snippet(raw)
        if status in RETRYABLE_STATUS or 500 <= status < 600:
            raise RetryableError(problem, retry_after_s(headers.get("Retry-After")))
        if 300 <= status < 400:
            problem += " (redirects are not followed: give the final URL)"
        raise SearchError(problem)

    def _timed_out(self) -> SearchError:
        return SearchError(f"timed out after {self.timeout_s:g} s (option timeout_s)")

    def _document(self, raw: bytes, content_type: str) -> Any:
        if not raw.strip():
            raise SearchError(f"the response is empty (Content-Type {content_type or 'none'}); expected JSON")
        try:
            return json.loads(raw)
        except RecursionError:  # nested deeper than the parser goes: not a search answer either
            raise SearchError("the response is not JSON a search answer can be: nested too deeply") from None
        except ValueError:
            found = one_line(raw[:200].decode("utf-8", "replace"), 80)
            raise SearchError(f"the response is not JSON (Content-Type {content_type or 'none'}): {found!r}") from None

    # -- revisions read from headers

    def _check_revisions(self, headers: _Headers) -> None:
        for name, header in self.revision_headers.items():
            value = headers.get(header)
            if value is None or not value.strip():
                raise SearchError(f"the response has no {header} header (option {name}_header)")
            with self._lock:
                first = self._seen.setdefault(name, value.strip())
            if value.strip() != first:
                raise SearchError(
                    f"the {header} header changed during the run: {one_line(first, 60)!r} in the first response, "
                    f"{one_line(value.strip(), 60)!r} in this one"
                )

    def _revision(self, name: str, header: str) -> str:
        """The value of ``header`` in the first response; asks one question for it when none came yet."""
        with self._lock:
            seen = self._seen.get(name)
        if seen is not None:
            return seen
        try:
            self._exchange(self.probe_question, 1)
        except SearchError as exc:
            raise RetrieverError(
                f"retriever {RETRIEVER_ID!r}: cannot read the {name.replace('_', ' ')} from the {header} "
                f"header of {self.endpoint.identity}: {self._scrubbed(str(exc))}"
            ) from None
        return self._seen[name]

    def _scrubbed(self, message: str) -> str:
        for secret in self._secrets:
            message = message.replace(secret, "***")
        return message


def _snippet(raw: bytes) -> str:
    text = one_line(raw[:300].decode("utf-8", "replace"), 120)
    return f": {text}" if text else ""


def _reason(exc: BaseException) -> str:
    """The cause of a connection failure in a few words (never the URL, which may hold secrets)."""
    pending: list[BaseException] = [exc]
    seen: set[int] = set()
    while pending:
        cause = pending.pop(0)
        if id(cause) in seen:
            continue
        seen.add(id(cause))
        if isinstance(cause, OSError) and (cause.strerror or cause.args):
            return one_line(cause.strerror or str(cause), 120)
        linked = (cause.__cause__, cause.__context__, *cause.args)
        pending.extend(link for link in linked if isinstance(link, BaseException))
    return type(exc).__name__


# ---------------------------------------------------------------------------------- factory


def _header_options(
    context: RetrieverContext, secrets: list[str]
) -> tuple[dict[str, str], tuple[tuple[str, str], ...]]:
    """``header.NAME=VALUE`` options: the headers as sent, and as written (for the identity)."""
    sent: dict[str, str] = {}
    written: list[tuple[str, str]] = []
    for key, value in sorted(context.options.items()):
        if not key.startswith(HEADER_PREFIX):
            continue
        name = key.removeprefix(HEADER_PREFIX)
        label = option_label(key, RETRIEVER_ID)
        if not _HEADER_NAME.fullmatch(name):
            raise RetrieverError(f"{label}: {name!r} is not a header name")
        literal = without_placeholders(value)
        refuse_secret(f"{name}: {literal}", label)
        if _CREDENTIAL_HEADER.search(name) and not _SCHEME_WORD.fullmatch(literal):
            raise RetrieverError(
                f"{label}: a credential header takes its value from an environment variable, "
                f"e.g. --option '{key}=Bearer ${{SEARCH_TOKEN}}'"
            )
        expanded = expand_environment(value, label, secrets)
        if "\n" in expanded or "\r" in expanded:
            raise RetrieverError(f"{label}: a header value must be one line")
        sent[name] = expanded
        written.append((name, value))
    return sent, tuple(written)


def _body_template(context: RetrieverContext, secrets: list[str]) -> tuple[Any, Any]:
    raw = str_option(context, "body", retriever_id=RETRIEVER_ID)
    if raw is None:
        return None, None
    label = option_label("body", RETRIEVER_ID)
    try:
        template = json.loads(raw)
    except ValueError as exc:
        raise RetrieverError(f"{label}: not JSON ({exc})") from None
    if not _mentions_question(template):
        raise RetrieverError(f'{label}: must hold "{{question}}" somewhere, e.g. {{"query": "{{question}}"}}')
    refuse_secret(without_placeholders(raw), label)
    return _with_environment(template, label, secrets), template


def build(context: RetrieverContext) -> HTTPRetriever:
    """Entry-point factory for ``goldeneval.http``; option ``url`` is required (module docstring)."""
    without_headers = {key: value for key, value in context.options.items() if not key.startswith(HEADER_PREFIX)}
    check_known_options(dataclasses.replace(context, options=without_headers), RETRIEVER_ID, HTTP_OPTIONS)
    url = str_option(context, "url", retriever_id=RETRIEVER_ID)
    if url is None:
        raise RetrieverError(
            f"retriever {RETRIEVER_ID!r} needs option url=..., e.g. --option url=http://127.0.0.1:8080/search"
        )
    method = (str_option(context, "method", retriever_id=RETRIEVER_ID) or "POST").strip().upper()
    if method not in ("GET", "POST"):
        raise RetrieverError(f"{option_label('method', RETRIEVER_ID)}: expected GET or POST, got {method!r}")
    for name, applies_to in (("body", "POST"), ("query_param", "GET"), ("limit_param", "GET")):
        if name in context.options and method != applies_to:
            raise RetrieverError(f"{option_label(name, RETRIEVER_ID)}: applies to method={applies_to} only")
    if "id_field" in context.options and "ids_path" in context.options:
        raise RetrieverError(
            f"{option_label('id_field', RETRIEVER_ID)}: names the id of the default contract's results; "
            "with ids_path, end the path with the id's field instead"
        )
    for name, value in context.options.items():  # url, body and headers may hold ${NAME}: checked below
        if name not in ("url", "body") and not name.startswith(HEADER_PREFIX):
            refuse_secret(value, option_label(name, RETRIEVER_ID))
    secrets: list[str] = []
    endpoint = parse_endpoint(url, method, secrets)
    headers, written_headers = _header_options(context, secrets)
    body, recorded_body = _body_template(context, secrets)
    ids_path_text = str_option(context, "ids_path", retriever_id=RETRIEVER_ID)
    shape = RequestShape(
        body=body,
        recorded=recorded_body,
        query_param=str_option(context, "query_param", retriever_id=RETRIEVER_ID) or "q",
        limit_param=str_option(context, "limit_param", retriever_id=RETRIEVER_ID) or "limit",
        ids_path=IdsPath.parse(ids_path_text, option_label("ids_path", RETRIEVER_ID)) if ids_path_text else None,
        id_field=str_option(context, "id_field", retriever_id=RETRIEVER_ID) or "id",
        strip_prefix=context.options.get("strip_prefix", ""),
        add_prefix=context.options.get("add_prefix", ""),
        headers=written_headers,
    )
    revisions = declared_revisions(context, RETRIEVER_ID)
    revision_headers: dict[str, str] = {}
    for name in REVISION_OPTIONS:
        header = str_option(context, f"{name}_header", retriever_id=RETRIEVER_ID)
        if header is None:
            continue
        label = option_label(f"{name}_header", RETRIEVER_ID)
        if revisions[name] is not None:
            raise RetrieverError(f"{label}: give {name} or {name}_header, not both")
        if not _HEADER_NAME.fullmatch(header.strip()):
            raise RetrieverError(f"{label}: {header!r} is not a header name")
        revision_headers[name] = header.strip()
    questions = context.golden_set.questions if context.golden_set is not None else ()
    max_retries = int_option(context, "max_retries", minimum=0, retriever_id=RETRIEVER_ID)
    if max_retries is not None and max_retries > 10:
        raise RetrieverError(f"{option_label('max_retries', RETRIEVER_ID)}: must be at most 10, got {max_retries}")
    return HTTPRetriever(
        endpoint,
        shape,
        headers=headers,
        timeout_s=float_option(
            context, "timeout_s", DEFAULT_TIMEOUT_S, minimum=0.001, maximum=86400, retriever_id=RETRIEVER_ID
        ),
        max_retries=DEFAULT_MAX_RETRIES if max_retries is None else max_retries,
        backoff_s=float_option(context, "backoff_s", DEFAULT_BACKOFF_S, maximum=60, retriever_id=RETRIEVER_ID),
        revisions=revisions,
        revision_headers=revision_headers,
        probe_question=questions[0].text if questions else "goldeneval",
        secrets=secrets,
    )
