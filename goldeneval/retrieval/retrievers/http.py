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

The wire is :mod:`goldeneval.retrieval.retrievers.http_wire`, behind its ``send(request) ->
response`` seam: ``h11`` parses what the server sends, and each thread that asks questions
(``--workers``) keeps its own connection alive, so no connection is shared and no request waits
for another.  ``timeout_s`` bounds the whole response, its status line and headers included.
The request is encoded by :mod:`~goldeneval.retrieval.retrievers.http_request` (the headers
every request sends built once, the request sent in one write).  A response that is not JSON,
holds no ids where they should be, or holds an id that is not a string is that question's
error, saying what was found (:mod:`~goldeneval.retrieval.retrievers.http_ids`).

Secrets: every message a question's error carries goes through one
:class:`~goldeneval.retrieval.retrievers.redaction.Secrets`, which hides each value read from
the environment (and any prefix of one left at a cut edge) before anything is shortened, so a
service that echoes a token in an error page never has it stored or printed.

Provenance: the pipeline identity is the method and the endpoint (scheme, host, port, path
and the query parameters written in the URL, never those from the environment), plus a digest
of the request's shape when an option changes it; the corpus and model revisions are those
declared by ``corpus_revision`` / ``model_revision``, or read from the response header named
by ``corpus_revision_header`` / ``model_revision_header`` (a response without it, or with
another value than the first response's, is that question's error), and unknown otherwise.
"""

from __future__ import annotations

import dataclasses
import json
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from importlib.metadata import version as package_version
from typing import Any

from goldeneval.core.errors import RetrieverError
from goldeneval.core.provenance import Provenance
from goldeneval.core.retry_after import RetryableError, retry_after_s
from goldeneval.retrieval.retrievers.base import RetrieverContext, execution_revision, option_label
from goldeneval.retrieval.retrievers.external import (
    REVISION_OPTIONS,
    SearchError,
    bounded_identity,
    checked_revision,
    expand_environment,
    refuse_secret,
    without_placeholders,
)
from goldeneval.retrieval.retrievers.http_ids import IdsPath, default_ids
from goldeneval.retrieval.retrievers.http_request import (
    HEADER_PREFIX,
    RETRIEVER_ID,
    Endpoint,
    RequestShape,
    RequestWriter,
    mentions_question,
    parse_endpoint,
    split_server_url,
    with_environment,
)
from goldeneval.retrieval.retrievers.http_wire import (
    H11Transport,
    Headers,
    Transport,
    WireError,
    WireRequest,
    WireResponse,
    WireTimeout,
)
from goldeneval.retrieval.retrievers.options import check_known_options, float_option, int_option, str_option
from goldeneval.retrieval.retrievers.redaction import Secrets
from goldeneval.retrieval.retrievers.revisions import declared_revisions

__all__ = [
    "HEADER_OPTION",
    "HTTP_OPTIONS",
    "RETRIEVER_ID",
    "Endpoint",
    "HTTPRetriever",
    "IdsPath",
    "RequestShape",
    "build",
    "default_ids",
    "parse_endpoint",
    "split_server_url",
]

HEADER_OPTION = "header.NAME"
"""How the docs write the header options (``header.Authorization=Bearer ${TOKEN}``)."""
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
        transport: Transport | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.shape = shape or RequestShape()
        self.timeout_s, self.max_retries, self.backoff_s = timeout_s, max_retries, backoff_s
        self.revisions = dict(revisions or {})
        self.revision_headers = dict(revision_headers or {})
        """Provenance field -> the response header it is read from."""
        self.probe_question = probe_question
        self.secrets = Secrets(secrets)
        self._sleep = sleep
        sent = {"Accept": "application/json", "User-Agent": f"goldeneval/{package_version('goldeneval')}"}
        if endpoint.method == "POST":
            sent["Content-Type"] = "application/json"
        sent.update(headers or {})
        self._writer = RequestWriter(endpoint, self.shape, sent)
        self._transport: Transport = transport or H11Transport(
            endpoint.scheme,
            endpoint.host,
            endpoint.port,
            name=endpoint.base,
            max_body=MAX_RESPONSE_BYTES,
            closes=self._writer.closes,
        )
        self._seen: dict[str, str] = {}
        self._lock = threading.Lock()

    # -- the contract

    def retrieve(self, question: str, limit: int) -> list[str]:
        try:
            document = self._document(self._exchange(question, limit))
            ids = self._ids(document)
        except SearchError as exc:  # the one door of every message: secrets hidden, then it may be cut
            raise SearchError(self.secrets.hide(str(exc))) from None
        shape = self.shape
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
        self._transport.close()

    # -- one question

    def _exchange(self, question: str, limit: int) -> WireResponse:
        """A 2xx response, after any retries."""
        data = self._writer.encode(question, limit)
        deadline = time.monotonic() + self.timeout_s
        request = WireRequest(self.endpoint.method, data, deadline)
        attempts = 0
        while True:
            attempts += 1
            try:
                response = self._send(request)
            except RetryableError as exc:
                problem, wait = str(exc), exc.retry_after_s
            else:
                if self.revision_headers:
                    self._check_revisions(response.headers)
                return response
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

    def _send(self, request: WireRequest) -> WireResponse:
        """One exchange through the transport: a 2xx response, or the error it is."""
        try:
            response = self._transport.send(request)
        except WireTimeout:
            raise self._timed_out() from None
        except WireError as exc:
            if exc.retryable:
                raise RetryableError(str(exc)) from None
            raise SearchError(str(exc)) from None
        if not response.complete:
            raise SearchError(f"the response is larger than {MAX_RESPONSE_BYTES // (1024 * 1024)} MiB")
        if time.monotonic() > request.deadline:
            raise self._timed_out()
        status, body = response.status, response.body
        if 200 <= status < 300:
            return response
        headers = response.headers
        problem = f"HTTP {status} {self.secrets.quote(response.reason, 60)}".rstrip()
        snippet = self.secrets.quote(body, 120)
        problem += f": {snippet}" if snippet else ""
        if status in RETRYABLE_STATUS or 500 <= status < 600:
            raise RetryableError(problem, retry_after_s(headers.get("Retry-After")))
        if 300 <= status < 400:
            problem += " (redirects are not followed: give the final URL)"
        raise SearchError(problem)

    def _timed_out(self) -> SearchError:
        return SearchError(f"timed out after {self.timeout_s:g} s (option timeout_s)")

    def _document(self, response: WireResponse) -> Any:
        raw = response.body
        if not raw.strip():
            content_type = response.headers.get("Content-Type", "")
            raise SearchError(f"the response is empty (Content-Type {content_type or 'none'}); expected JSON")
        try:
            return json.loads(raw)
        except RecursionError:  # nested deeper than the parser goes: not a search answer either
            raise SearchError("the response is not JSON a search answer can be: nested too deeply") from None
        except ValueError:
            content_type = response.headers.get("Content-Type", "")
            found = self.secrets.quote(raw, 80)
            raise SearchError(f"the response is not JSON (Content-Type {content_type or 'none'}): {found!r}") from None

    def _ids(self, document: Any) -> list[str]:
        """The ids of an answer; an error about it describes the answer with every secret hidden."""
        path = self.shape.ids_path
        try:
            return path.ids(document) if path else default_ids(document, self.shape.id_field)
        except SearchError as exc:
            if not self.secrets:
                raise
            try:
                hidden = self.secrets.hide_in(document)
                path.ids(hidden) if path else default_ids(hidden, self.shape.id_field)
            except SearchError as said:
                raise said from None
            except RecursionError:
                pass
            raise SearchError("the response holds no ids where they should be") from exc

    # -- revisions read from headers

    def _check_revisions(self, headers: Headers) -> None:
        for name, header in self.revision_headers.items():
            value = headers.get(header)
            if value is None or not value.strip():
                raise SearchError(f"the response has no {header} header (option {name}_header)")
            with self._lock:
                first = self._seen.setdefault(name, value.strip())
            if value.strip() != first:
                raise SearchError(
                    f"the {header} header changed during the run: {self.secrets.quote(first, 60)!r} in the first "
                    f"response, {self.secrets.quote(value.strip(), 60)!r} in this one"
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
                f"header of {self.endpoint.identity}: {self.secrets.hide(str(exc))}"
            ) from None
        return self._seen[name]


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
    if not mentions_question(template):
        raise RetrieverError(f'{label}: must hold "{{question}}" somewhere, e.g. {{"query": "{{question}}"}}')
    refuse_secret(without_placeholders(raw), label)
    return with_environment(template, label, secrets), template


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
