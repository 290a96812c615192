"""Where goldeneval keeps what it writes: the result store, the Parquet tables, the cache.

Each setting is declared here once — its command-line flag, its environment variable, its
key under ``storage:`` in the suite file, its default — and both doors (the ``goldeneval``
command and the Dagster code location) resolve it with :func:`resolve`, in one order:

1. the flag (the CLI only; the Dagster door has none);
2. the environment variable (``GOLDENEVAL_STORE``, ``GOLDENEVAL_TABLES``, ``GOLDENEVAL_CACHE``);
3. the suite file's ``storage.<key>``;
4. the default, ``.goldeneval/results.duckdb``, ``.goldeneval/tables``, ``.goldeneval/cache``.

A relative flag or environment value is relative to the working directory, as a shell
reads it.  A relative suite value is relative to the suite file (as every path in it), and
so is the default when a suite file is in play; without one, the default is relative to the
working directory (the project folder when run from it).  A ``scheme://`` URL (the store's
``postgresql://``) is kept as written, never joined to a folder; which schemes a setting takes
is its reader's business (:meth:`goldeneval.store.StoreLocation.parse`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "CACHE",
    "CONFIG_ENV",
    "CONFIG_FILE_NAME",
    "SETTINGS",
    "STORE",
    "TABLES",
    "StorageSetting",
    "is_url",
    "resolve",
    "resolve_dir",
]

CONFIG_FILE_NAME = "goldeneval.yaml"
CONFIG_ENV = "GOLDENEVAL_CONFIG"
"""Path of the suite file; default: ``goldeneval.yaml`` in the working directory
(:func:`goldeneval.suite_storage.find_suite_file`)."""

URL_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class StorageSetting:
    """One storage setting, as every door names it."""

    key: str
    """Its key under ``storage:`` in the suite file."""
    flag: str
    """The CLI option that sets it."""
    env: str
    """The environment variable that sets it."""
    default: Path
    """Relative: to the suite file's folder, else to the working directory."""
    accepts_url: bool = False
    """Whether a ``scheme://`` value is a URL (kept as written) rather than a path."""


STORE = StorageSetting("store", "--store", "GOLDENEVAL_STORE", Path(".goldeneval") / "results.duckdb", True)
TABLES = StorageSetting("tables", "--tables-root", "GOLDENEVAL_TABLES", Path(".goldeneval") / "tables")
CACHE = StorageSetting("cache", "--cache-dir", "GOLDENEVAL_CACHE", Path(".goldeneval") / "cache")
SETTINGS = (STORE, TABLES, CACHE)


def is_url(value: str | os.PathLike[str]) -> bool:
    """Whether ``value`` is written ``scheme://...`` (a URL, not a file name)."""
    return isinstance(value, str) and URL_SCHEME.match(value) is not None


def _as_given(setting: StorageSetting, value: str | os.PathLike[str]) -> str | Path:
    return value if setting.accepts_url and isinstance(value, str) and is_url(value) else Path(value)


def resolve(
    setting: StorageSetting,
    flag: str | os.PathLike[str] | None = None,
    *,
    suite_value: str | None = None,
    suite_folder: Path | None = None,
) -> str | Path:
    """``setting``'s value: ``flag``, else ``$<setting.env>``, else ``suite_value`` (the suite
    file's ``storage.<key>``, relative to ``suite_folder``), else the default (relative to
    ``suite_folder`` when a suite file is in play).  A URL is returned as the ``str`` it was
    written as (only for a setting that accepts one), anything else as a ``Path``."""
    if flag:
        return _as_given(setting, flag)
    env = os.environ.get(setting.env)
    if env:
        return _as_given(setting, env)
    if suite_value:
        if setting.accepts_url and is_url(suite_value):
            return suite_value
        path = Path(suite_value).expanduser()
        return path if path.is_absolute() or suite_folder is None else suite_folder / path
    return setting.default if suite_folder is None else suite_folder / setting.default


def resolve_dir(
    setting: StorageSetting,
    flag: str | os.PathLike[str] | None = None,
    *,
    suite_value: str | None = None,
    suite_folder: Path | None = None,
) -> Path:
    """:func:`resolve` for a folder setting (the tables root, the cache): always a path."""
    if setting.accepts_url:
        raise ValueError(f"{setting.key} may be a URL: resolve it with resolve()")
    return Path(resolve(setting, flag, suite_value=suite_value, suite_folder=suite_folder))
