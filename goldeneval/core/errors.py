"""Named domain exceptions, converted into one line of output at the edge (the CLI).

Each error says what was wrong, where (file, item, field) and, where it helps, how to
fix it.  Nothing in ``goldeneval`` prints or exits: callers decide.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, TypedDict, Unpack

if TYPE_CHECKING:
    from pydantic import ValidationError
    from pydantic_core import ErrorDetails

MAX_QUOTED = 300
"""Longest text an error message quotes from elsewhere (a plug-in's own message)."""


def printable(text: str) -> str:
    """``text`` with control characters escaped (``\\x1b``), safe to print to a terminal: a set
    file or a plug-in can hold an escape sequence that would rewrite the screen."""
    if text.isprintable():  # the common case, checked in one C-level pass
        return text
    return "".join(c if c.isprintable() or c == " " else repr(c)[1:-1] for c in text)


def one_line(text: str, limit: int = MAX_QUOTED) -> str:
    """``text`` on one line, at most ``limit`` characters: what a plug-in says can be anything."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def error_problem(error: ErrorDetails, plain: Mapping[str, str] | None = None) -> str:
    """One pydantic error's problem in its reader's words: ``plain``'s wording for the error's
    type where it has one (``missing`` is "missing required field" to a set's author), else
    pydantic's message without the ``Value error, `` it puts before what a validator raised."""
    if plain is not None and error["type"] in plain:
        return plain[error["type"]]
    return str(error["msg"]).removeprefix("Value error, ")


def validation_problem(exc: ValidationError, within: tuple[str, ...] = ()) -> tuple[str, str]:
    """The first error of a pydantic validation as (dotted field, problem): the one wording of
    a specification or configuration that did not validate.  ``within``: the fields the
    validated value sits in (``storage`` for the suite file's ``storage:`` section)."""
    error = exc.errors()[0]
    field = ".".join([*within, *(str(part) for part in error["loc"])])
    return field, error_problem(error)


class GoldenEvalError(Exception):
    """Base class of every error goldeneval raises on purpose."""


class InputError(GoldenEvalError):
    """User-supplied input (a file, an option, a plugin) is invalid."""


def invalid_input(
    exc: ValidationError,
    where: str | Path,
    *,
    whole: str = "",
    error: type[InputError] = InputError,
    within: tuple[str, ...] = (),
    clipped: bool = True,
) -> InputError:
    """The first error of a pydantic validation as one line, ``<where>: field '<field>':
    <problem>``: the one wording of an input that did not validate.  ``whole`` names the field
    when the input as a whole is wrong (pydantic gives no field: ``'(line)'``, ``'(file)'``);
    ``within`` as for :func:`validation_problem`.  ``clipped=False`` gives the problem as
    pydantic wrote it, for a file of the operator's own whose rule's hint follows a long value
    (a suite file)."""
    field, problem = validation_problem(exc, within)
    return error(f"{where}: field {field or whole!r}: {one_line(problem) if clipped else problem}")


class SetFileError(InputError):
    """A set file of some kind cannot be loaded.

    The message names the source file, the item (its position and id) and the field; each
    kind's subclass names its items (:attr:`item`: ``question``, ``prompt``).
    """

    item: ClassVar[str]

    def __init__(
        self,
        source: str | Path,
        problem: str,
        *,
        position: int | None = None,
        item_id: str | None = None,
        field: str | None = None,
    ) -> None:
        self.source = str(source)
        self.problem = problem
        self.position = position
        self.item_id = item_id
        self.field = field
        super().__init__(self._render())

    def _render(self) -> str:
        where: list[str] = [self.source]
        if self.position is not None:
            label = f"{self.item} #{self.position}"
            if self.item_id is not None:
                label += f" (id {self.item_id!r})"
            where.append(label)
        if self.field is not None:
            where.append(f"field {self.field!r}")
        return ": ".join([*where, self.problem])


class _Where(TypedDict, total=False):
    position: int | None
    item_id: str | None
    field: str | None


class GoldenSetError(SetFileError):
    """A golden question set cannot be loaded."""

    item = "question"

    def __init__(
        self, source: str | Path, problem: str, *, question_id: str | None = None, **where: Unpack[_Where]
    ) -> None:
        """``question_id`` is ``item_id`` in the question sets' own word (the BEIR importer's)."""
        where.setdefault("item_id", question_id)
        super().__init__(source, problem, **where)

    @property
    def question_id(self) -> str | None:
        return self.item_id


class DuplicateIdError(InputError):
    """Two sources declare the same set id."""


class CorpusError(InputError):
    """A corpus cannot be loaded."""


class RetrieverError(InputError):
    """A retriever cannot be found or built."""


class StoreError(GoldenEvalError):
    """The result store cannot be opened, migrated or written."""
