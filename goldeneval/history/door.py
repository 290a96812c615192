"""The door every kind of run goes through: record, judge, and the outcome both front doors show.

A kind evaluates (its own verb: a retrieval run asks a retriever, a prompt run a model) and
hands the evaluated run here.  The CLI (``goldeneval retrieval``, ``prompts``, ``answers``)
and the Dagster assets call these verbs and nothing else, so the two never decide
differently:

* :func:`record_or_keep` — write the typed run into the store (idempotent for a chosen id),
  or keep it in the spool (:mod:`goldeneval.store.spool`) when the store cannot take it: the
  one write path of both doors (:func:`record_and_judge` for the CLI, the summary assets for
  Dagster); :func:`record` writes to an open store without the spool;
* :func:`judge` — choose the earlier run, decide the comparison state and verdict; the gate
  is :meth:`~goldeneval.core.regression.RegressionVerdict.gate`, the same for
  ``--fail-on-regression`` and the ``no_regression`` check;
* :func:`keep_manifest` — the manifest of the benchmark a run measured, kept once per
  benchmark, for a door that records the run in another process;
* :func:`pinned_baseline` — before anything is evaluated, the run ``--baseline run:<id>``
  pins, so a pinned baseline that cannot be used stores nothing.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, Protocol, TypeVar

from goldeneval.core.baseline import Baseline
from goldeneval.core.collector import fewer_collections
from goldeneval.core.errors import InputError, StoreError
from goldeneval.core.gate import GateDecision, RegressionThresholds
from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import RunRecord, StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.history.comparison import compare_with_history, resolve_pinned_baseline
from goldeneval.store import Store, StoreLocation, open_store, store_exists
from goldeneval.store.spool import keep_run, new_run_id, spool_folder
from goldeneval.store.sql import SavedRun

__all__ = [
    "JudgedSpec",
    "KeptInSpool",
    "Outcome",
    "RecordableRun",
    "judge",
    "keep_manifest",
    "pinned_baseline",
    "record",
    "record_and_judge",
    "record_or_keep",
]


class RecordableRun(Protocol):
    """An evaluated run of any kind: a retrieval run, or a prompt or answer run (ADR-060)."""

    def to_record(self, privacy: PrivacyMode, *, tables_run_id: str | None = None) -> RunRecord: ...


class JudgedSpec(Protocol):
    """What the door reads from a run specification of any kind."""

    @property
    def thresholds(self) -> RegressionThresholds: ...

    @property
    def baseline(self) -> Baseline: ...

    @property
    def privacy(self) -> PrivacyMode: ...


R = TypeVar("R", bound=RecordableRun)


@dataclass(frozen=True)
class Outcome(Generic[R]):
    """An evaluated run, as stored, and its verdict."""

    run: R
    stored: StoredRun
    verdict: RegressionVerdict

    @property
    def gate(self) -> GateDecision:
        return self.verdict.gate(self.stored.complete)


@fewer_collections()
def record(
    store: Store,
    run: RecordableRun,
    privacy: PrivacyMode,
    *,
    run_id: str | None = None,
    tables_run_id: str | None = None,
) -> StoredRun:
    """Write the run into the store in one transaction.  With a ``run_id`` it is idempotent:
    recording the same run again returns the stored one and writes nothing."""
    return store.save_run_in_turn(run.to_record(privacy, tables_run_id=tables_run_id), run_id).stored


class KeptInSpool(StoreError):
    """The store could not take the run; it was kept in the spool (exit 5, as every store error).

    The message says where and how to store it; ``path`` and ``run_id`` say it to a caller
    that finishes the work itself (the Dagster door fails its ``run_complete`` check with it,
    and its regression sensor delivers the file: :mod:`goldeneval.history.delivery`)."""

    def __init__(self, message: str, *, path: Path, run_id: str, cause: str) -> None:
        super().__init__(message)
        self.path = path
        self.run_id = run_id
        self.cause = cause
        """The store's own error, in one line."""


def keep_manifest(
    store: Store | StoreLocation | Path, manifest: BenchmarkManifest | None, privacy: PrivacyMode
) -> None:
    """Keep the manifest of the benchmark a run measured, as ``privacy`` allows, before the
    run itself is recorded: what a step that evaluates in one process and records in another
    (the nightly's steps) must do, since the run rebuilt from its tables carries no manifest.
    Recording a run that carries one keeps it too (:meth:`~goldeneval.store.Store.save_run_in_turn`);
    either way it is kept once per benchmark."""
    if manifest is None:
        return
    opened = store if isinstance(store, Store) else open_store(store)
    opened.save_manifest(manifest.for_privacy(privacy))


