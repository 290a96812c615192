"""The regression thresholds as declared settings (:mod:`goldeneval.core.settings`): one set of
rules for every kind's suite keys and flags, one vocabulary behind them.

The gate reads :class:`~goldeneval.core.gate.RegressionThresholds`.  A kind names its two
rates in its own words (:class:`RateNames`: retrieval's ``max_top1_drop``, prompts'
``max_pass_drop``), and :meth:`RateNames.thresholds` is the one place those words become the
shared thresholds; the store's ADR column names stay at the store's edge.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, create_model

from goldeneval.core.gate import (
    DEFAULT_MAX_DROP,
    DEFAULT_MIN_SLICE_QUESTIONS,
    MIN_JUDGED_DESCRIPTION,
    RegressionThresholds,
    check_slice_key,
)
from goldeneval.core.settings import Flag, Fraction, settings_of

__all__ = ["Drop", "RateNames", "Significance", "SliceThresholds"]

Drop = Fraction
"""A largest allowed absolute drop of a rate, from 0 to 1."""

Significance = Annotated[float | None, Field(gt=0.0, le=1.0, allow_inf_nan=False)]
"""``max_p``: a drop is a regression only if its exact McNemar p-value is below it."""


def _slice_pairs(value: object) -> object:
    """``SLICE=F`` flags (``--slice-drop form:GAP=0.15``) as the mapping the suite file writes."""
    if isinstance(value, str) or not isinstance(value, Sequence):
        return value
    pairs: dict[str, object] = {}
    for item in value:
        key, sep, drop = str(item).partition("=")
        if not sep or not key:
            raise ValueError(f"expected SLICE=F, got {item!r}")
        pairs[key] = float(drop)  # "could not convert string to float: 'x'" names what was given
    return pairs


def _check_slices(value: dict[str, float]) -> dict[str, float]:
    for key, drop in value.items():
        check_slice_key(key)
        if not 0.0 <= drop <= 1.0:
            raise ValueError(f"slice {key!r}: the allowed drop must lie between 0 and 1, got {drop}")
    return value


class SliceThresholds(BaseModel):
    """What retrieval gates beyond its two rates: per-slice drops and the judged coverage a
    comparison needs (suite keys under ``thresholds:``, flags of ``goldeneval retrieval``)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    slice_max_drop: Annotated[
        dict[str, float],
        Flag("--slice-drop", repeated=True),
        BeforeValidator(_slice_pairs),
        AfterValidator(_check_slices),
    ] = Field(
        default_factory=dict,
        description="Threshold for a slice, SLICE=F with SLICE form:<FORM>, hard_class:<CLASS> or * (every slice).",
    )
    min_slice_questions: Annotated[int, Flag()] = Field(
        default=DEFAULT_MIN_SLICE_QUESTIONS,
        ge=1,
        description="A slice threshold applies only when both runs scored at least this many questions in it.",
    )
    min_judged: Annotated[Fraction | None, Flag()] = Field(default=None, description=MIN_JUDGED_DESCRIPTION)


@dataclass(frozen=True)
class RateNames:
    """How one run kind names its two stored rates and their thresholds, in the suite file
    (``max_top1_drop``) and on the command line (``--max-top1-drop``)."""

    pass_key: str
    """The key of the first rate's largest drop (``max_top1_drop``)."""
    pass_words: str
    score_key: str
    score_words: str
    significance: str
    """What ``--max-p`` tests, in words."""

    def settings(self) -> type[BaseModel]:
        """The kind's two largest drops and ``max_p`` as declared settings, under the kind's
        keys: the suite section that holds them inherits this model, and the run commands'
        flags (``--max-top1-drop``) are made from it."""
        return _rate_settings(self)

    def thresholds(self, source: Any, slices: SliceThresholds | None = None) -> RegressionThresholds:
        """The thresholds ``source`` (a suite file's section, the command's options) sets under
        this kind's keys, and ``max_p``; with ``slices``, those too."""
        extra: Mapping[str, Any] = settings_of(slices, SliceThresholds) if slices is not None else {}
        return RegressionThresholds(
            max_pass_rate_drop=getattr(source, self.pass_key),
            max_mean_score_drop=getattr(source, self.score_key),
            max_p=source.max_p,
            **extra,
        )


@functools.cache
def _rate_settings(rates: RateNames) -> type[BaseModel]:
    def drop(words: str) -> Any:
        return (
            Annotated[Drop, Flag()],
            Field(default=DEFAULT_MAX_DROP, description=f"Largest allowed absolute drop of the {words}."),
        )

    significance = (
        Annotated[Significance, Flag()],
        Field(
            default=None,
            description=f"Also require significance: {rates.significance} is a regression only if its exact "
            "McNemar p-value is below this level.",
        ),
    )
    fields: dict[str, Any] = {
        rates.pass_key: drop(rates.pass_words),
        rates.score_key: drop(rates.score_words),
        "max_p": significance,
    }
    name = "".join(part.title() for part in rates.pass_key.split("_")) + "Settings"
    return create_model(name, __config__=ConfigDict(frozen=True, extra="forbid", defer_build=True), **fields)
