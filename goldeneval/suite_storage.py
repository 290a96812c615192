"""Where the suite file is, and its ``storage:`` section, read without the rest of the file.

:mod:`goldeneval.suite` models the whole file (sets, retrievers, models, schedules, alerts)
and so imports both kinds; a command that only needs to know where results are stored
(``goldeneval runs``, ``purge``, ``store``) reads this module alone, which imports neither.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from goldeneval.core.errors import InputError, invalid_input
from goldeneval.core.settings import Flag
from goldeneval.core.storage import CACHE, CONFIG_ENV, CONFIG_FILE_NAME, STORE, TABLES, resolve_dir
from goldeneval.core.text_files import read_utf8
from goldeneval.core.yaml_errors import describe_yaml_error, load_yaml
from goldeneval.store.location import StoreLocation, resolve_store

__all__ = [
    "CONFIG_ENV",
    "CONFIG_FILE_NAME",
    "StorageConfig",
    "SuiteStorage",
    "find_suite_file",
    "load_storage",
    "read_suite_file",
]


class StorageConfig(BaseModel):
    """Where results go; absent: the default.  The environment overrides each (goldeneval.core.storage)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    store: Annotated[str | None, Flag()] = Field(
        default=None,
        description="The result store: a DuckDB file (relative to this file) or a postgresql:// URL; "
        f"${STORE.env} overrides it. Default: {STORE.default.as_posix()}.",
    )
    tables: str | None = Field(
        default=None,
        description=f"Root of the hive-style Parquet tables; ${TABLES.env} overrides it. "
        f"Default: {TABLES.default.as_posix()}.",
    )
    cache: Annotated[str | None, Flag("--cache-dir")] = Field(
        default=None,
        description=f"Retriever index and embedding cache; ${CACHE.env} overrides it. "
        f"Default: {CACHE.default.as_posix()}.",
    )


@dataclass(frozen=True)
class SuiteStorage:
    """A suite file's ``storage:`` section, and the file it is in (``None``: no suite file).

    Each method resolves one setting as both doors do (:mod:`goldeneval.core.storage`): the
    flag, else the environment, else this section (relative to the file), else the default
    (relative to the file's folder; without a file, to the working directory)."""

    config: StorageConfig = dataclasses.field(default_factory=StorageConfig)
    path: Path | None = None

    @property
    def folder(self) -> Path | None:
        return self.path.parent if self.path is not None else None

    def store(self, flag: StoreLocation | str | os.PathLike[str] | None = None) -> StoreLocation:
        return resolve_store(flag, suite_value=self.config.store, suite_folder=self.folder)

    def tables(self, flag: str | os.PathLike[str] | None = None) -> Path:
        return resolve_dir(TABLES, flag, suite_value=self.config.tables, suite_folder=self.folder)

    def cache(self, flag: str | os.PathLike[str] | None = None) -> Path:
        return resolve_dir(CACHE, flag, suite_value=self.config.cache, suite_folder=self.folder)


def read_suite_file(path: Path) -> Any:
    """The suite file's YAML, or an InputError naming the file."""
    text = read_utf8(path, InputError, "suite file not found; create it (docs/guide/dagster.md)")
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: {describe_yaml_error(exc)}") from None


def find_suite_file(explicit: str | Path | None = None) -> Path | None:
    """The suite file: ``explicit`` (``--config``), else ``$GOLDENEVAL_CONFIG``, else
    ``goldeneval.yaml`` in the working directory when there is one, else ``None``."""
    if explicit:
        return Path(explicit)
    configured = os.environ.get(CONFIG_ENV)
    if configured:
        return Path(configured)
    local = Path.cwd() / CONFIG_FILE_NAME
    return local if local.is_file() else None


def load_storage(explicit: str | Path | None = None) -> SuiteStorage:
    """The ``storage:`` section of the suite file :func:`find_suite_file` finds (the rest of the
    file is not read: no set is loaded); an empty one without a suite file."""
    found = find_suite_file(explicit)
    if found is None:
        return SuiteStorage()
    path = found.resolve()
    raw = read_suite_file(path)
    if not isinstance(raw, dict):
        raise InputError(f"{path}: field '(file)': Input should be a valid dictionary")
    try:
        config = StorageConfig.model_validate(raw.get("storage") or {})
    except ValidationError as exc:
        raise invalid_input(exc, path, within=("storage",), clipped=False) from None
    return SuiteStorage(config=config, path=path)
