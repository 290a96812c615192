"""The accepted level of a series: a regression stays red until a person accepts it.

With ``baseline: accepted`` (the suite file's default for the nightly; ``--baseline accepted``
on the command line) a run is compared with its series' *accepted level*, not with the night
before it.  The level is computed from the store alone, the runs and the ``acceptances``
table, by walking the series' complete runs oldest first:

* a run a person accepted (:func:`accept`: ``goldeneval accept``, the Dagster job
  ``accept_run``) is the level, whatever it measured; the walk starts at the latest
  *acceptance* (the one recorded last), whichever run it names, so accepting an older run
  again undoes a later acceptance: the runs measured after it are walked again against it;
* every later complete run is judged as the gate judges it, against the level so far (no
  level yet: against the run before it, as ``previous`` does; none: it is the series'
  baseline), and becomes the level exactly when it passes the gate: a ``baseline``, or a
  ``comparable`` run within every threshold;
* a run that regressed, or whose comparison was ``mismatch`` (another corpus, other labels,
  another protocol) or ``unknown`` (a benchmark nobody declared, labels too incomplete to
  judge it), never becomes the level on its own: a changed benchmark, like a drop, stays red
  until a person accepts a run of the series;
* incomplete runs are never the level and never walked through.

So after a regression on night 2 and the same retriever on night 3, night 3 is compared with
night 1 and fails; once a person accepts night 3, night 4 is compared with it.  A level
reached by passing the gate can still drift down by less than the thresholds each night;
``best`` is the baseline that catches slow drift.

Why recomputed and not stored: a run's stored gate outcome would be the outcome against
whatever its own door chose (a CLI run judged against ``previous`` passes against the very
night that regressed), so a stored verdict cannot say whether a run passed against the
*level*.  Walking the series answers exactly that, from what the store holds anyway, with the
thresholds the current run is judged by; no column is added to ``runs`` and old rows need no
backfill.  The walk starts at the latest acceptance, so its length is the nights since then,
and it reads over one held connection: judging night 30 of the 81-question sample series took
0.73 s against 0.27 s with ``previous`` (DuckDB, ``compare_with_history``), about 16 ms a night.
"""

from __future__ import annotations

import getpass
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from goldeneval.core.errors import InputError
from goldeneval.core.records import StoredRun
from goldeneval.core.regression import RegressionVerdict
from goldeneval.store import Acceptance, Store

__all__ = ["Accepted", "Level", "accept", "accepted_level", "default_accepter", "level_after"]

Judge = Callable[[StoredRun, StoredRun | None], RegressionVerdict]
"""The gate's verdict of a run against an earlier one (None: the series' first complete run)."""


@dataclass(frozen=True)
class Level:
    """A series' accepted level: the run, and the acceptance that made it one (None: it
    passed the gate)."""

    run: StoredRun
    acceptance: Acceptance | None

    @property
    def reference(self) -> str:
        """``accepted level run <id> (accepted by <who>: <why>)``, or ``(it passed the gate)``."""
        how = self.acceptance.shown if self.acceptance is not None else "it passed the gate"
        return f"accepted level run {self.run.id} ({how})"


def accepted_level(store: Store, current: StoredRun, judge: Judge) -> Level | None:
    """The accepted level ``current`` is compared with, or None when no earlier run of its
    series is one (no complete run, or none passed the gate and nobody accepted one).
    ``judge`` is the gate's comparison (:func:`goldeneval.history.comparison.gate_verdict`)."""
    return _walk(store, current, judge, including=False, leaving=())


def level_after(store: Store, latest: StoredRun, judge: Judge, *, leaving: Sequence[str] = ()) -> Level | None:
    """The level the run after ``latest`` would be compared with: the same walk, through
    ``latest`` too.  ``leaving`` walks as if those runs (and their acceptances) were deleted:
    what retention asks before it deletes anything."""
    return _walk(store, latest, judge, including=True, leaving=leaving)


