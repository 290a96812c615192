"""The wire under ``goldeneval.http``: one request out, one response back, behind a narrow seam.

:class:`Transport` is the seam, ``send(request) -> response`` as httpx's transports have it:
a :class:`WireRequest` is the bytes of one whole request and the time by which its whole
response must have arrived; a :class:`WireResponse` is the status, the headers and the body.
What to ask, what an answer means, retries and secrets are the retriever's
(:mod:`goldeneval.retrieval.retrievers.http`); the wire knows sockets and framing only.

:class:`H11Transport` is the transport goldeneval uses: ``h11`` parses every byte a server
sends (status line, headers, ``Content-Length``, chunked or up-to-the-close bodies, interim
``1xx`` responses, keep-alive), and this module keeps only the sockets:

* one connection per thread that asks (``--workers``), kept alive between questions, so no
  connection is shared and no request waits for another; a kept-alive connection the server
  closed meanwhile is replaced once, on a new connection, without counting as a retry;
* every socket operation gets what is left of the request's time, so a server that sends its
  status line, headers or body a byte at a time cannot stretch a question past ``timeout_s``;
* at most ``max_body`` bytes of body are kept (the rest is not read; the connection is closed).

The request bytes are the retriever's, encoded once per run where they can be (a request is
mostly the same header block every time), so ``h11`` is told of each request by a stand-in
event of the same method: what its state machine needs to read the answer is the method, whether
the request said ``Connection: close``, and that it ended; not its target, headers or body.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
import weakref
from collections.abc import Sequence
from typing import Any, NamedTuple, Protocol

import h11

from goldeneval.core.errors import one_line

__all__ = [
    "MAX_HEADERS",
    "H11Transport",
    "Headers",
    "Transport",
    "WireError",
    "WireRequest",
    "WireResponse",
    "WireTimeout",
    "failure_reason",
]

MAX_HEADERS = 100
"""More header lines than this is not an answer (``http.client`` draws the same line)."""
MAX_HEAD_BYTES = 64 * 1024
"""The status line and headers together; ``h11`` refuses a longer head."""
_RECEIVE_BYTES = 64 * 1024
_HTTP_PORTS = {"http": 80, "https": 443}
_END = h11.EndOfMessage()


class Headers(dict[str, str]):
    """Response headers by lower-case name; repeated headers joined with ``", "``."""

    def get(self, name: str, default: Any = None) -> Any:
        return dict.get(self, name.lower(), default)


class WireRequest(NamedTuple):
    method: str
    """``GET`` or ``POST``: what the response's framing depends on."""
    data: bytes
    """The whole request as sent: request line, headers and body."""
    deadline: float
    """``time.monotonic()`` by which the whole response must have arrived."""


class WireResponse:
    """A response: the status, the reason phrase, the headers and the body."""

    __slots__ = ("_headers", "body", "complete", "raw_headers", "reason", "status")

    def __init__(
        self, status: int, reason: str, raw_headers: Sequence[tuple[bytes, bytes]], body: bytes, complete: bool
    ) -> None:
        self.status, self.reason, self.body = status, reason, body
        self.raw_headers = raw_headers
        """The header lines as received (names in lower case): :attr:`headers` reads them when asked."""
        self.complete = complete
        """The body was read to its end (not cut at the transport's ``max_body``)."""
        self._headers: Headers | None = None

    @property
    def headers(self) -> Headers:
        if self._headers is None:
            headers = Headers()
            for name, value in self.raw_headers:
                key, text = name.decode("latin-1"), value.decode("latin-1")
                headers[key] = f"{headers[key]}, {text}" if key in headers else text
            self._headers = headers
        return self._headers


class WireError(Exception):
    """The exchange failed; ``retryable`` when another attempt may fare better (a refused or
    broken connection), not when the server does not speak HTTP or TLS failed."""

    def __init__(self, message: str, *, retryable: bool) -> None:
        super().__init__(message)
        self.retryable = retryable


class WireTimeout(WireError):
    """The request's deadline passed before its whole response arrived."""

    def __init__(self) -> None:
        super().__init__("timed out", retryable=False)


class Transport(Protocol):
    """The seam: one request out, its response back (or a :class:`WireError`)."""

    def send(self, request: WireRequest) -> WireResponse: ...

    def close(self) -> None: ...


class _Stale(Exception):
    """The server closed the connection before answering (or reset it): on a kept-alive
    connection, the server dropped it meanwhile."""


class _Connection:
    """One socket to the endpoint and the ``h11`` state of its current exchange."""

    __slots__ = ("__weakref__", "protocol", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.protocol = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)

    def close(self) -> None:
        self.sock.close()


