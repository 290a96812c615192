"""All the facts of a text: its values, then its opening yes or no, then its names.

One entry point for the grader, the faithfulness measure and the tests, so that a reference
and an answer are always read by the same readers in the same order.
"""

from __future__ import annotations

from goldeneval.prompts.facts.entities import entity_facts
from goldeneval.prompts.facts.model import Fact
from goldeneval.prompts.facts.polarity import reference_polarity
from goldeneval.prompts.facts.text import NOTE, prepare
from goldeneval.prompts.facts.values import value_facts

__all__ = ["extract_facts"]


def extract_facts(text: str, *, notes: bool = False) -> list[Fact]:
    """The facts of ``text``: values (numbers, times, dates, bare years), then polarity, then
    entities.  ``notes=False`` (a reference) drops parenthesised remarks first."""
    text = prepare(text if notes else NOTE.sub("", text))
    facts = value_facts(text)
    polarity = reference_polarity(text)
    if polarity is not None:
        facts.append(polarity)
    return facts + entity_facts(text)