@fewer_collections()
def record_or_keep(
    store: Store | StoreLocation | Path,
    run: RecordableRun,
    privacy: PrivacyMode,
    held: ExitStack,
    *,
    run_id: str | None = None,
    tables_run_id: str | None = None,
    spool: Path | None = None,
    origin: Mapping[str, str] | None = None,
) -> tuple[Store, SavedRun]:
    """Write the run under ``run_id`` (default: an id chosen now), the one write path of both
    doors; returns the store, opened, and the saved run.  The store stays
    :meth:`~goldeneval.store.Store.held` until ``held`` closes, so judging the run reads
    through the same connection.  Saving is idempotent by the id: a run stored already is
    returned, not stored again.

    When the store cannot be opened or written, the record (which obeys ``privacy`` already)
    is kept in the spool (``spool``, default :func:`~goldeneval.store.spool.spool_folder`)
    under that id, with ``origin`` (:attr:`~goldeneval.store.spool.SpooledRun.origin`), and
    :class:`KeptInSpool` says so."""
    record_ = run.to_record(privacy, tables_run_id=tables_run_id)
    run_id = run_id or new_run_id()
    try:
        opened = store if isinstance(store, Store) else open_store(store)
        held.enter_context(opened.held())
        return opened, opened.save_run_in_turn(record_, run_id)
    except StoreError as exc:
        location = store.location if isinstance(store, Store) else StoreLocation.parse(store)
        try:
            kept = keep_run(record_, run_id, location, spool_folder(spool), origin)
        except OSError as spool_error:
            raise StoreError(f"{exc}; the run could not be kept in the spool either: {spool_error}") from None
        retry = f"goldeneval store retry --store {shlex.quote(str(location))}"
        if location.shown_without_secrets:
            retry += (
                " (with the store's password where *** stands, or that part left out and the password in PGPASSWORD)"
            )
        raise KeptInSpool(
            f"{exc}; the run was kept in {kept}; store it with: {retry}", path=kept, run_id=run_id, cause=str(exc)
        ) from None


@fewer_collections()
def judge(
    store: Store,
    stored: StoredRun,
    spec: JudgedSpec,
    *,
    pinned: StoredRun | None = None,
    preceded: bool | None = None,
) -> RegressionVerdict:
    """The verdict of a stored run against the earlier run ``spec.baseline`` chooses.

    ``preceded`` is what recording found (see :func:`record_and_judge`); without it the
    earlier run is chosen from the history as it is now."""
    return compare_with_history(store, stored, spec.thresholds, spec.baseline, pinned=pinned, preceded=preceded)


def pinned_baseline(
    location: StoreLocation | Path | Store, spec: JudgedSpec, set_id: str, grader: str
) -> StoredRun | None:
    """The run ``spec.baseline`` pins (``run:<id>``, or ``series:<name>``'s latest), or None.
    Both doors call it before they evaluate, so a pinned baseline that cannot be used stores
    nothing, and (from a location) asking never creates a store."""
    if not spec.baseline.pinned:
        return None
    if isinstance(location, Store):
        store = location
    else:
        where = StoreLocation.parse(location)
        if not store_exists(where):
            baseline = spec.baseline
            named = f"run {baseline.run_id!r}" if baseline.kind == "run" else f"series {baseline.series!r}"
            raise InputError(f"baseline {named}: the store {where} does not exist")
        store = open_store(where)
    return resolve_pinned_baseline(store, spec.baseline, set_id, grader)


def record_and_judge(
    store: Store | StoreLocation | Path,
    evaluated: R,
    spec: JudgedSpec,
    *,
    pinned: StoredRun | None = None,
    spool: Path | None = None,
) -> Outcome[R]:
    """Record an evaluated run and judge it: the last two verbs of every run.

    ``store`` is an open store or its location (opened here, so a server that went down
    while the run was evaluated is caught too).  When the store cannot be opened or written
    (:class:`StoreError`), the run is kept in the spool (``spool``, default
    :func:`~goldeneval.store.spool.spool_folder`) under the run id chosen before the write,
    and the store error says where and how to store it (``goldeneval store retry``); saving
    is idempotent by that id, so a run whose commit did succeed is never stored twice.

    Whether the series had a complete run already is decided while the run is written,
    under the writers' turn (:meth:`~goldeneval.store.Store.save_run_in_turn`), so of runs
    of one series recorded at the same moment exactly one is the baseline."""
    with ExitStack() as held:
        opened, saved = record_or_keep(store, evaluated, spec.privacy, held, spool=spool)
        verdict = judge(opened, saved.stored, spec, pinned=pinned, preceded=saved.preceded)
    return Outcome(evaluated, saved.stored, verdict)
