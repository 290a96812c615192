"""Code assertions (issue 24): an assertion that names a Python callable.

A check takes the answer text and returns ``bool`` or ``(bool, message)``.  A prompt set names
it as ``type: code`` with ``value``: an id registered under the entry-point group
``goldeneval.assertions`` (as every plug-in kind is found), or an import path
``package.module:function``.  This module holds the one rule for finding and calling it:

* :func:`resolve_check` imports the callable once per path; a path that is malformed, a module
  that will not import or an attribute that is not callable is ``ValueError`` in one line
  (a prompt-set validator turns it into the file/prompt/field error, exit 3);
* :func:`run_check` calls it: a check that raises (or calls ``sys.exit()``) or returns anything
  but a bool or ``(bool, str)`` raises :class:`CodeAssertionError`, which the evaluator records
  as that prompt's grading error; the run goes on.  It runs inside the grading time bound
  (:mod:`goldeneval.prompts.bounded`), as every grader does;
* :func:`check_identity` is the path plus a SHA-256 of the function's source (or its declared
  ``version`` attribute), for the grader identity: an edited check then changes the benchmark
  fingerprint instead of comparing silently.
"""

from __future__ import annotations

import hashlib
import inspect
import re
import threading
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from goldeneval.core.errors import GoldenEvalError, one_line
from goldeneval.core.plugins import import_named_module

__all__ = [
    "ASSERTIONS_GROUP",
    "CodeAssertionError",
    "CodeCheck",
    "check_identity",
    "check_reference",
    "resolve_check",
    "run_check",
]

ASSERTIONS_GROUP = "goldeneval.assertions"
"""The entry-point group where packages register code assertions by id."""

CodeCheck = Callable[[str], Any]
_PATH = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*$")
_resolved: dict[str, CodeCheck] = {}
_lock = threading.Lock()


class CodeAssertionError(GoldenEvalError):
    """A code assertion failed to run (not: ran and returned False)."""


def resolve_check(path: str) -> CodeCheck:
    """The callable a registered id or ``package.module:function`` names; ``ValueError`` in one
    line otherwise."""
    with _lock:
        cached = _resolved.get(path)
    if cached is not None:
        return cached
    for entry_point in entry_points(group=ASSERTIONS_GROUP, name=path):
        try:
            registered: Any = entry_point.load()
        except Exception as exc:  # a broken registration is the check's fault, whatever it raised
            raise ValueError(
                f"code assertion {path!r}: its registration cannot be loaded: "
                f"{type(exc).__name__}: {one_line(str(exc))}"
            ) from None
        if not callable(registered):
            raise ValueError(f"code assertion {path!r}: the registered object is not callable")
        with _lock:
            _resolved[path] = registered
        return registered  # type: ignore[no-any-return]
    if not _PATH.match(path):
        raise ValueError(
            f"code assertion {one_line(path, 80)!r} is neither a registered id ({ASSERTIONS_GROUP}) "
            "nor of the form package.module:function"
        )
    module_name, _, attribute = path.partition(":")
    try:
        module = import_named_module(module_name)
    except Exception as exc:  # an import that fails is the path's fault, whatever it raised
        raise ValueError(
            f"code assertion {path!r}: cannot import {module_name!r}: {type(exc).__name__}: {one_line(str(exc))}"
        ) from None
    candidate: Any = getattr(module, attribute, None)
    if not callable(candidate):
        raise ValueError(f"code assertion {path!r}: module {module_name!r} has no callable {attribute!r}")
    check: CodeCheck = candidate
    with _lock:
        _resolved[path] = check
    return check


def check_reference(path: str) -> None:
    """Refuse a reference that can name no check, importing nothing: a prompt set is validated
    whenever a folder of sets is listed or registered, and naming a module must not run it
    then.  The check itself is imported when its set is evaluated."""
    if ":" in path:
        if not _PATH.match(path):
            raise ValueError(f"code assertion {one_line(path, 80)!r} is not of the form package.module:function")
        return
    if not entry_points(group=ASSERTIONS_GROUP, name=path):
        known = sorted(ep.name for ep in entry_points(group=ASSERTIONS_GROUP))
        raise ValueError(
            f"code assertion {one_line(path, 80)!r} is neither a registered id ({ASSERTIONS_GROUP}: "
            f"{', '.join(known) or 'none registered'}) nor of the form package.module:function"
        )


def run_check(path: str, answer: str) -> tuple[bool, str]:
    """``(held, what was found)`` of the check at ``path`` on ``answer``."""
    try:
        check = resolve_check(path)
    except ValueError as exc:
        raise CodeAssertionError(str(exc)) from None
    try:
        result = check(answer)
    except (Exception, SystemExit) as exc:  # the check's failure is this prompt's grading error
        raise CodeAssertionError(
            f"code assertion {path!r} raised {type(exc).__name__}: {one_line(str(exc), 200)}"
        ) from None
    if isinstance(result, bool):
        return result, "held" if result else "did not hold"
    if isinstance(result, tuple) and len(result) == 2 and isinstance(result[0], bool) and isinstance(result[1], str):
        return result[0], one_line(result[1], 200)
    raise CodeAssertionError(f"code assertion {path!r} returned {type(result).__name__}, not a bool or (bool, message)")


def check_identity(path: str) -> str:
    """``path@<version>`` when the function declares ``version``, else ``path@sha256:<source hash>``
    (``path@unknown`` when its source cannot be read)."""
    check = resolve_check(path)
    version = getattr(check, "version", None)
    if isinstance(version, str) and version:
        return f"{path}@{version}"
    try:
        source = inspect.getsource(check)
    except (OSError, TypeError):
        return f"{path}@unknown"
    return f"{path}@sha256:{hashlib.sha256(source.encode('utf-8')).hexdigest()[:16]}"
