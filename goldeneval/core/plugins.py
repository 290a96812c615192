"""Plug-ins of every kind (retrievers, models, …): found by id, built, and refused in one line.

A plug-in is a factory ``factory(context) -> object``, registered under an entry-point group
(``goldeneval.retrievers``, ``goldeneval.models``) with an id such as ``goldeneval.lexical``,
or named by an import path ``package.module:factory``.  Whatever a factory does wrong (an
unknown id, a module that will not import, a factory that raises or calls ``sys.exit()``, an
object without the method the kind calls) is invalid input naming the plug-in, never a
traceback and never a clean exit.  Each kind declares its :class:`PluginKind`; the rules
live here once.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any, Generic, TypeVar

from goldeneval.core.errors import GoldenEvalError, one_line

__all__ = ["PluginKind", "import_named_module"]

C = TypeVar("C")
P = TypeVar("P")


def import_named_module(module_name: str) -> ModuleType:
    """The module of an import path a user wrote (``package.module:name``: a plug-in, a
    framework retriever's ``factory``, a code assertion): on ``sys.path``, then in the working
    directory.  So a module in the folder a command runs from is found without ``PYTHONPATH``,
    by ``goldeneval`` as by ``python -m goldeneval.cli``, and so are the modules it imports
    beside it.  Unlike ``python -m``, which puts that folder first, it comes after the
    installed packages: a file there (``yaml.py``, ``scipy.py``) never hides one goldeneval
    needs.  The folder stays on the path for the rest of the process."""
    try:
        here = os.getcwd()
    except OSError:  # the working directory was deleted: nothing there to find
        return importlib.import_module(module_name)
    if not any(os.path.abspath(entry or os.curdir) == here for entry in sys.path):
        sys.path.append(here)
    return importlib.import_module(module_name)


@dataclass(frozen=True)
class PluginKind(Generic[C, P]):
    """One kind of plug-in: its entry-point group, its noun in messages, the method every
    plug-in of it must have, and the error its failures are raised as."""

    group: str
    noun: str
    method: str
    """``name(args)`` as messages show it, e.g. ``retrieve(question, limit)``."""
    error: type[GoldenEvalError]

    def known(self) -> list[str]:
        """The registered ids, sorted."""
        return sorted(ep.name for ep in entry_points(group=self.group))

    def load_factory(self, plugin_id: str) -> Callable[[C], P]:
        """The factory of a registered id, else of an import path ``package.module:factory``."""
        for entry_point in entry_points(group=self.group, name=plugin_id):
            factory: Callable[[C], P] = entry_point.load()
            return factory
        if ":" not in plugin_id:
            raise self.error(
                f"unknown {self.noun} {plugin_id!r}: not a registered id "
                f"(known: {', '.join(self.known()) or 'none'}) and not an import path "
                "of the form package.module:factory"
            )
        module_name, _, attribute = plugin_id.partition(":")
        try:
            module = import_named_module(module_name)
        except ImportError as exc:
            raise self.error(f"{self.noun} {plugin_id!r}: cannot import {module_name!r}: {exc}") from None
        candidate: Any = getattr(module, attribute, None)
        if not callable(candidate):
            raise self.error(f"{self.noun} {plugin_id!r}: module {module_name!r} has no callable {attribute!r}")
        imported: Callable[[C], P] = candidate
        return imported

    def build(self, plugin_id: str, context: C) -> P:
        """Build the plug-in; a factory that raises (or exits) is invalid input naming it."""
        factory = self.load_factory(plugin_id)
        try:
            plugin = factory(context)
        except GoldenEvalError:
            raise
        except (Exception, SystemExit) as exc:  # sys.exit() in a factory is its error, not a clean exit
            raise self.error(
                f"{self.noun} {plugin_id!r}: its factory raised {type(exc).__name__}: {one_line(str(exc))}"
            ) from None
        if not callable(getattr(plugin, self.method.partition("(")[0], None)):
            raise self.error(
                f"{self.noun} {plugin_id!r}: its factory returned {type(plugin).__name__}, "
                f"which has no {self.method} method"
            )
        return plugin
