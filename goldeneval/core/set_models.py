"""What the set models of every kind share: text that is more than whitespace, ids unique
within a set, the set's own fields and its corpus beside the file, the published JSON Schema,
and the validation of a file's items one by one, so that the first bad item is named.

A kind's models (golden questions, golden prompts) subclass :class:`SetItem` and
:class:`SetModel` and add what their items mean; reading the file's bytes and syntax is
:mod:`goldeneval.core.set_files`'.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Annotated, Any, Self, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from goldeneval.core.errors import SetFileError

__all__ = [
    "NonBlankText",
    "SetItem",
    "SetModel",
    "non_blank",
    "published_schema",
    "unique_ids",
    "validate_items",
]


def non_blank(value: str) -> str:
    """``value``, refused when it is empty or only whitespace (an id, a question, a prompt)."""
    if not value.strip():
        raise ValueError("must not be empty or only whitespace")
    return value


NonBlankText = Annotated[str, AfterValidator(non_blank)]
"""A set model's text field that must hold more than whitespace."""


class SetItem(BaseModel):
    """What an item of every kind's set has: an id, unique within the set."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: NonBlankText = Field(min_length=1, max_length=200, description="Unique within the set.")


Item = TypeVar("Item", bound=SetItem)


def unique_ids(noun: str) -> AfterValidator:
    """A validator of a set's items that refuses two with one id (``duplicate prompt id 'p1'``)."""

    def unique(items: tuple[Item, ...]) -> tuple[Item, ...]:
        seen: set[str] = set()
        for item in items:
            if item.id in seen:
                raise ValueError(f"duplicate {noun} id {item.id!r}")
            seen.add(item.id)
        return items

    return AfterValidator(unique)


class SetModel(BaseModel):
    """What the set model of every kind has: an id, a description and an optional corpus
    named relative to the set file (each kind words the id's and the corpus's description)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: NonBlankText = Field(min_length=1, max_length=200)
    description: str = Field(default="", description="What the set measures.")
    corpus: str | None = None

    def with_corpus_beside(self, path: Path) -> Self:
        """The set read from ``path``, its relative ``corpus`` resolved against the file's folder."""
        if self.corpus is None or Path(self.corpus).is_absolute():
            return self
        return self.model_copy(update={"corpus": str((path.parent / self.corpus).resolve())})


def published_schema(set_model: type[BaseModel], name: str) -> dict[str, Any]:
    """The JSON Schema of a kind's YAML/JSON set file, generated from its model, as published
    at ``https://goldeneval.dev/schema/<name>.schema.json``."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://goldeneval.dev/schema/{name}.schema.json",
        **set_model.model_json_schema(),
    }


def validate_items(
    path: Path,
    raw_items: Iterable[Any],
    item_model: type[Item],
    error: type[SetFileError],
    *,
    describe: Callable[[ValidationError], tuple[str, str]],
    quote_id: Callable[[str], str],
) -> Iterator[Item]:
    """Each item of the set file ``path`` validated by ``item_model``, in order.  The first
    that is not a mapping, does not validate (``describe`` words pydantic's first error as
    ``(field, problem)``) or repeats an earlier item's id is refused naming its position, its
    id (as ``quote_id`` cuts it) and the field."""
    first_position: dict[str, int] = {}
    for position, item in enumerate(raw_items, start=1):
        raw_id = item.get("id") if isinstance(item, Mapping) else None
        item_id = quote_id(raw_id) if isinstance(raw_id, str) else None
        if not isinstance(item, Mapping):
            raise error(path, f"must be a mapping, found {type(item).__name__}", position=position)
        try:
            validated = item_model.model_validate(dict(item))
        except ValidationError as exc:
            field, problem = describe(exc)
            raise error(path, problem, position=position, item_id=item_id, field=field) from None
        if validated.id in first_position:
            raise error(
                path,
                f"duplicate {error.item} id (first used by {error.item} #{first_position[validated.id]})",
                position=position,
                item_id=validated.id,
                field="id",
            )
        first_position[validated.id] = position
        yield validated
