"""Reading the set files of every kind (YAML, JSON, JSONL): one line naming the file for
whatever is wrong with the bytes or the syntax.

A file that cannot be read, is not UTF-8, is malformed, repeats a JSON key, holds a number
too long to convert, nests too deeply or escapes a lone surrogate is refused here, the same
way for golden question sets and golden prompt sets; what its items mean is the kind's.

YAML is read by PyYAML's own Python parser (libyaml accepts documents it refuses), 1 ms per
kilobyte: 25 ms for the bundled 81-question set, seconds for thousands of questions, on every
run.  Within :func:`remembered_parses` a YAML document read before is taken from the run's
cache folder instead, keyed by its exact text and the parser; the run decides whether it may
keep one (never under ``metadata_only``: the cache would hold the questions' text).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from goldeneval.core.errors import InputError, one_line
from goldeneval.core.jsonl import DuplicateKeyError, unique_keys
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.text_files import is_unicode_text
from goldeneval.core.yaml_errors import describe_yaml_error, load_yaml

__all__ = [
    "FileError",
    "clip",
    "duplicate_key",
    "is_text",
    "parse_document",
    "parse_jsonl_set",
    "read_text",
    "remembered_parses",
    "unicode_only",
    "unreadable",
]

FileError = Callable[[Path, str], InputError]
"""A kind's error for a file: ``error(path, problem)``."""

MAX_QUOTED_KEY = 60
MAX_QUOTED_PROBLEM = 160


