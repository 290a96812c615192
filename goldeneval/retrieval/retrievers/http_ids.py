"""Where the ids are in a search service's answer: the default contract of ``goldeneval.http``
(a list of ids, ``{"ids": [...]}``, or ``{"results" | "hits": [{"id": ...}]}``) and the
``ids_path`` option (a dotted path with ``[*]`` and ``[N]``).  An answer without string ids
where they should be is that question's :class:`SearchError`, saying what was found."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers.external import SearchError, describe_json, string_ids

__all__ = ["IdsPath", "default_ids"]


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
