"""A fact: what every reader produces and every rule compares.

One small type shared by the value, name and polarity readers, so that the decision
(:mod:`goldeneval.prompts.facts.grading`) compares facts without knowing how each was read.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

__all__ = ["VALUE_KINDS", "Fact", "FactKind", "values_of"]

FactKind = Literal["number", "time", "date", "year", "frequency", "polarity", "entity"]
VALUE_KINDS = ("number", "time", "date")
"""The kinds that count as values: an answer may state only a few the reference lacks."""


@dataclass(frozen=True)
class Fact:
    """One fact: its kind, its text as written, and the key it compares on."""

    kind: FactKind
    text: str
    key: tuple[object, ...]
    initial: bool = False
    """An entity read from one capitalised word at the start of a sentence ("Paris is ..."):
    perhaps a name, perhaps an ordinary word ("Tickets are ...")."""
    counted: str | None = None
    """For a number without unit or currency, the word after it, the thing it counts ("8
    passengers": ``"passenger"``), so that "8 passengers and 8 suitcases" are two facts (round 9)."""

    @property
    def identity(self) -> tuple[object, ...]:
        """What makes two facts of one text the same fact: kind, key and what is counted."""
        return (self.kind, self.key, self.counted)

    def describe(self) -> str:
        counted = f" ({self.counted})" if self.counted else ""
        return f"{self.kind} {self.text!r}{counted}"


def values_of(facts: Iterable[Fact]) -> list[Fact]:
    """The facts that are values (numbers, times, dates)."""
    return [f for f in facts if f.kind in VALUE_KINDS]
