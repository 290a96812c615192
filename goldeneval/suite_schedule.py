"""The nightly schedule of the suite file (``schedule: {cron, timezone}``), checked when the
file is loaded: a cron expression of five fields, each a value, range, list or step within its
field's bounds (month and weekday names allowed), and an IANA time zone, so that a typo fails
with the field it is in rather than when Dagster first reads the schedule."""

from __future__ import annotations

import zoneinfo

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = ["ScheduleConfig"]

_CRON_RANGES = (("minute", 0, 59), ("hour", 0, 23), ("day", 1, 31), ("month", 1, 12), ("weekday", 0, 7))
_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_CRON_NAMES = {
    **{month: i for i, month in enumerate(_MONTHS, 1)},
    **{day: i for i, day in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))},
}


def _cron_field_ok(field: str, low: int, high: int) -> bool:
    """One cron field: ``*``, ``n``, ``a-b``, each optionally ``/step``, joined by commas."""

    def number(text: str) -> int | None:
        value = _CRON_NAMES.get(text.lower()) if text.isalpha() else (int(text) if text.isdigit() else None)
        return value if value is not None and low <= value <= high else None

    for part in field.split(","):
        base, _, step = part.partition("/")
        if step and not (step.isdigit() and int(step) > 0):
            return False
        if base == "*":
            continue
        start, dash, end = base.partition("-")
        first = number(start)
        last = number(end) if dash else first
        if first is None or last is None or first > last:
            return False
    return True


class ScheduleConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    cron: str = Field(default="0 2 * * *", description="When the nightly job runs.")
    timezone: str = Field(default="UTC", description="IANA time zone of the cron expression.")

    @field_validator("cron")
    @classmethod
    def _cron(cls, value: str) -> str:
        fields = value.split()
        if len(fields) != 5:
            raise ValueError(f"{value!r} is not a cron expression of five fields (minute hour day month weekday)")
        for field, (name, low, high) in zip(fields, _CRON_RANGES, strict=True):
            if not _cron_field_ok(field, low, high):
                raise ValueError(
                    f"{value!r}: the {name} field {field!r} is not a value, range, list or step in {low}-{high}"
                )
        return value

    @field_validator("timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not an IANA time zone (e.g. UTC, Europe/Berlin)") from None
        return value