class H11Transport:
    """HTTP/1.1 to one host over kept-alive connections, one per thread; ``h11`` parses."""

    def __init__(
        self,
        scheme: str,
        host: str,
        port: int | None,
        *,
        name: str,
        max_body: int,
        closes: bool = False,
    ) -> None:
        """``name`` is how messages name the endpoint; ``closes``: the requests send
        ``Connection: close`` (see the module docstring)."""
        self.name, self.max_body = name, max_body
        self._tls = ssl.create_default_context() if scheme == "https" else None
        self._host = host
        self._address = (host, port or _HTTP_PORTS[scheme])
        headers = [(b"Host", b"stand-in"), *([(b"Connection", b"close")] if closes else [])]
        self._told = {method: h11.Request(method=method, target="/", headers=headers) for method in ("GET", "POST")}
        self._local = threading.local()
        self._every: weakref.WeakSet[_Connection] = weakref.WeakSet()
        self._lock = threading.Lock()

    # -- the seam

    def send(self, request: WireRequest) -> WireResponse:
        for fresh in (False, True):
            connection: _Connection | None = getattr(self._local, "connection", None)
            reused = connection is not None
            try:
                if connection is None:
                    connection = self._open(request.deadline)
                return self._exchange(connection, request)
            except _Stale as exc:
                self._drop()
                if reused and not fresh:
                    continue  # the server closed a kept-alive connection: once more on a new one
                raise WireError(
                    f"the connection to {self.name} failed: {failure_reason(exc)}", retryable=True
                ) from None
            except TimeoutError:
                self._drop()
                raise WireTimeout() from None
            except ConnectionRefusedError as exc:
                self._drop()
                raise WireError(f"cannot connect to {self.name}: {failure_reason(exc)}", retryable=True) from None
            except ssl.SSLError as exc:
                self._drop()
                raise WireError(f"TLS with {self.name} failed: {failure_reason(exc)}", retryable=False) from None
            except OSError as exc:  # an unreachable network, a host name that does not resolve ...
                self._drop()
                raise WireError(
                    f"the connection to {self.name} failed: {failure_reason(exc)}", retryable=True
                ) from None
            except WireError:
                self._drop()
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def close(self) -> None:
        """Close every thread's connection (a later request opens new ones)."""
        with self._lock:
            every = list(self._every)
        for connection in every:
            connection.close()
        self._local = threading.local()

    # -- connections

    def _open(self, deadline: float) -> _Connection:
        """A new connection, as ``http.client`` opens one (``TCP_NODELAY``, TLS with the host name)."""
        sock = socket.create_connection(self._address, _left(deadline))
        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=self._host)
        except BaseException:
            sock.close()
            raise
        connection = self._local.connection = _Connection(sock)
        with self._lock:
            self._every.add(connection)
        return connection

    def _drop(self) -> None:
        """Close this thread's connection (after a failure or an answer that ends it)."""
        connection: _Connection | None = getattr(self._local, "connection", None)
        self._local.connection = None
        if connection is not None:
            connection.close()

    # -- one exchange

    def _exchange(self, connection: _Connection, request: WireRequest) -> WireResponse:
        protocol, sock, deadline = connection.protocol, connection.sock, request.deadline
        protocol.send(self._told[request.method])
        protocol.send(_END)
        sock.settimeout(_left(deadline))
        try:
            sock.sendall(request.data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise _Stale(exc) from None
        response: h11.Response | None = None
        parts: list[bytes] = []
        kept = 0
        heard = closed = False
        needs_data = not protocol.trailing_data[0]  # nothing buffered from before: read, then ask h11
        while True:
            if needs_data:
                if closed:  # the connection ended in the middle of the status line or the headers
                    raise self._not_http(response)
                data = _receive(sock, deadline, heard)
                heard, closed = True, not data
                protocol.receive_data(data)
            try:
                event = protocol.next_event()
            except h11.RemoteProtocolError:
                raise self._not_http(response) from None
            needs_data = event is h11.NEED_DATA
            if isinstance(event, h11.Data):
                kept += len(event.data)
                parts.append(event.data)
                if kept > self.max_body:
                    self._drop()
                    return self._response(response, parts, complete=False)
            elif isinstance(event, h11.Response):
                response = event
                if len(response.headers) > MAX_HEADERS:
                    raise WireError(f"{self.name} did not answer in HTTP (HTTPException)", retryable=False)
            elif isinstance(event, h11.EndOfMessage):
                break
            elif isinstance(event, h11.ConnectionClosed):
                raise self._not_http(response)
            # an interim 1xx response (h11.InformationalResponse) is passed over
        if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
            protocol.start_next_cycle()
        else:  # the server closes after this answer (Connection: close, HTTP/1.0, a body up to the close)
            self._drop()
        return self._response(response, parts, complete=True)

    def _response(self, response: h11.Response | None, parts: list[bytes], *, complete: bool) -> WireResponse:
        assert response is not None
        body = b"".join(parts)
        return WireResponse(response.status_code, response.reason.decode("latin-1"), response.headers, body, complete)

    def _failed(self, exc: BaseException) -> WireError:
        return WireError(f"the connection to {self.name} failed: {failure_reason(exc)}", retryable=True)

    def _not_http(self, response: h11.Response | None) -> WireError:
        """Bytes ``h11`` cannot read as an answer, named as ``http.client`` names them: no status
        line and headers (``BadStatusLine``), or a body cut short (``IncompleteRead``)."""
        problem = "BadStatusLine" if response is None else "IncompleteRead"
        return WireError(f"{self.name} did not answer in HTTP ({problem})", retryable=False)


def _receive(sock: socket.socket, deadline: float, heard: bool) -> bytes:
    """The next bytes of the answer (b"" at its close), within what is left of its time; a
    connection closed or reset before the answer's first byte is :class:`_Stale`."""
    sock.settimeout(_left(deadline))
    try:
        data = sock.recv(_RECEIVE_BYTES)
    except ConnectionResetError as exc:
        if heard:
            raise
        raise _Stale(exc) from None
    if not data and not heard:
        raise _Stale("Remote end closed connection without response")
    return data


def _left(deadline: float) -> float:
    """What is left of the request's time, for the next socket operation."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request's time ran out")
    return left


def failure_reason(exc: BaseException) -> str:
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
    if isinstance(exc, _Stale) and exc.args and isinstance(exc.args[0], str):
        return exc.args[0]
    return type(exc).__name__