def read_text(path: Path, error: FileError) -> str:
    """The file's text, which must be UTF-8."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise error(path, "file not found") from None
    except OSError as exc:
        raise error(path, f"cannot read file: {exc.strerror}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(
            path,
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); save the file as UTF-8",
        ) from None


PARSE_REVISION = "yaml-parse-v1"
"""The revision of how a YAML document is read here (:func:`load_yaml`'s rules): change it with
them, so that no document read by earlier rules is taken from a cache."""


@dataclass
class _Parses:
    """A run's parse cache: its folder, and what was parsed meanwhile, to keep at the end."""

    folder: Path
    parsed: dict[Path, Any] = field(default_factory=dict)


_PARSES: contextvars.ContextVar[_Parses | None] = contextvars.ContextVar("remembered_parses", default=None)


@contextlib.contextmanager
def remembered_parses(cache_dir: Path, privacy: PrivacyMode) -> Iterator[Callable[[str], None]]:
    """Within the block, a YAML document read before is read from ``<cache_dir>/parsed-yaml/``,
    keyed by the SHA-256 of its exact text, this module's :data:`PARSE_REVISION` and PyYAML's
    version.  The block is given ``keep(set_id)``: of the documents parsed in it, only those of
    the set ``set_id`` (the one the run evaluates, not every set a registry looked at) are kept
    when it ends, as JSON, written whole or not at all, and only when JSON holds them exactly
    (a YAML date is not kept).  Under ``metadata_only`` privacy nothing is read from or kept in
    the cache: a set file holds question text, which such a run persists nowhere."""
    if privacy is not PrivacyMode.FULL:
        token = _PARSES.set(None)
        try:
            yield lambda _set_id: None
        finally:
            _PARSES.reset(token)
        return
    parses = _Parses(cache_dir / "parsed-yaml")
    kept: list[str] = []
    token = _PARSES.set(parses)
    try:
        yield kept.append
    finally:
        _PARSES.reset(token)
    for path, document in parses.parsed.items():
        if isinstance(document, dict) and document.get("id") in kept:
            _keep(path, document)


def _cache_key(text: str) -> str:
    return hashlib.sha256(f"{PARSE_REVISION}|PyYAML {yaml.__version__}|".encode() + text.encode("utf-8")).hexdigest()


def _parsed_yaml(path: Path, text: str, error: FileError) -> Any:
    parses = _PARSES.get()
    if parses is None:
        return _parse_yaml(path, text, error)
    key = _cache_key(text)
    entry = parses.folder / f"{key}.json"
    with contextlib.suppress(OSError, ValueError, RecursionError):
        kept = json.loads(entry.read_text(encoding="utf-8"))
        if isinstance(kept, dict) and kept.get("text_sha256") == key and "document" in kept:
            return kept["document"]
    document = _parse_yaml(path, text, error)
    parses.parsed[entry] = document
    return document


def _keep(path: Path, document: Any) -> None:
    try:
        encoded = json.dumps(document, ensure_ascii=False)
    except (TypeError, ValueError):  # a date, a key that is not a string: not JSON
        return
    if json.loads(encoded) != document:  # an integer key, a NaN: JSON would change it
        return
    staging = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    entry = f'{{"text_sha256": {json.dumps(path.stem)}, "document": {encoded}}}'
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        staging.write_text(entry, encoding="utf-8")
        os.replace(staging, path)
    except OSError:
        with contextlib.suppress(OSError):
            staging.unlink()


def _parse_yaml(path: Path, text: str, error: FileError) -> Any:
    try:
        return unicode_only(path, load_yaml(text), error)
    except yaml.YAMLError as exc:
        raise error(path, describe_yaml_error(exc)) from None


def parse_document(path: Path, suffix: str, text: str, error: FileError) -> Any:
    """A YAML (``.yaml``, ``.yml``) or JSON document, refused in one line when it is not one."""
    if suffix in (".yaml", ".yml"):
        return _parsed_yaml(path, text, error)
    try:
        return unicode_only(path, json.loads(text, object_pairs_hook=unique_keys), error)
    except DuplicateKeyError as exc:
        raise error(path, duplicate_key(exc)) from None
    except json.JSONDecodeError as exc:
        raise error(path, f"malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:  # a number too long to convert, nesting too deep
        raise error(path, f"cannot read the JSON: {unreadable(exc)}") from None


def parse_jsonl_set(path: Path, text: str, items: str, error: FileError, *, header_must_be_object: bool = True) -> Any:
    """A JSONL set file as the document a YAML or JSON one holds: an optional first line
    ``{"set": {...}}`` gives the set's fields (else the file's name is its id) and every other
    non-blank line is one item, listed under ``items``.  A line that is not JSON is refused
    naming its number.

    ``header_must_be_object``: a first line ``{"set": ...}`` whose value is not an object is
    refused (question sets); prompt sets have always read it as their first prompt instead,
    which then fails as one, naming the prompt.
    """
    header: dict[str, Any] = {"id": path.stem}
    parsed: list[Any] = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line, object_pairs_hook=unique_keys)
        except DuplicateKeyError as exc:
            raise error(path, f"line {lineno}: {duplicate_key(exc)}") from None
        except json.JSONDecodeError as exc:
            raise error(path, f"malformed JSON on line {lineno}, column {exc.colno}: {exc.msg}") from None
        except (ValueError, RecursionError) as exc:
            raise error(path, f"line {lineno}: cannot read the JSON: {unreadable(exc)}") from None
        if not parsed and isinstance(item, dict) and set(item) == {"set"}:
            if isinstance(item["set"], dict):
                header = {**header, **item["set"]}
                continue
            if header_must_be_object:
                raise error(path, f"line {lineno}: 'set' must be an object")
        parsed.append(item)
    return unicode_only(path, {**header, items: parsed}, error)


def clip(text: str, limit: int = MAX_QUOTED_KEY) -> str:
    """``text`` cut to ``limit`` characters; errors quote it with ``repr``, which escapes the rest."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def duplicate_key(exc: DuplicateKeyError) -> str:
    return f"duplicate key {clip(exc.key)!r}; the keys of a JSON object must be unique"


def unreadable(exc: ValueError | RecursionError) -> str:
    """What ``json.loads`` could not convert, in the author's words."""
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return one_line(str(exc), MAX_QUOTED_PROBLEM)


def is_text(document: Any) -> bool:
    """False when ``document`` holds a lone surrogate (from an escape such as ``"\\ud83d"``)."""
    return is_unicode_text(json.dumps(document, ensure_ascii=False, default=str))


def unicode_only(path: Path, document: Any, error: FileError) -> Any:
    """Refuse escaped lone surrogates (``"\\ud83d"``): valid escapes, but not text that can be
    encoded, digested or stored."""
    if not is_text(document):
        raise error(path, "holds an escaped lone surrogate (such as \\ud83d), which is not text")
    return document