def _walk(store: Store, current: StoredRun, judge: Judge, *, including: bool, leaving: Sequence[str]) -> Level | None:
    level: Level | None = None
    previous: StoredRun | None = None
    after: StoredRun | None = None
    with store.held():  # one connection for the walk's queries (a DuckDB connection costs 10-50 ms)
        latest = store.latest_accepted_run(current, including=including, leaving=leaving)
        if latest is not None:  # the latest acceptance recorded, whichever run it names
            accepted_run, acceptance = latest
            after = accepted_run
            level = Level(_with_details(store, accepted_run), acceptance)
        for night in store.complete_runs_before(current, after=after, including=including, leaving=leaving):
            run = _with_details(store, night)
            reference = level.run if level is not None else previous
            if judge(run, reference).passes_gate:
                level = Level(run, None)
            previous = run
    return level


def _with_details(store: Store, run: StoredRun) -> StoredRun:
    found = store.get_run(run.id)
    if found is None:  # purged while the walk ran
        raise InputError(f"run {run.id} was deleted while its series' accepted level was computed; judge again")
    return found


@dataclass(frozen=True)
class Accepted:
    """What :func:`accept` recorded: the run and the acceptance, and the level the series'
    next run is compared with now (None: the series has no level, which cannot happen after
    an acceptance unless the run was purged meanwhile)."""

    run: StoredRun
    acceptance: Acceptance
    level: Level | None = None

    @property
    def line(self) -> str:
        """The one line both doors print; the run's two rates by its kind's names for them
        (``top-1 hit rate``, ``pass rate``, ...: its details' ``rate_names``)."""
        run = self.run
        names = run.details.rate_names  # the kind's: top-1 and top-3 hit rates, pass rate and mean score, ...
        rates = f"{names['pass_rate']} {_rate(run.pass_rate)}, {names['mean_score']} {_rate(run.mean_score)}"
        line = (
            f"accepted run {run.id} (set {run.set_id}, series {run.model}, {rates}) {self.acceptance.shown}; "
            "from now on, the series' runs judged against the accepted level (baseline: accepted, the "
            "nightly's default) compare with it until a later run passes the gate"
        )
        if self.level is not None and self.level.run.id != run.id:
            line += (
                f"; a run measured after it passed the gate against it (default thresholds), so the level now is "
                f"run {self.level.run.id} and the series' next run compares with that"
            )
        return line


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def default_accepter() -> str:
    """Who accepts when ``--by`` is not given: the user running the command."""
    try:
        return getpass.getuser()
    except (OSError, KeyError):  # no user name in the environment nor in the password database
        return "unknown"


def accept(store: Store, run_text: str, reason: str, by: str | None = None) -> Accepted:
    """A person accepts a stored run as its series' level: the one domain function behind
    ``goldeneval accept`` and the Dagster job ``accept_run``.

    ``run_text`` is a run id or a unique prefix.  Raises :class:`InputError` (exit 3) for an
    unknown run, an incomplete run (no numeric verdict can be judged against it) or an empty
    reason or name; nothing is stored then."""
    reason = reason.strip()
    if not reason:
        raise InputError("accept: --reason is empty: say why this run is accepted as its series' level")
    accepter = (by if by is not None else default_accepter()).strip()
    if not accepter:
        raise InputError("accept: --by is empty: name who accepts the run")
    run = store.find_run(run_text)
    if not run.complete:
        raise InputError(
            f"accept: run {run.id} is incomplete ({run.error_count} of {run.question_count} {run.details.unit} "
            "errored): an incomplete run cannot be a series' level"
        )
    acceptance = store.accept_run(run.id, accepter, reason)
    from goldeneval.history.comparison import gate_judge  # the gate's rule; it imports this module

    latest = store.latest_complete_run(run)
    level = None if latest is None else level_after(store, latest, gate_judge(store))
    return Accepted(run, acceptance, level)
