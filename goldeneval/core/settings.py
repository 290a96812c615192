"""Settings declared once: one pydantic field is a key of the suite file, a field of a run
specification and a flag of the command line, with one default, one set of bounds, one
validator and one description.

A settings model (:class:`goldeneval.retrieval.settings.RetrievalSettings`,
:class:`goldeneval.prompts.settings.GradingSettings`) declares its fields with their rules in
the field's type (``Annotated`` constraints and validators, never ``@field_validator``
methods), so that one value can be checked alone, as a flag is, by exactly the rules the
model applies (:func:`field_adapter`).  A :class:`Flag` in the same ``Annotated`` metadata
says how the field appears on the command line; :mod:`goldeneval.cli.declared` turns such
fields into click options.  The suite file's model and the specifications inherit the
settings model, so a new setting is one field here and nowhere else.

Nothing here imports click: the domain says *what* a setting is, the CLI how it is typed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, Field
from pydantic.fields import FieldInfo

if TYPE_CHECKING:
    from pydantic import TypeAdapter

__all__ = ["Flag", "Fraction", "field_adapter", "flag_of", "flagged_fields", "settings_of"]


Fraction = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]
"""A finite share from 0 to 1: a pass threshold, a largest allowed drop, a coverage floor."""


@dataclass(frozen=True)
class Flag:
    """How a declared field appears on the command line."""

    name: str | None = None
    """The option, ``--hit-k``; None: ``--`` and the field name with dashes."""
    separated: bool = False
    """A sequence given as one comma-separated value (``--hit-k 1,3,10``), which the field's
    own validator splits: the suite file may then write a list or the same text."""
    repeated: bool = False
    """A sequence given by repeating the flag (``--abstention-phrase A --abstention-phrase B``)."""
    off: bool = False
    """A boolean field whose flag turns it off (``--no-cache`` sets ``response_cache`` to False)."""
    help: str | None = None
    """The flag's own words, where they cannot be the field's description: an ``off`` flag
    says what turning the setting off does."""
    choices: tuple[str, ...] = ()
    """The values the flag offers, where the field's validator checks a name against a registry
    (rubrics): the command line lists them and refuses others before the validator runs."""

    def option(self, field_name: str) -> str:
        return self.name or "--" + field_name.replace("_", "-")


def flag_of(info: FieldInfo) -> Flag | None:
    """The :class:`Flag` a field declares, or None when it is not on the command line."""
    return next((item for item in info.metadata if isinstance(item, Flag)), None)


def flagged_fields(model: type[BaseModel]) -> list[str]:
    """The fields of ``model`` that are on the command line, in declaration order."""
    return [name for name, info in model.model_fields.items() if flag_of(info) is not None]


@functools.cache
def field_adapter(model: type[BaseModel], name: str) -> TypeAdapter[Any]:
    """A validator of one field of ``model`` alone, by the rules the model applies to it (built
    when a flag is first checked: declaring the flags needs no validator)."""
    from pydantic import TypeAdapter

    info = model.model_fields[name]
    return TypeAdapter(Annotated[info.annotation, *info.metadata])  # type: ignore[arg-type]


def settings_of(source: BaseModel, model: type[BaseModel]) -> dict[str, Any]:
    """The values of ``model``'s fields in ``source`` (a suite file's settings, read into a
    specification that declares the same fields)."""
    return {name: getattr(source, name) for name in model.model_fields}
