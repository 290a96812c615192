"""Where golden prompt sets come from: Python providers and files in configured folders.

Providers are registered under the entry-point group ``goldeneval.golden_prompt_sets`` (the
Python equivalent of ADR-060's DI tag): each entry point names a callable returning an
iterable of :class:`~goldeneval.prompts.golden.GoldenPromptSet`.  Folders come from
``--prompt-sets-dir`` and ``$GOLDENEVAL_PROMPT_SETS_PATH``.  A set id declared twice fails,
naming both sources.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from goldeneval.core.sets import SetKind, SetRegistry
from goldeneval.prompts.golden import PROMPT_SET_SUFFIXES, GoldenPromptSet, load_prompt_set

__all__ = ["PROMPT_SETS_ENTRY_POINT_GROUP", "PROMPT_SETS_PATH_ENV", "PromptSetRegistry", "resolve_prompt_set"]

PROMPT_SETS_ENTRY_POINT_GROUP = "goldeneval.golden_prompt_sets"
PROMPT_SETS_PATH_ENV = "GOLDENEVAL_PROMPT_SETS_PATH"


class PromptSetRegistry(SetRegistry[GoldenPromptSet]):
    """Every known prompt set by id, with a description of where it comes from."""

    kind = SetKind(
        set_type=GoldenPromptSet,
        noun="golden prompt set",
        short="prompt set",
        folder_noun="golden prompt set",
        group=PROMPT_SETS_ENTRY_POINT_GROUP,
        path_env=PROMPT_SETS_PATH_ENV,
        suffixes=frozenset(PROMPT_SET_SUFFIXES),
        load=load_prompt_set,
    )


def resolve_prompt_set(reference: str, folders: Iterable[Path] = ()) -> GoldenPromptSet:
    """A prompt set by file path or by registered id."""
    return PromptSetRegistry.resolve(reference, folders)
