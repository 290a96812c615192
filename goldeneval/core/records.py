"""The typed run record: what the store takes (:class:`RunRecord`) and gives back
(:class:`StoredRun`), and a run's rates per slice.  Shared by every kind of run; a kind's
details are read through :mod:`goldeneval.core.kinds`.

ADR-072's mapping onto the store is kept at this boundary: a retrieval run is stored under
grader :data:`RETRIEVAL_GRADER`, with ``pass_rate`` its top-1 and ``mean_score`` its top-3
hit rate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Protocol, TypeVar

from goldeneval.core.errors import InputError, StoreError
from goldeneval.core.kinds import RunDetails, read_details, read_paired_outcomes
from goldeneval.core.manifest import BenchmarkManifest
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import Provenance
from goldeneval.core.stats import Verdicts

__all__ = [
    "RETRIEVAL_GRADER",
    "Completion",
    "MeasuredRun",
    "RunRecord",
    "RunSummary",
    "SliceRates",
    "StoredRun",
    "record_of",
]

RETRIEVAL_GRADER = "retrieval_hit_rate"
"""The grader column of retrieval runs (ADR-072); prompt and answer runs store their own."""

D = TypeVar("D")


@dataclass(frozen=True)
class SliceRates:
    """The rates of one slice (a form or a hard class) of a run."""

    kind: str
    value: str
    questions: int
    scored: int
    pass_rate: float | None
    mean_score: float | None


@dataclass(frozen=True)
class RunSummary:
    """What a run row says of a run of any kind, recorded (:class:`RunRecord`) or stored
    (:class:`StoredRun`): what was measured, by which series and grader, its two rates, its
    counts, and what decides whether it compares with another run."""

    set_id: str
    model: str
    """The series name: the CLI's ``--name`` (default the retriever id) or the suite's name."""
    grader: str
    pass_rate: float | None
    mean_score: float | None
    question_count: int
    scored_count: int
    error_count: int
    _: KW_ONLY
    label_digest: str | None = None
    """What decides whether two runs compare: the labels, the benchmark, the variant
    and the privacy mode they were recorded under; None where it was not recorded."""
    benchmark_fingerprint: str | None = None
    variant_fingerprint: str | None = None
    privacy: str | None = None


@dataclass(frozen=True)
class RunRecord(RunSummary):
    """A run as the store sees it, before it has an id."""

    details: RunDetails
    """Retrieval details, or prompt/answer details (``kind``) for prompt and answer runs."""
    slices: Sequence[SliceRates] = ()
    provenance: Mapping[str, str | None] = field(default_factory=dict)
    created_at: datetime | None = None
    manifest: BenchmarkManifest | None = None
    """The manifest of the benchmark it measured, as its privacy mode allows; the store keeps
    it once per benchmark fingerprint (:mod:`goldeneval.core.manifest`)."""

    @property
    def status(self) -> str:
        return "complete" if self.error_count == 0 else "incomplete"


@dataclass(frozen=True)
class StoredRun(RunSummary):
    """A stored run.  Its details are read on first use, and only when they were loaded
    (queries over many runs leave them out)."""

    id: str
    created_at: datetime
    status: str
    details_json: str | None
    provenance: Mapping[str, str | None]
    retriever_id: str | None = None
    tables_run_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @cached_property
    def details(self) -> RunDetails:
        if self.details_json is None:
            raise StoreError(f"run {self.id}: its details were not loaded (use get_run)")
        return read_details(self.details_json, f"run {self.id}")

    @cached_property
    def _stored_outcomes(self) -> Mapping[str, Verdicts] | None:
        if "details" in self.__dict__ or self.details_json is None:  # parsed already, or not loaded
            return None
        return read_paired_outcomes(self.details_json, f"run {self.id}")

    def paired_outcomes(self, rate: str) -> Verdicts | None:
        """The scored questions' ids and their outcomes behind ``rate``, what a comparison
        pairs: read from the stored columns alone where the kind can, unless the whole
        details were already read; None for a rate that is no share of binary outcomes."""
        light = self._stored_outcomes
        if light is not None:
            return light.get(rate)
        return self.details.paired_outcomes(rate)

    def details_as(self, kind: type[D]) -> D:
        """The details, which must be of ``kind``; another kind of run is invalid input here."""
        details = self.details
        if not isinstance(details, kind):
            found = getattr(details, "kind", None) or type(details).__name__
            raise InputError(f"run {self.id} is a {found} run (grader {self.grader!r}), not a {kind.__name__} run")
        return details


@dataclass(frozen=True)
class Completion:
    """How a kind words the completeness rule (a run is complete when no item errored):
    ``unit`` is what was asked (``questions``), ``done`` what a complete run did with all of
    them (``answered``), ``failed`` what happened to the others (``errored or timed out``)."""

    unit: str
    done: str
    failed: str

    def of(self, errors: int, total: int) -> tuple[bool, str]:
        """Whether a run with ``errors`` of ``total`` items failed is complete, and why in words."""
        if errors == 0:
            return True, f"all {total} {self.unit} {self.done}"
        return False, f"{errors} of {total} {self.unit} {self.failed}"


class MeasuredRun(Protocol):
    """What every kind's evaluated run knows of itself, as the store records it."""

    @property
    def set_id(self) -> str: ...
    @property
    def series(self) -> str: ...
    @property
    def started_at(self) -> datetime: ...
    @property
    def provenance(self) -> Provenance: ...
    @property
    def label_digest(self) -> str | None: ...
    @property
    def benchmark_fingerprint(self) -> str | None: ...
    @property
    def variant_fingerprint(self) -> str | None: ...


def record_of(
    run: MeasuredRun,
    privacy: PrivacyMode,
    *,
    grader: str,
    rates: tuple[float | None, float | None],
    counts: tuple[int, int, int],
    details: RunDetails,
    slices: Sequence[SliceRates],
    manifest: BenchmarkManifest | None = None,
) -> RunRecord:
    """The record of an evaluated run of any kind: its ``(pass_rate, mean_score)``, its
    ``(questions, scored, errors)`` counts, its details and slices, and its identity."""
    questions, scored, errors = counts
    return RunRecord(
        set_id=run.set_id,
        model=run.series,
        grader=grader,
        pass_rate=rates[0],
        mean_score=rates[1],
        question_count=questions,
        scored_count=scored,
        error_count=errors,
        details=details,
        slices=slices,
        provenance=run.provenance.as_columns(),
        created_at=run.started_at,
        label_digest=run.label_digest,
        benchmark_fingerprint=run.benchmark_fingerprint,
        variant_fingerprint=run.variant_fingerprint,
        privacy=privacy.value,
        manifest=None if manifest is None else manifest.for_privacy(privacy),
    )
