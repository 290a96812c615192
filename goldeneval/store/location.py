"""Where a store lives: a DuckDB path or a PostgreSQL URL, with its secrets kept out of every message."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from goldeneval.core.errors import InputError
from goldeneval.core.storage import STORE, URL_SCHEME, resolve

_URL_SCHEME = URL_SCHEME
POSTGRES_SCHEMES = ("postgresql", "postgres")
_SECRET_PARAMETERS = frozenset({"password", "passfile", "sslpassword"})


def _secret_spans(url: str) -> list[tuple[int, int]]:
    """Where ``url`` holds secrets: the password of its user part and the values of its
    ``password``-like query parameters (keys percent-decoded, as libpq reads them)."""
    match = _URL_SCHEME.match(url)
    if match is None:
        return []
    start, rest = match.end(), url[match.end() :]
    # The user part ends at the last '@' before the path; an unencoded '/' in a password ends
    # the authority early (libpq cannot use that URL, but its message still must not show it).
    at = rest.partition("/")[0].rfind("@")
    if at < 0:
        at = rest.partition("?")[0].rfind("@")
    spans = []
    colon = rest.find(":", 0, at) if at >= 0 else -1
    if colon >= 0:
        spans.append((start + colon + 1, start + at))
    query = rest.find("?", max(at, 0))
    if query >= 0:
        position = start + query + 1
        for part in url[position:].split("&"):
            key, equals, value = part.partition("=")
            if equals and value and unquote(key).strip().lower() in _SECRET_PARAMETERS:
                spans.append((position + len(key) + 1, position + len(part)))
            position += len(part) + 1
    return spans


def url_secrets(url: str) -> list[str]:
    """The secrets written in ``url`` as they appear there and percent-decoded, longest first:
    what a driver's message must not quote."""
    found = {url[begin:end] for begin, end in _secret_spans(url)}
    found |= {unquote(secret) for secret in found}
    return sorted((secret for secret in found if secret), key=len, reverse=True)


def redact_url(url: str) -> str:
    """``url`` with any password (in the user part or the query) replaced by ``***``: the form
    a store URL is shown in, in messages, reports and metadata."""
    shown, end = [], 0
    for begin, stop in _secret_spans(url):
        shown += [url[end:begin], "***"]
        end = stop
    return "".join(shown) + url[end:]


@dataclass(frozen=True)
class StoreLocation:
    """Where a result store lives: a DuckDB file (``path``) or a PostgreSQL database (``url``).

    ``str()`` gives the form to show: the path, or the URL with its password redacted.  The
    URL itself (password included) is only ever handed to the database driver.
    """

    path: Path | None = None
    url: str | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if (self.path is None) == (self.url is None):
            raise ValueError("a store location is either a path or a URL")

    @classmethod
    def parse(cls, value: StoreLocation | str | os.PathLike[str]) -> StoreLocation:
        """A ``postgresql://`` (or ``postgres://``) URL, else a DuckDB file path.  Any other
        ``scheme://`` is refused rather than taken for a file name."""
        if isinstance(value, StoreLocation):
            return value
        if not isinstance(value, str):
            return cls(path=Path(value))
        match = _URL_SCHEME.match(value)
        if match is None:
            return cls(path=Path(value))
        if match.group(1).lower() not in POSTGRES_SCHEMES:
            raise InputError(
                f"store {redact_url(value)}: unsupported URL scheme {match.group(1)!r}; "
                "give a DuckDB file path or a postgresql:// URL"
            )
        return cls(url=match.group(1).lower() + value[len(match.group(1)) :])  # libpq knows only lower case

    @property
    def is_postgres(self) -> bool:
        return self.url is not None

    @property
    def shown_without_secrets(self) -> bool:
        """Whether ``str()`` hides a password (shown as ``***``): what it shows cannot be used as is."""
        return self.url is not None and redact_url(self.url) != self.url

    def __str__(self) -> str:
        return str(self.path) if self.path is not None else redact_url(self.url or "")


def resolve_store(
    option: StoreLocation | str | os.PathLike[str] | None = None,
    *,
    suite_value: str | None = None,
    suite_folder: Path | None = None,
) -> StoreLocation:
    """``--store`` if given, else ``$GOLDENEVAL_STORE``, else the suite file's ``storage.store``
    (relative to ``suite_folder``), else ``.goldeneval/results.duckdb``
    (:func:`goldeneval.core.storage.resolve`): a DuckDB path or a ``postgresql://`` URL."""
    if isinstance(option, StoreLocation):
        return option
    return StoreLocation.parse(resolve(STORE, option, suite_value=suite_value, suite_folder=suite_folder))


def resolve_store_path(option: str | Path | None = None) -> Path:
    """The DuckDB file :func:`resolve_store` names; a PostgreSQL URL is invalid input here
    (callers that accept both use :func:`resolve_store` and :func:`open_store`)."""
    location = resolve_store(option)
    if location.path is None:
        raise InputError(f"store {location}: a PostgreSQL URL where a DuckDB file path is needed")
    return location.path
