"""What ``goldeneval.http`` and ``goldeneval.command`` share: both measure a system goldeneval
does not hold, so both read its answers warily and keep its secrets out of every record.

* :class:`SearchError` — one question the system could not answer; it becomes that question's
  error (``ERROR: SearchError: ...``), never the end of the run.
* secrets: an option value that looks like a credential is refused as a provenance value is
  (:func:`goldeneval.core.secret_scan.looks_like_secret`); credentials come from environment
  variables, written ``${NAME}`` in an option value and read when the retriever is built
  (:func:`expand_environment`).
* provenance: the options ``corpus_revision`` and ``model_revision`` (:func:`declared_revision`),
  and identities cut to what a provenance value may hold (:func:`bounded_identity`).
* what a response held, in a few words (:func:`describe_json`), and the check that ids are
  strings (:func:`string_ids`).
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from goldeneval.core.errors import GoldenEvalError, RetrieverError, error_problem, one_line
from goldeneval.core.provenance import MAX_VALUE_LENGTH, Provenance
from goldeneval.core.secret_scan import looks_like_secret
from goldeneval.retrieval.retrievers.base import RetrieverContext, option_label
from goldeneval.retrieval.retrievers.options import str_option

__all__ = [
    "ENV_PLACEHOLDER",
    "REVISION_OPTIONS",
    "SearchError",
    "bounded_identity",
    "checked_revision",
    "declared_revision",
    "describe_json",
    "expand_environment",
    "refuse_secret",
    "string_ids",
    "without_placeholders",
]

REVISION_OPTIONS = ("corpus_revision", "model_revision")
ENV_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
"""``${NAME}``: the value of environment variable ``NAME``, read when the retriever is built."""


class SearchError(GoldenEvalError):
    """The system could not answer one question (that question's error, not the run's)."""


def without_placeholders(value: str) -> str:
    """``value`` with every ``${NAME}`` removed: the part written in the option itself."""
    return ENV_PLACEHOLDER.sub("", value)


PLACEHOLDER_HINT = (
    "export it in an environment variable and write ${NAME} in its place "
    "(quote the option so that the shell does not expand it)"
)


def refuse_secret(text: str, label: str, hint: str = PLACEHOLDER_HINT) -> None:
    """Refuse ``text`` (written in an option, placeholders removed) when it looks like a credential."""
    kind = looks_like_secret(text)
    if kind:
        raise RetrieverError(f"{label}: looks like a secret ({kind}); {hint}")


def expand_environment(value: str, label: str, secrets: list[str]) -> str:
    """``value`` with each ``${NAME}`` replaced by that environment variable, which must be set
    and not empty; every value read is appended to ``secrets`` (to keep it out of messages)."""

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        found = os.environ.get(name)
        if not found:
            raise RetrieverError(f"{label}: environment variable {name} is not set (or is empty)")
        secrets.append(found)
        return found

    return ENV_PLACEHOLDER.sub(value_of, value)


def declared_revision(context: RetrieverContext, name: str, retriever_id: str) -> str | None:
    """Option ``name`` (``corpus_revision`` or ``model_revision``), checked as a provenance value."""
    value = str_option(context, name, retriever_id=retriever_id)
    if value is None:
        return None
    return checked_revision(value.strip(), option_label(name, retriever_id), name)


def checked_revision(value: str, source: str, field: str) -> str:
    """``value`` when it may be stored as provenance field ``field``, else an error naming ``source``."""
    try:
        Provenance.model_validate({field: value})
    except ValidationError as exc:
        raise RetrieverError(f"{source}: cannot be the {field}: {error_problem(exc.errors()[0])}") from None
    return value


def bounded_identity(text: str) -> str:
    """``text`` when it fits a provenance value; else its start and a digest of all of it."""
    text = one_line(text, 10 * MAX_VALUE_LENGTH)
    if len(text) <= MAX_VALUE_LENGTH:
        return text
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    tail = f"... sha256:{digest}"
    return text[: MAX_VALUE_LENGTH - len(tail)] + tail


def describe_json(value: Any) -> str:
    """What a JSON value is, in a few words: ``an object with keys took, hits``, ``a number (17)``."""
    if isinstance(value, Mapping):
        keys = ", ".join(one_line(str(key), 40) for key in list(value)[:8])
        more = ", ..." if len(value) > 8 else ""
        return f"an object with keys {keys}{more}" if value else "an empty object"
    if isinstance(value, list):
        return f"a list of {len(value)} item{'' if len(value) == 1 else 's'}" if value else "an empty list"
    if isinstance(value, str):
        return f"a string ({one_line(repr(value), 60)})"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return f"a number ({one_line(repr(value), 40)})"
    return type(value).__name__


def string_ids(values: list[Any], where: Callable[[int], str]) -> list[str]:
    """``values`` when every one is a string; else an error naming the first that is not,
    where ``where(position)`` says where it was found (``hits.hits[2]._id``)."""
    try:
        "".join(values)  # one C-level pass when every value is a string (the usual case)
    except TypeError:
        for position, value in enumerate(values):
            if not isinstance(value, str):
                raise SearchError(f"{where(position)} is {describe_json(value)}, not a string id") from None
    return values
