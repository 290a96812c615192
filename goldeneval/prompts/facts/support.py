"""Faithfulness without a judge: which of an answer's facts the retrieved passages state.

A correct answer the context does not support is a lucky guess, and without a judge it scored
exactly like a supported one (issue 42).  The answer's values and names are read as in
grading and looked up in the sources (docs/guide/answers.md, "Retrieval-augmented answers",
"Faithfulness without a judge").
"""

from __future__ import annotations

from collections.abc import Iterable

from goldeneval.prompts.facts.entities import answer_entity_keys
from goldeneval.prompts.facts.equality import same_value
from goldeneval.prompts.facts.extraction import extract_facts
from goldeneval.prompts.facts.model import Fact
from goldeneval.prompts.facts.text import prepare
from goldeneval.prompts.facts.values import value_facts

__all__ = ["unsupported_facts"]


def unsupported_facts(answer: str, sources: Iterable[str]) -> tuple[list[Fact], list[Fact]]:
    """The answer's values and entities, split into those some source states and those none
    does (faithfulness without a judge): ``(supported, unsupported)``."""
    texts = [prepare(s) for s in sources]
    source_values = [f for text in texts for f in value_facts(text)]
    source_keys: set[str] = set().union(*(answer_entity_keys(t) for t in texts)) if texts else set()
    supported: list[Fact] = []
    unsupported: list[Fact] = []
    for fact in extract_facts(answer, notes=True):
        if fact.kind == "polarity":
            continue
        if fact.kind == "entity":
            ok = all(key in source_keys for key in fact.key)
        elif fact.kind == "year":
            ok = any(f.kind == "year" and f.key == fact.key for f in source_values) or any(
                f.kind == "date" and f.key[2] == fact.key[0] for f in source_values
            )
        else:
            ok = any(same_value(fact, other) for other in source_values)
        (supported if ok else unsupported).append(fact)
    return supported, unsupported
