"""Where golden question sets come from: files in configured folders and Python providers.

Providers are registered under the entry-point group ``goldeneval.golden_question_sets``
(the Python equivalent of ADR-072's DI tag): each entry point names a callable that returns
an iterable of :class:`~goldeneval.retrieval.golden.GoldenQuestionSet`.  A set id declared twice fails
at load time and names both sources.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path

from goldeneval.core.errors import DuplicateIdError, InputError
from goldeneval.retrieval.beir import is_beir_folder, load_beir_set
from goldeneval.retrieval.golden import SET_FILE_SUFFIXES, GoldenQuestionSet, load_golden_set

__all__ = [
    "SETS_ENTRY_POINT_GROUP",
    "SETS_PATH_ENV",
    "GoldenSetRegistry",
    "resolve_golden_set",
]

SETS_ENTRY_POINT_GROUP = "goldeneval.golden_question_sets"
SETS_PATH_ENV = "GOLDENEVAL_SETS_PATH"
"""Extra folders of set files, separated like PATH (``os.pathsep``)."""

SetProvider = Callable[[], Iterable[GoldenQuestionSet]]


@dataclass
class GoldenSetRegistry:
    """All known golden sets by id, each with a human-readable description of its source."""

    _sets: dict[str, tuple[GoldenQuestionSet, str]] = field(default_factory=dict)

    def add(self, golden_set: GoldenQuestionSet, source: str) -> None:
        previous = self._sets.get(golden_set.id)
        if previous is not None:
            raise DuplicateIdError(
                f"golden question set id {golden_set.id!r} is declared twice: in {previous[1]} and in {source}"
            )
        self._sets[golden_set.id] = (golden_set, source)

    def add_folder(self, folder: Path) -> None:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix.lower() in SET_FILE_SUFFIXES:
                self.add(load_golden_set(path), str(path))

    def add_provider(self, name: str, provider: SetProvider, origin: str) -> None:
        for golden_set in provider():
            self.add(golden_set, f"entry point {name!r} ({origin})")

    def get(self, set_id: str) -> GoldenQuestionSet:
        try:
            return self._sets[set_id][0]
        except KeyError:
            known = ", ".join(sorted(self._sets)) or "none"
            raise InputError(
                f"unknown golden question set {set_id!r}: not a file, and no registered set "
                f"has that id (known: {known})"
            ) from None

    def source(self, set_id: str) -> str:
        return self._sets[set_id][1]

    def ids(self) -> list[str]:
        return sorted(self._sets)

    @classmethod
    def discover(cls, folders: Iterable[Path] = (), *, include_entry_points: bool = True) -> GoldenSetRegistry:
        """Build the registry from entry points, the given folders and ``GOLDENEVAL_SETS_PATH``."""
        registry = cls()
        if include_entry_points:
            for entry_point in entry_points(group=SETS_ENTRY_POINT_GROUP):
                registry.add_provider(entry_point.name, entry_point.load(), entry_point.value)
        env_folders = [Path(p) for p in os.environ.get(SETS_PATH_ENV, "").split(os.pathsep) if p]
        for folder in [*folders, *env_folders]:
            if not folder.is_dir():
                raise InputError(f"golden set folder {str(folder)!r} does not exist")
            registry.add_folder(folder)
        return registry


def resolve_golden_set(reference: str, folders: Iterable[Path] = (), *, beir_split: str = "test") -> GoldenQuestionSet:
    """A set by file path, by BEIR folder (its ``beir_split`` qrels), or by registered id."""
    path = Path(reference)
    if is_beir_folder(path):
        return load_beir_set(path, beir_split)
    if path.suffix.lower() in SET_FILE_SUFFIXES or path.is_file():
        return load_golden_set(path)
    return GoldenSetRegistry.discover(folders).get(reference)
