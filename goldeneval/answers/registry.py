"""Where golden prompt sets come from: Python providers and files in configured folders.

Providers are registered under the entry-point group ``goldeneval.golden_prompt_sets`` (the
Python equivalent of ADR-060's DI tag): each entry point names a callable returning an
iterable of :class:`~goldeneval.answers.golden.GoldenPromptSet`.  Folders come from
``--prompt-sets-dir`` and ``$GOLDENEVAL_PROMPT_SETS_PATH``.  A set id declared twice fails,
naming both sources.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from goldeneval.answers.golden import PROMPT_SET_SUFFIXES, GoldenPromptSet, load_prompt_set
from goldeneval.core.errors import DuplicateIdError, GoldenEvalError, InputError, one_line

__all__ = ["PROMPT_SETS_ENTRY_POINT_GROUP", "PROMPT_SETS_PATH_ENV", "PromptSetRegistry", "resolve_prompt_set"]

PROMPT_SETS_ENTRY_POINT_GROUP = "goldeneval.golden_prompt_sets"
PROMPT_SETS_PATH_ENV = "GOLDENEVAL_PROMPT_SETS_PATH"

PromptSetProvider = Callable[[], Iterable[GoldenPromptSet]]


@dataclass
class PromptSetRegistry:
    """Every known prompt set by id, with a description of where it comes from."""

    _sets: dict[str, tuple[GoldenPromptSet, str]] = field(default_factory=dict)

    def add(self, prompt_set: GoldenPromptSet, source: str) -> None:
        previous = self._sets.get(prompt_set.id)
        if previous is not None:
            raise DuplicateIdError(
                f"golden prompt set id {prompt_set.id!r} is declared twice: in {previous[1]} and in {source}"
            )
        self._sets[prompt_set.id] = (prompt_set, source)

    def add_folder(self, folder: Path) -> None:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix.lower() in PROMPT_SET_SUFFIXES:
                self.add(load_prompt_set(path), str(path))

    def add_provider(self, name: str, provider: PromptSetProvider, origin: str) -> None:
        source = f"entry point {name!r} ({origin})"
        try:
            provided = list(provider())
        except GoldenEvalError:
            raise
        except Exception as exc:  # a plug-in's bug is invalid input, named
            raise InputError(f"{source}: raised {type(exc).__name__}: {one_line(str(exc))}") from None
        for prompt_set in provided:
            if not isinstance(prompt_set, GoldenPromptSet):
                raise InputError(f"{source}: returned {type(prompt_set).__name__}, not a GoldenPromptSet")
            self.add(prompt_set, source)

    def get(self, set_id: str) -> GoldenPromptSet:
        try:
            return self._sets[set_id][0]
        except KeyError:
            known = ", ".join(sorted(self._sets)) or "none"
            raise InputError(
                f"unknown golden prompt set {set_id!r}: not a file, and no registered prompt set has that id "
                f"(known: {known})"
            ) from None

    def source(self, set_id: str) -> str:
        return self._sets[set_id][1]

    def ids(self) -> list[str]:
        return sorted(self._sets)

    @classmethod
    def discover(cls, folders: Iterable[Path] = (), *, include_entry_points: bool = True) -> PromptSetRegistry:
        registry = cls()
        if include_entry_points:
            for entry_point in entry_points(group=PROMPT_SETS_ENTRY_POINT_GROUP):
                registry.add_provider(entry_point.name, entry_point.load(), entry_point.value)
        env_folders = [Path(p) for p in os.environ.get(PROMPT_SETS_PATH_ENV, "").split(os.pathsep) if p]
        for folder in [*folders, *env_folders]:
            if not folder.is_dir():
                raise InputError(f"golden prompt set folder {str(folder)!r} does not exist")
            registry.add_folder(folder)
        return registry


def resolve_prompt_set(reference: str, folders: Iterable[Path] = ()) -> GoldenPromptSet:
    """A prompt set by file path or by registered id."""
    path = Path(reference)
    if path.suffix.lower() in PROMPT_SET_SUFFIXES or path.is_file():
        return load_prompt_set(path)
    return PromptSetRegistry.discover(folders).get(reference)
