"""Delivering the spool: storing the runs a store could not take when they were made.

Both doors keep such a run in the spool through :func:`goldeneval.history.door.record_or_keep`,
and both deliver it through :func:`deliver_spooled`: ``goldeneval store retry`` by hand, the
Dagster regression sensor at its next tick for the runs its summary asset kept.  A run is
stored under the id it was kept with, so delivering is idempotent: a run whose commit did
succeed before the error, or that another deliverer stored first, is stored once.  A file is
deleted only after its run is in the store; one meant for another store is left for it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from goldeneval.core.errors import InputError, StoreError
from goldeneval.core.records import StoredRun
from goldeneval.store import Store, StoreLocation, open_store
from goldeneval.store.spool import SpooledRun, read_spooled, spooled_files, store_target

__all__ = ["Delivered", "deliver_spooled"]


@dataclass(frozen=True)
class Delivered:
    """A kept run and what the store holds for it now."""

    kept: SpooledRun
    stored: StoredRun | None
    """None when the run was kept for another store and left in the spool."""
    already: bool = False
    """The store held it already (its commit did succeed, or it was delivered before)."""


def deliver_spooled(
    location: StoreLocation,
    folder: Path,
    *,
    wanted: Callable[[SpooledRun], bool] | None = None,
    on_unreadable: Callable[[Path, InputError], None] | None = None,
) -> Iterator[Delivered]:
    """Store the runs kept in ``folder`` for the store at ``location``, oldest first, yielding
    each as it is stored (a run kept for another store is yielded with ``stored`` None).
    ``wanted`` picks the files to look at (the Dagster sensor: its own summary asset's).

    Raises :class:`StoreError` naming the folder while the store still cannot take them; the
    files not yet stored stay.  A file that cannot be read is an
    :class:`~goldeneval.core.errors.InputError` naming it, and stays; with ``on_unreadable``
    (a sensor, which must not stop at one bad file) it is reported there and skipped."""
    target = store_target(location)
    store: Store | None = None
    for path in spooled_files(folder):
        try:
            kept = read_spooled(path)
        except InputError as exc:
            if on_unreadable is None:
                raise
            on_unreadable(path, exc)
            continue
        if wanted is not None and not wanted(kept):
            continue
        if kept.target != target:
            yield Delivered(kept, None)
            continue
        try:
            store = store or open_store(location)
            saved = store.save_run_in_turn(kept.record, kept.run_id)
        except StoreError as exc:
            raise StoreError(f"{exc}; the kept runs stay in {folder}") from None
        path.unlink(missing_ok=True)
        yield Delivered(kept, saved.stored, already=saved.preceded is None)
