"""Moving run history between stores (``goldeneval store copy``): idempotent, run by run."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from goldeneval.core.errors import InputError, StoreError
from goldeneval.store.base import Store
from goldeneval.store.sql import _ACCEPTANCE_COLUMNS, _RUN_COLUMN_COUNT, _RUN_COLUMNS, _SLICE_COLUMNS, Sql


@dataclass(frozen=True)
class CopyReport:
    """What :func:`copy_runs` did: runs written to the target, runs it already held."""

    copied: int
    already_there: int


_COPY_BATCH = 200


def _same_content(a: Sequence[Any], b: Sequence[Any]) -> str | None:
    """The first column in which two stored rows differ (details compared as JSON), or None."""
    for index, column in enumerate(_RUN_COLUMNS.split(", ")):
        left, right = a[index], b[index]
        if column == "details":
            left, right = json.loads(left), json.loads(right)
        if left != right:
            return column
    return None


def copy_runs(source: Store, target: Store) -> CopyReport:
    """Copy every run of ``source`` into ``target`` as stored: the same ids, timestamps,
    provenance, fingerprints, privacy mode, details (verbatim), slices and acceptances.

    Nothing is re-derived, so a ``metadata_only`` run stays free of question text and
    document ids, and the comparisons in the target find what they found in the source.
    All runs are written in one transaction of the target.  A run the target already holds
    with the same content is left as it is (copying twice copies nothing the second time);
    a run id the target holds with different content refuses the whole copy, naming it.
    The benchmarks' manifests the target lacks are copied too, as stored.
    """
    if source.location == target.location or (
        source.location.path is not None
        and target.location.path is not None
        and source.location.path.resolve() == target.location.path.resolve()
    ):
        raise InputError(f"store copy: the source and the target are the same store ({source.name})")
    with source._read() as src:
        ids = [row[0] for row in src.all("SELECT id FROM runs ORDER BY created_at, id")]
    copied = already = 0
    with target._write() as dst:
        target._serialise(dst, ["copy"])
        for start in range(0, len(ids), _COPY_BATCH):
            batch = ids[start : start + _COPY_BATCH]
            with source._read() as src:
                rows = src.all(
                    f"SELECT {_RUN_COLUMNS} FROM runs WHERE {source.dialect.in_list('id')} ORDER BY created_at, id",
                    [batch],
                )
                slices: dict[str, list[tuple[Any, ...]]] = {}
                for found in src.all(
                    f"SELECT run_id, {_SLICE_COLUMNS} FROM run_slices WHERE {source.dialect.in_list('run_id')} "
                    "ORDER BY run_id, slice_kind, slice_value",
                    [batch],
                ):
                    slices.setdefault(found[0], []).append(found[1:])
                accepted = src.all(
                    f"SELECT {_ACCEPTANCE_COLUMNS} FROM acceptances WHERE {source.dialect.in_list('run_id')} "
                    "ORDER BY accepted_at, run_id",
                    [batch],
                )
            for row in rows:
                run_id = row[0]
                held = dst.one(f"SELECT {_RUN_COLUMNS} FROM runs WHERE id = ?", [run_id])
                if held is None:
                    dst.run(f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * _RUN_COLUMN_COUNT)})", row)
                    dst.many(
                        f"INSERT INTO run_slices (run_id, {_SLICE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)",
                        [(run_id, *values) for values in slices.get(run_id, [])],
                    )
                    copied += 1
                    continue
                held_slices = dst.all(
                    f"SELECT {_SLICE_COLUMNS} FROM run_slices WHERE run_id = ? ORDER BY slice_kind, slice_value",
                    [run_id],
                )
                differs = _same_content(held, row) or (None if held_slices == slices.get(run_id, []) else "slices")
                if differs is not None:
                    raise StoreError(
                        f"store copy: {target.name} already holds run {run_id} with different content "
                        f"({differs} differs from {source.name}); nothing was copied"
                    )
                already += 1
            for acceptance in accepted:  # who accepted which run travels with it, once
                held_acceptance = dst.one(
                    "SELECT run_id FROM acceptances WHERE run_id = ? AND accepted_at = ?", acceptance[:2]
                )
                if held_acceptance is None:
                    dst.run(f"INSERT INTO acceptances ({_ACCEPTANCE_COLUMNS}) VALUES (?, ?, ?, ?)", acceptance)
        _copy_manifests(source, target, dst)
    return CopyReport(copied=copied, already_there=already)


_MANIFEST_COLUMNS = "benchmark_fingerprint, created_at, privacy, document_count, question_count, manifest"


def _copy_manifests(source: Store, target: Store, dst: Sql) -> None:
    """The benchmarks' manifests (issue 43) the target lacks, as stored: a copied mismatch
    names what changed as it did in the source."""
    with source._read() as src:
        rows = src.all(f"SELECT {_MANIFEST_COLUMNS} FROM benchmark_manifests ORDER BY benchmark_fingerprint")
    for row in rows:
        if dst.one("SELECT 1 FROM benchmark_manifests WHERE benchmark_fingerprint = ?", [row[0]]) is None:
            dst.run(f"INSERT INTO benchmark_manifests ({_MANIFEST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)", row)
