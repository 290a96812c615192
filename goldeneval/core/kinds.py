"""The seam between the shared machinery and the kinds of run (retrieval, answers, a third).

A run kind is stored like every other: one row of ``runs`` and its typed ``details`` JSON.
What the shared machinery (the store's records, comparison, the gate) needs from a kind's
details is declared here and nowhere else: what its two stored rates mean, and the binary
outcome behind a rate per question, which a comparison pairs.  How a kind's details are read
back (a :class:`DetailsKind`) is named by its declaration, :attr:`KindDeclaration.details
<goldeneval.kinds.KindDeclaration.details>` (``"package.module:OBJECT"``), and loaded on first
need: a stored run of a kind no module of this process imported is read as a run of
goldeneval's own kinds is.  This module never imports a kind (only the declarations, which are
strings), so a third kind is added by its declaration without editing it.

Stored details carry their kind in a ``kind`` key; retrieval details, which predate the key,
carry none and are read as :data:`UNKEYED_KIND`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, ValidationError

from goldeneval.core.errors import StoreError
from goldeneval.core.stats import Verdicts
from goldeneval.kinds import KindDeclaration, built_in_kinds, declared_kinds, load_target

__all__ = [
    "UNKEYED_KIND",
    "DetailsKind",
    "RunDetails",
    "SlicedDetails",
    "details_kind",
    "read_details",
    "read_paired_outcomes",
    "register_details_kind",
    "stored_details_error",
]

UNKEYED_KIND = "retrieval"
"""The kind of stored details without a ``kind`` key (retrieval details of every format)."""


@runtime_checkable
class RunDetails(Protocol):
    """What the shared machinery reads from the details of any kind of run."""

    @property
    def protocol(self) -> str:
        """The kind's measurement protocol revision: a change makes two runs incomparable."""
        ...

    @property
    def retriever_id(self) -> str | None:
        """The retriever behind the run, where one found documents (the store's column)."""
        ...

    @property
    def tables_run_id(self) -> str | None:
        """The (Dagster) run whose Parquet tables the run was built from, if any."""
        ...

    def to_json_text(self) -> str:
        """The details as the one JSON string the store keeps."""
        ...

    @property
    def rate_names(self) -> Mapping[str, str]:
        """What the stored ``pass_rate`` and ``mean_score`` mean for this kind, for messages."""
        ...

    @property
    def unit(self) -> str:
        """What the run asked, plural, for messages: ``questions`` or ``prompts``."""
        ...

    def paired_outcomes(self, rate: str) -> Verdicts | None:
        """Per scored question, the binary outcome behind ``rate``; None when the rate is not
        a share of binary outcomes (a mean score), so no paired test applies."""
        ...


@runtime_checkable
class SlicedDetails(Protocol):
    """Details that say which slice each question is in (optional: a kind without it has its
    slices' drops gated without a paired test, as a rate without paired outcomes is)."""

    def slice_of(self, kind: str) -> Mapping[str, str] | None:
        """Each question id's value in the slices of ``kind`` (``form``, ``hard_class``, ...),
        grouped as the run's stored slices are, so that a slice's change can be paired and
        tested as the whole run's is (``--max-p``); a question in no slice of that kind is
        absent; None for a kind of slice the run has not."""
        ...


ReadDetails = Callable[[str | bytes, str], RunDetails]
ReadOutcomes = Callable[[str | bytes, str], Mapping[str, Verdicts] | None]


@dataclass(frozen=True)
class DetailsKind:
    """How one kind's stored details are read: whole (``read``), and, where a kind can do it
    cheaper than reading everything, only the outcomes a comparison pairs (``outcomes``: per
    binary rate; it returns None for details it cannot read that way, which are then read
    whole)."""

    names: tuple[str, ...]
    """The values of the details' ``kind`` key this kind reads (:data:`UNKEYED_KIND` for none)."""
    read: ReadDetails
    outcomes: ReadOutcomes | None = None


_KINDS: dict[str, DetailsKind] = {}
_LOADED: set[str] = set()
"""The declarations' ``details`` targets loaded into :data:`_KINDS` already."""


def register_details_kind(kind: DetailsKind) -> DetailsKind:
    """Register ``kind`` under each of its names; registering the same object again is a no-op.
    The lookup registers each declared kind's reader itself; this is for a reader of a kind not
    installed (a test's)."""
    for name in kind.names:
        known = _KINDS.get(name)
        if known is not None and known is not kind:
            raise ValueError(f"run kind {name!r} is registered twice")
        _KINDS[name] = kind
    return kind


def _load_declared(kinds: Iterable[KindDeclaration], where: str) -> None:
    for declared in kinds:
        target = declared.details
        if target is None or target in _LOADED:
            continue
        named = f"{where}: run kind {declared.name!r}: details {target}"
        try:
            loaded = load_target(target)
        except (ImportError, AttributeError) as exc:
            raise StoreError(f"{named} cannot be loaded ({exc})") from None
        if not isinstance(loaded, DetailsKind):
            raise StoreError(f"{named} is not a goldeneval.core.kinds.DetailsKind")
        try:
            register_details_kind(loaded)
        except ValueError as exc:  # another kind reads details of the same name
            raise StoreError(f"{named}: {exc}") from None
        _LOADED.add(target)


def details_kind(name: str, where: str) -> DetailsKind:
    """The kind whose details carry ``name``: on first need, its reader is loaded from the
    declarations, goldeneval's own first (no entry point is read for them), then every
    declared kind's (:func:`goldeneval.kinds.declared_kinds`)."""
    if name not in _KINDS:
        _load_declared(built_in_kinds(), where)
    if name not in _KINDS:
        _load_declared(declared_kinds(), where)
    kind = _KINDS.get(name)
    if kind is None:
        known = ", ".join(sorted(_KINDS)) or "none"
        raise StoreError(f"{where}: details of kind {name!r}, which no installed run kind reads (known: {known})")
    return kind


class _StoredKind(BaseModel):
    """The ``kind`` key of stored details, read without building the rest: pydantic-core skips
    the fields a model ignores without making Python objects of them."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    kind: str | None = None


def stored_details_error(exc: ValidationError, where: str) -> StoreError:
    """One line naming the run and the field of stored details that did not validate."""
    error = exc.errors()[0]
    field = ".".join(str(part) for part in error["loc"]) or "(details)"
    return StoreError(f"{where}: details field {field!r}: {error['msg']}")


def _kind_of(text: str | bytes, where: str) -> DetailsKind:
    try:
        name = _StoredKind.model_validate_json(text).kind
    except ValidationError as exc:
        raise stored_details_error(exc, where) from None
    return details_kind(name or UNKEYED_KIND, where)


def read_details(text: str | bytes, where: str) -> RunDetails:
    """Stored details, read by their kind; invalid details name ``where`` and the field."""
    return _kind_of(text, where).read(text, where)


def read_paired_outcomes(text: str | bytes, where: str) -> Mapping[str, Verdicts] | None:
    """The outcomes behind each binary rate, read cheaply from the stored text; None when the
    kind reads them only from its whole details."""
    kind = _kind_of(text, where)
    return kind.outcomes(text, where) if kind.outcomes is not None else None
