"""Where the sets of every run kind come from: files in configured folders and Python providers.

Providers are registered under a kind's entry-point group (``goldeneval.golden_question_sets``,
``goldeneval.golden_prompt_sets``: the Python equivalent of the ADRs' DI tag); each entry point
names a callable returning an iterable of the kind's sets.  Folders come from a command's
option and a ``PATH``-like environment variable.  A set id declared twice fails at load time
and names both sources; a provider that raises or returns something else is invalid input
naming it.  A kind declares its :class:`SetKind` and subclasses :class:`SetRegistry`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from typing import ClassVar, Generic, Protocol, Self, TypeVar

from goldeneval.core.corpus import Corpus, load_corpus
from goldeneval.core.errors import DuplicateIdError, GoldenEvalError, InputError, one_line

__all__ = ["SetKind", "SetRegistry", "corpus_for", "expect_set_id"]


class _HasId(Protocol):
    @property
    def id(self) -> str: ...


S = TypeVar("S", bound=_HasId)


@dataclass(frozen=True)
class SetKind(Generic[S]):
    """One kind's sets: their type, how a file is loaded, and the words its messages use."""

    set_type: type[S]
    noun: str
    """``golden question set``: in 'unknown …' and 'declared twice'."""
    short: str
    """``set``: in 'no registered … has that id'."""
    folder_noun: str
    """``golden set``: in '… folder does not exist'."""
    group: str
    path_env: str
    suffixes: frozenset[str]
    load: Callable[[Path], S]


@dataclass
class SetRegistry(Generic[S]):
    """Every known set of a kind by id, with a description of where it comes from."""

    kind: ClassVar[SetKind[S]]
    _sets: dict[str, tuple[S, str]] = field(default_factory=dict)

    def add(self, item: S, source: str) -> None:
        previous = self._sets.get(item.id)
        if previous is not None:
            raise DuplicateIdError(
                f"{self.kind.noun} id {item.id!r} is declared twice: in {previous[1]} and in {source}"
            )
        self._sets[item.id] = (item, source)

    def add_folder(self, folder: Path) -> None:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix.lower() in self.kind.suffixes:
                self.add(self.kind.load(path), str(path))

    def add_provider(self, name: str, provider: Callable[[], Iterable[S]], origin: str) -> None:
        source = f"entry point {name!r} ({origin})"
        try:
            provided = list(provider())
        except GoldenEvalError:
            raise
        except Exception as exc:  # a plug-in's bug is invalid input, named
            raise InputError(f"{source}: raised {type(exc).__name__}: {one_line(str(exc))}") from None
        for item in provided:
            if not isinstance(item, self.kind.set_type):
                raise InputError(f"{source}: returned {type(item).__name__}, not a {self.kind.set_type.__name__}")
            self.add(item, source)

    def get(self, set_id: str) -> S:
        try:
            return self._sets[set_id][0]
        except KeyError:
            known = ", ".join(sorted(self._sets)) or "none"
            raise InputError(
                f"unknown {self.kind.noun} {set_id!r}: not a file, and no registered {self.kind.short} "
                f"has that id (known: {known})"
            ) from None

    def source(self, set_id: str) -> str:
        return self._sets[set_id][1]

    def ids(self) -> list[str]:
        return sorted(self._sets)

    @classmethod
    def resolve(cls, reference: str, folders: Iterable[Path] = ()) -> S:
        """A set by file path (a set file's suffix, or any file) or by registered id."""
        path = Path(reference)
        if path.suffix.lower() in cls.kind.suffixes or path.is_file():
            return cls.kind.load(path)
        return cls.discover(folders).get(reference)

    @classmethod
    def discover(cls, folders: Iterable[Path] = (), *, include_entry_points: bool = True) -> Self:
        """Build the registry from entry points, the given folders and the kind's variable."""
        registry = cls()
        if include_entry_points:
            for entry_point in entry_points(group=cls.kind.group):
                registry.add_provider(entry_point.name, entry_point.load(), entry_point.value)
        env_folders = [Path(p) for p in os.environ.get(cls.kind.path_env, "").split(os.pathsep) if p]
        for folder in [*folders, *env_folders]:
            if not folder.is_dir():
                raise InputError(f"{cls.kind.folder_noun} folder {str(folder)!r} does not exist")
            registry.add_folder(folder)
        return registry


def expect_set_id(loaded: S, reference: str, expected_id: str | None) -> S:
    """The set as it is now (files are read again, so a label change is seen), which must still
    have the id a suite cell expects: a changed id fails rather than start another series."""
    if expected_id is not None and loaded.id != expected_id:
        raise InputError(f"{reference}: its id changed from {expected_id!r} to {loaded.id!r}; reload")
    return loaded


def corpus_for(explicit: str | Path | None, named: str | None) -> Corpus | None:
    """The corpus given explicitly, else the one the set names, else none."""
    path = explicit or named
    return load_corpus(path) if path else None
