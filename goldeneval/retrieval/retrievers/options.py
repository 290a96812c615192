"""Reading a retriever's ``--option KEY=VALUE`` pairs: typed, and strict about typos.

A retriever declares the options it understands; any other key fails with the list of
known ones, so that ``chunk_sise=64`` is an error rather than a silently ignored setting.
Values are checked as they are read: a number must be finite (``nan`` and ``inf`` are
errors) and within the option's range.  Built-in retrievers pass ``retriever_id`` so that
an error names the retriever as well as the option.
"""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers.base import RetrieverContext, number_option, option_label

__all__ = ["check_known_options", "float_option", "int_option", "path_option", "str_option"]


def check_known_options(context: RetrieverContext, retriever_id: str, known: Collection[str]) -> None:
    unknown = sorted(set(context.options) - set(known))
    if unknown:
        raise RetrieverError(
            f"retriever {retriever_id!r}: unknown option(s) {', '.join(unknown)} "
            f"(known: {', '.join(sorted(known)) or 'none'})"
        )


def str_option(context: RetrieverContext, name: str, *, retriever_id: str | None = None) -> str | None:
    raw = context.options.get(name)
    if raw is not None and not raw.strip():
        raise RetrieverError(f"{option_label(name, retriever_id)}: must not be empty")
    return raw


def int_option(
    context: RetrieverContext, name: str, *, minimum: int = 0, retriever_id: str | None = None
) -> int | None:
    def problem(_raw: str, value: int) -> str | None:
        return f"must be at least {minimum}, got {value}" if value < minimum else None

    return number_option(context, name, int, "an integer", problem, retriever_id=retriever_id)


def float_option(
    context: RetrieverContext,
    name: str,
    default: float,
    *,
    minimum: float = 0.0,
    maximum: float | None = None,
    retriever_id: str | None = None,
) -> float:
    """A finite number in ``[minimum, maximum]`` (no maximum unless given), else ``default``."""
    return context.float_option(name, default, minimum=minimum, maximum=maximum, retriever_id=retriever_id)


def path_option(context: RetrieverContext, name: str, *, retriever_id: str | None = None) -> Path | None:
    raw = str_option(context, name, retriever_id=retriever_id)
    if raw is None:
        return None
    path = Path(raw).expanduser()
    if not path.exists():
        raise RetrieverError(f"{option_label(name, retriever_id)}: {path} does not exist")
    return path
