"""``goldeneval.openai``: a client of the OpenAI-compatible chat-completions API.

vLLM, Ollama, llama.cpp's server and hosted APIs all speak it: ``POST <base_url>/chat/completions``
with ``{"model", "messages", "temperature", "max_tokens"}``, answered by
``{"choices": [{"message": {"content": ...}}]}``.  Standard library only (urllib).

Options: ``base_url`` (required, e.g. ``http://127.0.0.1:8000/v1``), ``model`` (required: the
server's model name), ``api_key_env`` (the environment variable holding the API key, default
``OPENAI_API_KEY``; unset means no ``Authorization`` header — local servers need none; the
key itself is never an option, never stored, never printed), ``timeout_s`` (30), ``max_retries``
(2: HTTP 429 and 5xx and unreachable servers are retried with exponential backoff from
``backoff_s``, 0.5 s, honouring ``Retry-After`` up to 30 s; a timeout is not retried),
``temperature`` (0), ``max_tokens`` (unset) and ``revision`` — an immutable revision the
operator declares for the served model.  Without one, the model name is recorded as what it
is, a mutable alias (``<name> (mutable alias)``), never as a revision.  ``input_price`` and
``output_price`` (unset) are the prices of a million prompt and completion tokens: with them,
the ``usage`` the server reports becomes the run's cost (:mod:`goldeneval.prompts.usage`).

A request at temperature 0 is deterministic: :meth:`OpenAIChatModel.cache_request` gives the
response cache the full request as sent (never the API key, never a header).

The series of a run defaults to :func:`series_name`, ``openai:<model>``: two served models
behind this one factory are two series, each with its own history and quality score.  The
``model`` field of each answer (what the server says it served: the snapshot an alias resolved
to) is recorded (:meth:`OpenAIChatModel.served_models`) and joins the run's model revision
(``<name> (mutable alias); served=<snapshot>``, issue 42), so an alias that moved to a new
snapshot is shown as a treatment change.

Nothing is called unless a run names this model.
"""

from __future__ import annotations

import json
import os
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from goldeneval.core.errors import one_line
from goldeneval.core.provenance import NOT_APPLICABLE, Provenance, canonical_text
from goldeneval.core.retry_after import RetryableError, retry_after_s
from goldeneval.prompts.models import ChatRequest, ModelConfigError, ModelContext, ModelError
from goldeneval.prompts.usage import Prices, Usage, parse_usage

__all__ = ["DEFAULT_API_KEY_ENV", "MODEL_ID", "SERIES_PREFIX", "OpenAIChatModel", "build", "series_name"]

MODEL_ID = "goldeneval.openai"
DEFAULT_API_KEY_ENV = "OPENAI_API_KEY"
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RETRIES = 2
DEFAULT_BACKOFF_S = 0.5
MAX_RETRY_AFTER_S = 30.0
RETRYABLE = frozenset({408, 409, 425, 429, 500, 502, 503, 504})
MUTABLE_ALIAS = " (mutable alias)"
MAX_SERVED_NAMES = 8
"""At most this many distinct served names are recorded for a run."""
MAX_SERVED_NAME = 120
SERIES_PREFIX = "openai:"
_OPTIONS = ("base_url", "model", "api_key_env", "timeout_s", "max_retries", "backoff_s", "temperature",
            "max_tokens", "revision", "input_price", "output_price")  # fmt: skip


class _Retryable(RetryableError, ModelError):
    """A failed call worth another attempt, still a :class:`ModelError` to anyone who catches one."""


