"""What every kind's run specification has and validates alike (:class:`SpecBase`): the series
it is stored under, how its verdict is decided, what it may persist, its timeout and cache.

Both front doors build a kind's specification (the CLI from flags, Dagster from one suite
cell) and hand it to the door (:mod:`goldeneval.history.door`); nothing else decides how a run
is stored or judged.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from goldeneval.core.baseline import PREVIOUS, Baseline
from goldeneval.core.gate import DEFAULT_THRESHOLDS, RegressionThresholds
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import Provenance
from goldeneval.core.storage import CACHE

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "MAX_SERIES_LENGTH",
    "MAX_TIMEOUT_S",
    "SeriesName",
    "SpecBase",
    "Timeout",
    "check_series_name",
]

DEFAULT_TIMEOUT_S = 60.0
"""Per question (prompt): a plug-in that hangs is that item's error, not the run's end."""

MAX_SERIES_LENGTH = 200
MAX_TIMEOUT_S = 86400.0
"""A per-question timeout above a day is a typo, not a setting."""


def check_series_name(name: str) -> str:
    """A series name: 1 to 200 printable characters without whitespace (it keys the history)."""
    if not name or len(name) > MAX_SERIES_LENGTH or not name.isprintable() or any(c.isspace() for c in name):
        raise ValueError(f"series name {name!r}: use 1 to {MAX_SERIES_LENGTH} printable characters without whitespace")
    return name


SeriesName = Annotated[str, AfterValidator(check_series_name)]
Timeout = Annotated[float | None, Field(gt=0, le=MAX_TIMEOUT_S, allow_inf_nan=False)]
"""A per-question timeout: None (no limit) or a finite number of seconds up to a day (a spec
field and the suite file's ``timeout_s``)."""


class SpecBase(BaseModel):
    """The fields every kind's run specification shares, validated once."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, defer_build=True)

    series: SeriesName = Field(description="The series name: the store's model column.")
    cache_dir: Path = CACHE.default
    timeout_s: Timeout = DEFAULT_TIMEOUT_S
    privacy: PrivacyMode = PrivacyMode.FULL
    thresholds: RegressionThresholds = DEFAULT_THRESHOLDS
    baseline: Baseline = PREVIOUS
    provenance: Provenance = Field(
        default_factory=Provenance, description="Declared provenance; overrides the plug-in's own, field by field."
    )
