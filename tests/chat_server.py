"""A real chat-completions server on 127.0.0.1 for the tests: it speaks the OpenAI-compatible
API (``POST /v1/chat/completions``) and answers from a script — scripted answers, malformed
output, HTTP 429 then success, 500s, a slow answer past the client's timeout."""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

SHUTDOWN_POLL_S = 0.02
"""How often a test server's loop looks for ``shutdown()`` (the standard library's 0.5 s made
each test that starts one half a second longer)."""


class LocalTestServer(ThreadingHTTPServer):
    """The test servers' HTTP server: handler threads never keep the process alive, and a client
    that hung up (its timeout) is no error: socketserver would print a traceback to stderr from
    a handler thread, into whatever test's captured output runs then."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


@dataclass(frozen=True)
class Reply:
    """One scripted reply: an HTTP status, a body, optional headers and a delay before it;
    ``wait`` is called before it is sent, outside the server's lock (a barrier that only
    requests served at the same time get past)."""

    status: int = 200
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    delay_s: float = 0.0
    wait: Callable[[], object] | None = None


def answer(content: str, *, delay_s: float = 0.0, wait: Callable[[], object] | None = None) -> Reply:
    """A well-formed chat-completions answer."""
    document = {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }
    return Reply(200, json.dumps(document).encode(), (("Content-Type", "application/json"),), delay_s, wait)


def verdict(score: Any, reason: str = "scripted") -> Reply:
    return answer(json.dumps({"score": score, "reason": reason}))


def error(status: int, message: str = "scripted failure", *, retry_after: str | None = None) -> Reply:
    headers = (("Retry-After", retry_after),) if retry_after is not None else ()
    return Reply(status, json.dumps({"error": {"message": message}}).encode(), headers)


@dataclass
class ChatServer:
    base_url: str = ""
    script: list[Reply] = field(default_factory=list)
    """Replies in order; when empty, ``default`` answers."""
    default: Callable[[dict[str, Any]], Reply] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)


@contextmanager
def chat_server(*replies: Reply, default: Callable[[dict[str, Any]], Reply] | None = None) -> Iterator[ChatServer]:
    server_state = ChatServer(script=list(replies), default=default)
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            with lock:
                server_state.requests.append(body)
                server_state.headers.append({k: v for k, v in self.headers.items()})
                server_state.paths.append(self.path)
                if server_state.script:
                    reply = server_state.script.pop(0)
                elif server_state.default is not None:
                    reply = server_state.default(body)
                else:
                    reply = error(500, "script exhausted")
            if reply.wait is not None:
                reply.wait()
            if reply.delay_s:
                time.sleep(reply.delay_s)
            try:
                self.send_response(reply.status)
                for name, value in reply.headers:
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
                pass

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = LocalTestServer(("127.0.0.1", 0), Handler)
    server_state.base_url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, args=(SHUTDOWN_POLL_S,), name="chat-server", daemon=True)
    thread.start()
    try:
        yield server_state
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def last_user_message(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "user"][-1]["content"])
