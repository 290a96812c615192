"""The spool: finished runs the store could not take, kept on local disk until ``goldeneval
store retry`` stores them (issue 25).

When writing a run fails (the server is down, the disk is full), the door
(:func:`goldeneval.history.door.record_and_judge`) keeps the run's record here, one JSON file
per run named by its run id, and the run is not lost with the exit 5.  A spool file holds
exactly what the store would hold: the :class:`~goldeneval.core.records.RunRecord`, which
already obeys the run's privacy mode, its details as the very text the store would write,
and the run id chosen before the write.  It is written to a temporary name and renamed, so a
spool file is whole or absent.

Storing a spooled run is idempotent by its run id (:meth:`~goldeneval.store.Store.save_run`):
when the exit 5 came after a commit that did succeed, retrying stores nothing twice.  Each
file names the store it was meant for (a URL without its password); a retry stores only
the runs meant for the store it is given.
"""

from __future__ import annotations

import json
import os
import tempfile
import uuid
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from goldeneval.core.errors import InputError, StoreError
from goldeneval.core.kinds import read_details
from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.records import RunRecord, SliceRates
from goldeneval.store.location import StoreLocation

__all__ = [
    "DEFAULT_SPOOL",
    "SPOOL_ENV",
    "SpooledRun",
    "keep_run",
    "new_run_id",
    "read_spooled",
    "readable_spooled",
    "spool_folder",
    "spooled_files",
    "store_target",
]

SPOOL_ENV = "GOLDENEVAL_SPOOL"
DEFAULT_SPOOL = Path(".goldeneval") / "spool"
"""Relative to the working directory, beside the default store, tables and cache."""
_FORMAT = 1
_SUFFIX = ".json"


def new_run_id() -> str:
    """A run id as the store chooses one (:meth:`~goldeneval.store.Store.save_run_in_turn`)."""
    return uuid.uuid4().hex


def spool_folder(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The spool folder: ``explicit``, else ``$GOLDENEVAL_SPOOL``, else ``.goldeneval/spool``."""
    if explicit:
        return Path(explicit)
    env = os.environ.get(SPOOL_ENV)
    return Path(env) if env else DEFAULT_SPOOL


def store_target(location: StoreLocation) -> str:
    """The store a spooled run is meant for, as a spool file names it: an absolute DuckDB path,
    or the URL without its password."""
    return str(location.path.resolve()) if location.path is not None else str(location)


@dataclass(frozen=True)
class SpooledRun:
    """A run kept in the spool: its chosen id, the store it is meant for, and its record."""

    run_id: str
    target: str
    record: RunRecord
    path: Path
    origin: dict[str, str]
    """Where the run was made, as the door that kept it says (the Dagster door: its summary
    asset, partition and run), so whoever delivers it can finish that door's work; empty
    for the CLI's runs."""


_SUMMARY_FIELDS = (
    "set_id",
    "model",
    "grader",
    "pass_rate",
    "mean_score",
    "question_count",
    "scored_count",
    "error_count",
)
_COMPARABILITY_FIELDS = ("label_digest", "benchmark_fingerprint", "variant_fingerprint", "privacy")
"""The record's fields a spool file holds as they are, written and read back from these two
lists (in the file's order: the summary first, what decides comparability last)."""


def _record_json(record: RunRecord, run_id: str, target: str, origin: Mapping[str, str]) -> dict[str, Any]:
    created_at = record.created_at or datetime.now(UTC)
    return {
        "goldeneval_spool": _FORMAT,
        "run_id": run_id,
        "target": target,
        **{name: getattr(record, name) for name in _SUMMARY_FIELDS},
        "details": record.details.to_json_text(),  # the very text the store would write
        "slices": [[s.kind, s.value, s.questions, s.scored, s.pass_rate, s.mean_score] for s in record.slices],
        "provenance": dict(record.provenance),
        "created_at": created_at.astimezone(UTC).isoformat(),
        **{name: getattr(record, name) for name in _COMPARABILITY_FIELDS},
        "origin": dict(origin),
        # as the store would keep it (no document id under metadata_only); absent in older files
        **({} if record.manifest is None else {"manifest": record.manifest.to_json_text()}),
    }


def keep_run(
    record: RunRecord, run_id: str, location: StoreLocation, folder: Path, origin: Mapping[str, str] | None = None
) -> Path:
    """Write the run to ``folder``/``<run_id>.json`` (whole or not at all); returns the path.
    ``origin`` says which door kept it (:attr:`SpooledRun.origin`).  Raises :class:`OSError`
    when it cannot be written."""
    folder.mkdir(parents=True, exist_ok=True)
    text = json.dumps(_record_json(record, run_id, store_target(location), origin or {}))
    final = folder / f"{run_id}{_SUFFIX}"
    handle, temporary = tempfile.mkstemp(prefix=f".{run_id}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, final)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return final


def spooled_files(folder: Path) -> list[Path]:
    """The spool files in ``folder``, oldest first (temporary files are never listed, nor a file
    another process delivered while they were listed)."""
    if not folder.is_dir():
        return []
    dated: list[tuple[float, str, Path]] = []
    for path in folder.iterdir():
        if path.suffix != _SUFFIX or path.name.startswith("."):
            continue
        try:
            if path.is_file():
                dated.append((path.stat().st_mtime, path.name, path))
        except FileNotFoundError:  # delivered by another process meanwhile
            continue
    return [path for _, _, path in sorted(dated)]


def readable_spooled(folder: Path) -> Iterator[SpooledRun]:
    """The spool files in ``folder`` that can be read, oldest first: for a reader that only
    looks (a file that cannot be read is :func:`read_spooled`'s error where it is delivered)."""
    for path in spooled_files(folder):
        try:
            yield read_spooled(path)
        except InputError:
            continue


def read_spooled(path: Path) -> SpooledRun:
    """A spool file read back into the record it was written from; invalid input names the file."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(raw, dict) or raw.get("goldeneval_spool") != _FORMAT:
            raise ValueError("not a goldeneval spool file")
        created_at = datetime.fromisoformat(raw["created_at"])
        record = RunRecord(
            **{name: raw[name] for name in _SUMMARY_FIELDS},
            details=read_details(raw["details"], f"spool file {path}"),
            slices=tuple(SliceRates(*row) for row in raw["slices"]),
            provenance=dict(raw["provenance"]),
            created_at=created_at,
            **{name: raw[name] for name in _COMPARABILITY_FIELDS},
            manifest=_manifest(raw, path),
        )
        origin = raw.get("origin") or {}  # absent in files written before the Dagster door spooled
        if not isinstance(origin, dict):
            raise ValueError("origin: expected an object")
        return SpooledRun(
            run_id=str(raw["run_id"]),
            target=str(raw["target"]),
            record=record,
            path=path,
            origin={str(k): str(v) for k, v in origin.items()},
        )
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(f"spool file {path}: gone (delivered by another process meanwhile)") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(f"spool file {path}: cannot be read: {exc}") from None


def _manifest(raw: dict[str, Any], path: Path) -> BenchmarkManifest | None:
    """The benchmark manifest a spool file carries (files written before manifests: none)."""
    text, fingerprint = raw.get("manifest"), raw.get("benchmark_fingerprint")
    if text is None or fingerprint is None:
        return None
    try:
        return BenchmarkManifest.from_json_text(str(fingerprint), str(text), f"spool file {path}")
    except StoreError as exc:
        raise InputError(str(exc)) from None