class OpenAIChatModel:
    """One chat-completions endpoint and model name."""

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        api_key_env: str = DEFAULT_API_KEY_ENV,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        max_retries: int = DEFAULT_MAX_RETRIES,
        backoff_s: float = DEFAULT_BACKOFF_S,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        revision: str | None = None,
        prices: Prices | None = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.backoff_s = backoff_s
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.revision = revision
        self.prices = prices
        """Prices per million tokens (the run's cost), or None."""
        self._sleep = sleep
        self.attempts = 0
        """HTTP requests sent so far (for reports and tests)."""
        self._attempts_lock = threading.Lock()  # calls may run in parallel (--workers)
        self._served: dict[str, None] = {}
        """The ``model`` names the server's answers carried, in the order first seen."""

    @property
    def endpoint(self) -> str:
        """``scheme://host[:port]``: what the circuit breaker and the provenance name (no path,
        no credentials)."""
        parts = urllib.parse.urlsplit(self.url)
        host = parts.hostname or "unknown"
        return f"{parts.scheme}://{host}" + (f":{parts.port}" if parts.port else "")

    def _document(self, request: ChatRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.to_json() for m in request.messages],
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        return body

    def _body(self, request: ChatRequest) -> bytes:
        return json.dumps(self._document(request)).encode("utf-8")

    def cache_request(self, request: ChatRequest) -> str | None:
        """The full request as sent (URL and body), or None above temperature 0, where two
        calls may rightly answer differently."""
        if self.uncached_because is not None:
            return None
        return canonical_text({"url": self.url, "body": self._document(request)})

    @property
    def uncached_because(self) -> str | None:
        """Why no answer of this model is cached, for the run output; None: they are."""
        return "temperature above 0: two calls may rightly differ" if self.temperature > 0 else None

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json", "User-Agent": "goldeneval"}
        key = os.environ.get(self.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def _once(self, data: bytes) -> tuple[str, Usage | None]:
        with self._attempts_lock:
            self.attempts += 1
        http_request = urllib.request.Request(self.url, data=data, headers=self._headers(), method="POST")
        try:
            with urllib.request.urlopen(http_request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = one_line(exc.read(300).decode("utf-8", "replace"), 160)
            message = f"HTTP {exc.code} {exc.reason}" + (f": {detail}" if detail else "")
            if exc.code in RETRYABLE:
                raise _Retryable(message, retry_after_s(exc.headers.get("Retry-After"), MAX_RETRY_AFTER_S)) from None
            raise ModelError(message) from None
        except TimeoutError:
            raise ModelError(f"timed out after {self.timeout_s:g} s") from None
        except urllib.error.URLError as exc:
            if isinstance(exc.reason, TimeoutError):
                raise ModelError(f"timed out after {self.timeout_s:g} s") from None
            raise _Retryable(f"unreachable: {one_line(str(exc.reason), 120)}") from None
        except OSError as exc:
            raise _Retryable(f"connection failed: {one_line(str(exc), 120)}") from None
        content, usage, served = self._content(raw)
        if served is not None:
            with self._attempts_lock:
                if served not in self._served and len(self._served) < MAX_SERVED_NAMES:
                    self._served[served] = None
        return content, usage

    def served_models(self) -> tuple[str, ...]:
        """The model names the server returned so far (its ``model`` field, e.g. the snapshot
        an alias resolved to), in the order first seen; empty when it returned none."""
        with self._attempts_lock:
            return tuple(self._served)

    @staticmethod
    def _content(raw: bytes) -> tuple[str, Usage | None, str | None]:
        try:
            document = json.loads(raw)
            content = document["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise ModelError(
                f"malformed chat-completions response: {one_line(raw.decode('utf-8', 'replace'), 120)!r}"
            ) from None
        if not isinstance(content, str):
            raise ModelError(f"malformed chat-completions response: content is {type(content).__name__}")
        served = document.get("model")
        name = one_line(served, MAX_SERVED_NAME) if isinstance(served, str) and served.strip() else None
        return content, parse_usage(document.get("usage")), name

    def complete(self, request: ChatRequest) -> str:
        return self.complete_with_usage(request)[0]

    def complete_with_usage(self, request: ChatRequest) -> tuple[str, Usage | None]:
        """The answer and the ``usage`` the server reported with it (None when it did not)."""
        data = self._body(request)
        for attempt in range(self.max_retries + 1):
            try:
                return self._once(data)
            except _Retryable as exc:
                if attempt == self.max_retries:
                    tries = f"{attempt + 1} attempt{'s' if attempt else ''}"
                    raise ModelError(f"{exc} (after {tries})") from None
                wait = exc.retry_after_s if exc.retry_after_s is not None else self.backoff_s * (2**attempt)
                self._sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover

    def provenance(self) -> Provenance:
        endpoint = self.endpoint
        settings = f"temperature={self.temperature:g}" + (
            f",max_tokens={self.max_tokens}" if self.max_tokens is not None else ""
        )
        revision = f"{self.model}@{self.revision}" if self.revision else f"{self.model}{MUTABLE_ALIAS}"
        return Provenance(
            corpus_revision=NOT_APPLICABLE,
            model_revision=revision[:200],
            chunking_identity=NOT_APPLICABLE,
            pipeline_identity=f"{MODEL_ID}/chat-completions({endpoint},{settings})"[:200],
        )


def series_name(served_model: str) -> str:
    """The default series of a served model, e.g. ``openai:gpt-4o-mini``: the served name, not
    the factory id, so that two served models never share a series or a quality score.  It is a
    name, not a revision: what the name served is recorded in the provenance (a mutable alias
    unless ``revision`` is declared, ADR-215)."""
    return f"{SERIES_PREFIX}{served_model}"


def build(context: ModelContext) -> OpenAIChatModel:
    context.check_known(_OPTIONS)
    base_url = context.string("base_url")
    model = context.string("model")
    if not base_url or not model:
        missing = " and ".join(repr(n) for n, v in (("base_url", base_url), ("model", model)) if not v)
        raise ModelConfigError(
            f"model {MODEL_ID!r}: option {missing} required, e.g. --model-option base_url=http://127.0.0.1:8000/v1 "
            "--model-option model=NAME"
        )
    parts = urllib.parse.urlsplit(base_url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ModelConfigError(f"{context.label('base_url')}: expected an http(s) URL, got {one_line(base_url, 80)!r}")
    if parts.username or parts.password:
        raise ModelConfigError(
            f"{context.label('base_url')}: holds credentials; put the API key in an environment variable "
            "named by api_key_env"
        )
    max_tokens = context.integer("max_tokens", 0, minimum=0)
    priced = [name for name in ("input_price", "output_price") if context.string(name) is not None]
    prices = None
    if priced:
        if len(priced) == 1:
            other = "output_price" if priced[0] == "input_price" else "input_price"
            raise ModelConfigError(f"{context.label(priced[0])}: needs {other!r} too (prices per million tokens)")
        prices = Prices(
            context.number("input_price", 0.0, minimum=0, maximum=1e6),
            context.number("output_price", 0.0, minimum=0, maximum=1e6),
        )
    return OpenAIChatModel(
        base_url,
        model,
        api_key_env=context.string("api_key_env", DEFAULT_API_KEY_ENV) or DEFAULT_API_KEY_ENV,
        timeout_s=context.number("timeout_s", DEFAULT_TIMEOUT_S, minimum=0.001, maximum=3600),
        max_retries=context.integer("max_retries", DEFAULT_MAX_RETRIES, minimum=0, maximum=10),
        backoff_s=context.number("backoff_s", DEFAULT_BACKOFF_S, minimum=0, maximum=60),
        temperature=context.number("temperature", 0.0, minimum=0, maximum=2),
        max_tokens=max_tokens or None,
        revision=context.string("revision"),
        prices=prices,
    )
