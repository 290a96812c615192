"""Which earlier run a new run is compared with, as a run specification names it: ``previous``
(the latest earlier complete run of the series), ``best`` (the best earlier comparable run;
the previous one when none is comparable) or ``run:<id>`` (a pinned run).  The choice itself,
against the stored history, is :func:`goldeneval.history.comparison.compare_with_history`'s;
this is only the value a flag, a suite file and a specification carry.
"""

from __future__ import annotations

from dataclasses import dataclass

from goldeneval.core.errors import InputError

__all__ = ["PREVIOUS", "Baseline"]


@dataclass(frozen=True)
class Baseline:
    """How the earlier run is chosen: ``previous``, ``best`` or ``run:<id>``."""

    kind: str = "previous"
    run_id: str | None = None

    @classmethod
    def parse(cls, text: str) -> Baseline:
        if text in ("previous", "best"):
            return cls(text)
        kind, sep, run_id = text.partition(":")
        if kind == "run" and sep and run_id:
            return cls("run", run_id)
        raise InputError(f"baseline {text!r}: expected 'previous', 'best' or 'run:<id>'")


PREVIOUS = Baseline()
