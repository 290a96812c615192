"""Click options made from declared settings (:mod:`goldeneval.core.settings`): the flag, its
type, default, help and checks all come from the pydantic field, so a flag cannot drift from
the suite key and the specification field it sets.

A field's click type follows its annotation: ``bool`` a flag, a bounded ``int`` or ``float``
``click.IntRange`` / ``FloatRange`` (click's own wording for a value out of range), a
``Literal`` or an enum ``click.Choice``.  Whatever click accepts is then checked by the field's
own validator (:func:`goldeneval.core.settings.field_adapter`): a refusal is a usage error
naming the flag, exit 2, with the validator's message.
"""

from __future__ import annotations

import enum
import math
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import annotated_types
import click
from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo

from goldeneval.core.errors import validation_problem
from goldeneval.core.settings import Flag, field_adapter, flag_of, flagged_fields

__all__ = ["Decorator", "declared_option", "declared_options"]

Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def declared_options(model: type[BaseModel], *, help: Mapping[str, str] | None = None) -> list[Decorator]:
    """A click option for every field of ``model`` that declares a :class:`Flag`, in field
    order; each arrives in the command under the field's name, validated.  ``help`` replaces
    a field's description where one command needs other words (``--workers`` of ``answers``)."""
    overrides = help or {}
    return [declared_option(model, name, help=overrides.get(name)) for name in flagged_fields(model)]


def declared_option(
    model: type[BaseModel], name: str, *, help: str | None = None, flag: Flag | None = None, dest: str | None = None
) -> Decorator:
    """The click option of ``model``'s field ``name``: its flag (or ``flag``), received as
    ``dest`` (default: the field's name)."""
    info = model.model_fields[name]
    declared = flag or flag_of(info) or Flag()
    default = info.get_default(call_default_factory=True)
    text = help or declared.help or info.description or ""

    def check(_ctx: click.Context, _param: click.Parameter, value: Any) -> Any:
        if value is None:
            return None
        if declared.repeated:
            value = tuple(value)
        elif declared.off:
            value = not value
        elif isinstance(value, float) and not math.isfinite(value):  # click's ranges let NaN through
            raise click.BadParameter(f"{value} is not a finite number")
        try:
            return field_adapter(model, name).validate_python(value)  # built at first use, not at import
        except ValidationError as exc:
            raise click.BadParameter(validation_problem(exc)[1]) from None

    settings: dict[str, Any] = {"callback": check}
    value_type, metadata = _value_type(info)
    if value_type is bool:
        settings.update(is_flag=True, default=False if declared.off else bool(default))
    elif declared.repeated:
        settings.update(multiple=True, default=default)
        text += " Repeatable."
    elif declared.choices:
        settings.update(type=click.Choice(declared.choices), default=default, show_default=default is not None)
    elif declared.separated:
        settings.update(default=",".join(map(str, default)), show_default=True)
        text += " Comma-separated."
    else:
        settings.update(type=_click_type(value_type, metadata), default=default, show_default=default is not None)
    return click.option(declared.option(name), dest or name, help=text.strip(), **settings)


def _value_type(info: FieldInfo) -> tuple[Any, list[Any]]:
    """The type a flag's value has and the constraints on it: ``int`` for ``int | None`` (the
    option is optional by its default, not by its type), ``float`` and its bounds for
    ``Fraction | None`` (an ``Annotated`` type inside the union)."""
    value_type: Any = info.annotation
    metadata = list(info.metadata)
    if isinstance(value_type, types.UnionType) or typing.get_origin(value_type) is typing.Union:
        kept = [arg for arg in typing.get_args(value_type) if arg is not type(None)]
        if len(kept) == 1:
            value_type = kept[0]
    if typing.get_origin(value_type) is typing.Annotated:
        value_type, *extra = typing.get_args(value_type)
        for item in extra:
            metadata.extend(item.metadata if isinstance(item, FieldInfo) else [item])
    return value_type, metadata


def _click_type(value_type: Any, metadata: Sequence[Any]) -> click.ParamType[Any, Any] | type | None:
    if typing.get_origin(value_type) is typing.Literal:
        return click.Choice([str(choice) for choice in typing.get_args(value_type)])
    if isinstance(value_type, type) and issubclass(value_type, enum.Enum):
        return click.Choice([str(member.value) for member in value_type])
    if value_type in (int, float):
        low, high, low_open, high_open = _bounds(metadata)
        if low is None and high is None:
            return value_type  # type: ignore[no-any-return]
        if value_type is int:
            return click.IntRange(low, high, min_open=low_open, max_open=high_open)
        return click.FloatRange(low, high, min_open=low_open, max_open=high_open)
    return None


def _bounds(metadata: Sequence[Any]) -> tuple[Any, Any, bool, bool]:
    """(low, high, low open, high open) of a field's ``ge``/``gt``/``le``/``lt`` constraints."""
    low: Any = None
    high: Any = None
    low_open = high_open = False
    for item in metadata:
        if isinstance(item, annotated_types.Ge):
            low = item.ge
        elif isinstance(item, annotated_types.Gt):
            low, low_open = item.gt, True
        elif isinstance(item, annotated_types.Le):
            high = item.le
        elif isinstance(item, annotated_types.Lt):
            high, high_open = item.lt, True
    return _whole(low), _whole(high), low_open, high_open


def _whole(bound: Any) -> Any:
    """``0`` for ``0.0``: click shows a range as its bounds are given (``0<=x<=1``)."""
    return int(bound) if isinstance(bound, float) and bound.is_integer() else bound
