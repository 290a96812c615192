"""Run kinds, each declared once: everything the assembly needs to know about a kind.

A kind of run (retrieval, prompts, a third) declares in one :class:`KindDeclaration` its
suite section, its partitions' dimensions, its assets, its job, schedule and sensor names,
its commands, where its Dagster part is and how its stored details are read back; the
assembly loops over :func:`declared_kinds`: the suite file (:mod:`goldeneval.suite`), the
Dagster resource, partitions, series, jobs, schedules, sensors and Definitions
(``pipelines.build``), the main command (``pipelines.main``), the ``goldeneval`` command's list
(:mod:`goldeneval.cli.app`), the reading of stored runs (:mod:`goldeneval.core.kinds`) and,
through them, the generated reference pages.  So a third kind is added by its own package alone:

.. code-block:: toml

    [project.entry-points."goldeneval.kinds"]
    "rerank" = "my_package.kind:DECLARATION"

The kinds goldeneval ships are declared in :mod:`goldeneval.kinds.retrieval` and
:mod:`goldeneval.kinds.prompts`.  A declaration is strings and small functions: this package
imports nothing of the domain nor of Dagster, so ``goldeneval --help`` can list a kind's
commands without importing it, and the domain never meets Dagster (a kind's Dagster part is
named by its import path, :attr:`KindDeclaration.dagster`, and loaded by ``assets.kinds``;
its details reader, :attr:`KindDeclaration.details`, is loaded by :mod:`goldeneval.core.kinds`
when a stored run of the kind is first read).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import BaseModel

__all__ = [
    "BUILT_IN_KINDS",
    "KINDS_GROUP",
    "KindCommand",
    "KindDeclaration",
    "KindNames",
    "SuiteSection",
    "built_in_kinds",
    "declared_kinds",
    "forget_declared_kinds",
    "load_target",
]

KINDS_GROUP = "goldeneval.kinds"
"""The entry-point group of kinds that other packages declare."""
BUILT_IN_KINDS = ("goldeneval.kinds.retrieval:RETRIEVAL", "goldeneval.kinds.prompts:PROMPTS")
"""The kinds goldeneval ships, in the order the assembly lists them (retrieval first)."""


@dataclass(frozen=True)
class KindCommand:
    """A command of the ``goldeneval`` group: where it is defined (``module:attribute``) and
    the first paragraph of its help, which ``goldeneval --help`` shows without importing it."""

    target: str
    summary: str


@dataclass(frozen=True)
class SuiteSection:
    """A key of the suite file that holds a kind's settings, validated by ``model``.  (The
    kinds goldeneval ships keep their keys at the suite's top level and declare none.)"""

    key: str
    model: type[BaseModel]
    description: str


@dataclass(frozen=True)
class KindNames:
    """The names a kind's Dagster objects take: its nightly job and schedule, its regression
    check asset, job and sensor, and the sensor that plots the runs the CLI stored."""

    job: str
    regression_check: str
    regression_job: str
    schedule: str
    regression_sensor: str
    cli_sensor: str

    @classmethod
    def prefixed(cls, prefix: str, cli_sensor: str) -> KindNames:
        """The names goldeneval's own kinds follow: ``nightly_<prefix>evaluation``,
        ``<prefix>regression_check``, ``..._job``, ``..._schedule``, ``..._sensor``."""
        job = f"nightly_{prefix}evaluation"
        check = f"{prefix}regression_check"
        return cls(job, check, f"{check}_job", f"{job}_schedule", f"{check}_sensor", cli_sensor)


@dataclass(frozen=True)
class KindDeclaration:
    """Everything about one kind of run that is not its domain logic, declared once."""

    name: str
    """The kind's name (unique among the declared kinds)."""
    cell: str
    """What one partition is, in words: ``golden set x retriever``."""
    dimensions: tuple[str, str]
    """The partitions' two dimensions, in hive folder order: the set's, then the series'."""
    cells: Callable[[Any], tuple[Sequence[str], Sequence[str]]]
    """The loaded suite's (:class:`goldeneval.suite.Suite`) set ids and series names of this kind;
    a kind with no set id has no partitions, so the suite builds nothing of it."""
    spec: Callable[[Any, Mapping[str, str]], Any]
    """The run specification of one partition (the suite, the partition's value per dimension)."""
    assets: tuple[str, ...]
    """The assets of the nightly job, upstream first; the last is the summary that stores the run."""
    names: KindNames
    stored: str
    """What a stored run of the kind is called: ``evaluation``, ``prompt run``."""
    title: str
    """The heading of its table in the main command's summary."""
    rates: tuple[tuple[str, str], tuple[str, str]]
    """The two rates that table shows: (column title, the summary's metadata key)."""
    dagster: str
    """``module:attribute`` of its Dagster part (an ``assets.kinds.KindAssets``)."""
    details: str | None = None
    """``module:attribute`` of how its stored details are read back (a
    :class:`goldeneval.core.kinds.DetailsKind`, whose ``names`` are the values of the details'
    ``kind`` key it reads), loaded when a stored run of the kind is first read: by ``compare``,
    ``report``, the gate, ``Store.get_run``, in any process.  None for a kind that stores no run."""
    commands: Mapping[str, KindCommand] = field(default_factory=dict)
    """Its commands of the ``goldeneval`` group, by name."""
    section: SuiteSection | None = None
    """Its section of the suite file, when it has one of its own."""

    @property
    def summary(self) -> str:
        return self.assets[-1]


def load_target(target: str) -> Any:
    """The object ``module:attribute`` names."""
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute)


def _checked(found: Any, where: str) -> KindDeclaration:
    if not isinstance(found, KindDeclaration):
        raise TypeError(f"{where} is not a goldeneval.kinds.KindDeclaration")
    return found


@cache
def built_in_kinds() -> tuple[KindDeclaration, ...]:
    """The kinds goldeneval ships (no entry point is read for them)."""
    return tuple(_checked(load_target(target), target) for target in BUILT_IN_KINDS)


@cache
def declared_kinds() -> tuple[KindDeclaration, ...]:
    """Every declared kind: goldeneval's own, then those of the entry-point group
    :data:`KINDS_GROUP` by name.  A name, a command, a job, sensor or schedule name or a suite
    section taken twice fails here, naming both kinds."""
    from importlib.metadata import entry_points  # not for the commands goldeneval ships

    kinds = list(built_in_kinds())
    for entry in sorted(entry_points(group=KINDS_GROUP), key=lambda e: e.name):
        kinds.append(_checked(entry.load(), f"entry point {entry.name!r} of {KINDS_GROUP} ({entry.value})"))
    taken: dict[tuple[str, str], str] = {}
    for kind in kinds:
        names = kind.names
        claims = [("kind", kind.name), *(("command", name) for name in kind.commands)]
        claims += [("job", names.job), ("job", names.regression_job), ("schedule", names.schedule)]
        claims += [("sensor", names.regression_sensor), ("sensor", names.cli_sensor)]
        claims += [("asset", name) for name in (*kind.assets, names.regression_check)]
        claims += [("suite section", kind.section.key)] if kind.section is not None else []
        for claim in claims:
            if claim in taken:
                raise ValueError(f"run kind {kind.name!r}: {claim[0]} {claim[1]!r} is declared by {taken[claim]!r} too")
            taken[claim] = kind.name
    return tuple(kinds)


def forget_declared_kinds() -> None:
    """Read the entry points again on next need (a package installed meanwhile; tests)."""
    declared_kinds.cache_clear()
