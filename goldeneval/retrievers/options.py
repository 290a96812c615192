"""Reading a retriever's ``--option KEY=VALUE`` pairs: typed, and strict about typos.

A retriever declares the options it understands; any other key fails with the list of
known ones, so that ``chunk_sise=64`` is an error rather than a silently ignored setting.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from goldeneval.errors import RetrieverError
from goldeneval.retrievers.base import RetrieverContext

__all__ = ["check_known_options", "float_option", "int_option", "path_option", "str_option"]


def check_known_options(context: RetrieverContext, retriever_id: str, known: Collection[str]) -> None:
    unknown = sorted(set(context.options) - set(known))
    if unknown:
        raise RetrieverError(
            f"retriever {retriever_id!r}: unknown option(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(known)) or 'none'})"
        )


def str_option(context: RetrieverContext, name: str) -> str | None:
    raw = context.options.get(name)
    if raw is not None and not raw.strip():
        raise RetrieverError(f"retriever option {name!r}: must not be empty")
    return raw


def int_option(context: RetrieverContext, name: str, *, minimum: int = 0) -> int | None:
    raw = context.options.get(name)
    if raw is None:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise RetrieverError(f"retriever option {name!r}: expected an integer, got {raw!r}") from None
    if value < minimum:
        raise RetrieverError(f"retriever option {name!r}: must be at least {minimum}, got {value}")
    return value


def float_option(context: RetrieverContext, name: str, default: float, *, minimum: float = 0.0) -> float:
    value = context.float_option(name, default)
    if not value >= minimum:
        raise RetrieverError(f"retriever option {name!r}: must be at least {minimum:g}, got {value:g}")
    return value


def path_option(context: RetrieverContext, name: str) -> Path | None:
    raw = str_option(context, name)
    if raw is None:
        return None
    path = Path(raw).expanduser()
    if not path.exists():
        raise RetrieverError(f"retriever option {name!r}: {path} does not exist")
    return path
