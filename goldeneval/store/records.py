"""What the store takes and gives back: a run to record, a stored run, its rates per slice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Literal

import numpy as np

from goldeneval.core.errors import InputError, StoreError
from goldeneval.retrieval.details import RetrievalDetails, RunDetails, parse_details_json, read_verdicts


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
class RunRecord:
    """A run as the store sees it, before it has an id."""

    set_id: str
    model: str
    """The series name: the CLI's ``--name`` (default the retriever id) or the suite's name."""
    grader: str
    pass_rate: float | None
    mean_score: float | None
    question_count: int
    scored_count: int
    error_count: int
    details: RunDetails
    """Retrieval details, or prompt/answer details (``kind``) for prompt and answer runs."""
    slices: Sequence[SliceRates] = ()
    provenance: Mapping[str, str | None] = field(default_factory=dict)
    created_at: datetime | None = None
    label_digest: str | None = None
    benchmark_fingerprint: str | None = None
    variant_fingerprint: str | None = None
    privacy: str | None = None

    @property
    def status(self) -> str:
        return "complete" if self.error_count == 0 else "incomplete"


@dataclass(frozen=True)
class StoredRun:
    """A stored run.  Its details are read on first use, and only when they were loaded
    (queries over many runs leave them out)."""

    id: str
    created_at: datetime
    set_id: str
    model: str
    grader: str
    pass_rate: float | None
    mean_score: float | None
    question_count: int
    scored_count: int
    error_count: int
    status: str
    details_json: str | None
    provenance: Mapping[str, str | None]
    label_digest: str | None = None
    benchmark_fingerprint: str | None = None
    variant_fingerprint: str | None = None
    privacy: str | None = None
    retriever_id: str | None = None
    tables_run_id: str | None = None

    @property
    def complete(self) -> bool:
        return self.status == "complete"

    @cached_property
    def details(self) -> RunDetails:
        if self.details_json is None:
            raise StoreError(f"run {self.id}: its details were not loaded (use get_run)")
        return parse_details_json(self.details_json, f"run {self.id}")

    @cached_property
    def _stored_verdicts(self) -> dict[str, tuple[list[str], np.ndarray]] | None:
        if "details" in self.__dict__ or self.details_json is None:  # parsed already, or not loaded
            return None
        return read_verdicts(self.details_json, f"run {self.id}")

    def verdicts(self, column: Literal["top1_hit", "top3_hit"]) -> tuple[list[str], np.ndarray]:
        """The scored questions' ids and their top-1 or top-3 verdicts, what a comparison pairs:
        read from the stored columns alone unless the whole details were already read."""
        light = self._stored_verdicts
        if light is not None:
            return light[column]
        return self.retrieval_details.verdicts(column)

    @property
    def retrieval_details(self) -> RetrievalDetails:
        """The details of a retrieval run; a prompt or answer run is invalid input here."""
        details = self.details
        if not isinstance(details, RetrievalDetails):
            raise InputError(f"run {self.id} is a {details.kind} run (grader {self.grader!r}), not a retrieval run")
        return details
