"""Which earlier run a new run is compared with, as a run specification names it: ``previous``
(the latest earlier complete run of the series), ``accepted`` (the series' last accepted
level: the latest earlier run that passed the gate against its own accepted level, or one a
person accepted with ``goldeneval accept``; never a night that regressed:
:mod:`goldeneval.history.accepted`), ``best`` (the best earlier comparable run;
the previous one when none is comparable), ``run:<id>`` (a pinned run) or ``series:<name>``
(the latest complete run of another series of the same set and grader: a pull request's run
compared with main's latest without joining main's series).  The choice itself,
against the stored history, is :func:`goldeneval.history.comparison.compare_with_history`'s;
this is only the value a flag, a suite file and a specification carry.
"""

from __future__ import annotations

from dataclasses import dataclass

from goldeneval.core.errors import InputError

__all__ = ["ACCEPTED", "PREVIOUS", "Baseline"]


WORDS = ("previous", "accepted", "best")
"""The baselines named by a word: each is found by walking back the run's own series."""


@dataclass(frozen=True)
class Baseline:
    """How the earlier run is chosen: ``previous``, ``accepted``, ``best``, ``run:<id>`` or ``series:<name>``."""

    kind: str = "previous"
    run_id: str | None = None
    series: str | None = None

    @classmethod
    def parse(cls, text: str) -> Baseline:
        if text in WORDS:
            return cls(text)
        kind, sep, value = text.partition(":")
        if kind == "run" and sep and value:
            return cls("run", value)
        if kind == "series" and sep and value:
            return cls("series", series=value)
        raise InputError(f"baseline {text!r}: expected 'previous', 'accepted', 'best', 'run:<id>' or 'series:<name>'")

    @property
    def pinned(self) -> bool:
        """Named by the specification (a run, or another series' latest run), not found by
        walking back the run's own series: it is resolved, and refused, before anything is
        stored, and a run compared with it is never its series' baseline."""
        return self.kind in ("run", "series")

    def __str__(self) -> str:
        if self.kind == "run":
            return f"run:{self.run_id}"
        if self.kind == "series":
            return f"series:{self.series}"
        return self.kind


PREVIOUS = Baseline()
ACCEPTED = Baseline("accepted")
