"""Parameter types and small options that several command families share: a store location,
key=value options, series names, the output format, the progress bar.

They live apart from :mod:`goldeneval.cli.app` (the group) so that ``goldeneval --help`` imports
none of what they need (the store, the suite file, the retrieval specification).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from goldeneval.core.errors import InputError
from goldeneval.core.storage import CONFIG_ENV, CONFIG_FILE_NAME, STORE, StorageSetting
from goldeneval.store.location import StoreLocation

__all__ = [
    "StoreParam",
    "format_option",
    "parse_options",
    "progress_bar",
    "series_name",
    "sets_dir_option",
    "storage_default_help",
    "store_option",
    "topic_field_option",
    "topics_option",
]

T = TypeVar("T")


def parse_options(values: Sequence[str], hint: str = "--option") -> dict[str, str]:
    options: dict[str, str] = {}
    for value in values:
        key, sep, val = value.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"expected KEY=VALUE, got {value!r}", param_hint=hint)
        options[key] = val
    return options


def progress_bar(enabled: bool) -> Callable[[Sequence[T]], Iterable[T]] | None:
    if not enabled:
        return None
    from tqdm import tqdm

    def wrap(items: Sequence[T]) -> Iterable[T]:
        bar: Iterable[T] = tqdm(
            items, total=len(items), desc="questions", unit="q", file=sys.stderr, delay=1.0, leave=False
        )
        return bar

    return wrap


class StoreParam(click.ParamType[StoreLocation, Any]):
    """A result store: a DuckDB file path, or a ``postgresql://`` URL (shown without its password)."""

    name = "PATH|URL"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> StoreLocation:
        if isinstance(value, StoreLocation):
            return value
        try:
            location = StoreLocation.parse(value)
        except InputError as exc:
            self.fail(str(exc), param, ctx)
        if location.path is None:
            return location
        return StoreLocation(path=click.Path(dir_okay=False, path_type=Path).convert(value, param, ctx))


def storage_default_help(setting: StorageSetting) -> str:
    """The ``Default:`` of a storage option's help: goldeneval.core.storage's order after the flag."""
    return (
        f"Default: ${setting.env}, else storage.{setting.key} of the suite file "
        f"(${CONFIG_ENV}, else ./{CONFIG_FILE_NAME}), else {setting.default.as_posix()}."
    )


store_option = click.option(
    "--store",
    "store_location",
    type=StoreParam(),
    default=None,
    help="Result store: a DuckDB file, or a postgresql:// URL for a shared store. " + storage_default_help(STORE),
)
sets_dir_option = click.option(
    "--sets-dir",
    "sets_dirs",
    multiple=True,
    type=click.Path(file_okay=False, path_type=Path),
    help="Folder of golden set files to register (repeatable); also $GOLDENEVAL_SETS_PATH.",
)
format_option = click.option(
    "--format", "output_format", type=click.Choice(["table", "json"]), default="table", show_default=True
)


def series_name(_ctx: click.Context, _param: click.Parameter, value: str | None) -> str | None:
    if value is None:
        return None
    from goldeneval.core.spec import check_series_name

    try:
        return check_series_name(value)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None


Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def series_option(help_text: str, flag: str = "--name", dest: str = "series") -> Decorator:
    """A series name a run is stored and compared under (checked as the specification checks it)."""
    return click.option(flag, dest, default=None, callback=series_name, help=help_text)


def corpus_option(help_text: str, *, required: bool = False) -> Decorator:
    """``--corpus``: a corpus file or folder that must exist."""
    return click.option(
        "--corpus",
        "corpus_path",
        required=required,
        type=click.Path(exists=True, path_type=Path),
        default=None,
        help=help_text,
    )


def key_value_option(flag: str, dest: str, help_text: str) -> Decorator:
    """A repeatable ``KEY=VALUE`` option (parsed by :func:`parse_options`)."""
    return click.option(flag, dest, multiple=True, help=help_text)


def existing_set_file_option(help_text: str) -> Decorator:
    """``--set`` naming a golden set file that must exist (no registered id, no BEIR folder)."""
    return click.option(
        "--set",
        "set_file",
        required=True,
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        help=help_text,
    )


def folder_option(flag: str, help_text: str, dest: str | None = None) -> Decorator:
    """A folder goldeneval writes below (created when missing), such as ``--cache-dir``."""
    names = (flag, dest) if dest else (flag,)
    return click.option(*names, type=click.Path(file_okay=False, path_type=Path), default=None, help=help_text)


# A TREC qrels --set's topics: goldeneval retrieval and answers ask them, compare and report read
# their text (goldeneval.retrieval.topics).
topics_option = click.option(
    "--topics",
    type=click.Path(path_type=Path, dir_okay=False),
    default=None,
    help="Topics of a TREC qrels --set: a TREC topic file, XML topics, JSONL or TSV (needs --corpus).",
)
topic_field_option = click.option(
    "--topic-field",
    default=None,
    help="The topics' field asked as the question (default: title; text or query where the file has no title).",
)
