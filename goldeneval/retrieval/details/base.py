"""What every model of a retrieval run's details shares.

Every model forbids unknown keys and is frozen, so renaming a field on one side fails loudly (a
validation error naming the field) instead of quietly reading "no shared questions"; and an
optional field added in a later format is left out of the stored JSON while it is absent, so
details without it are exactly what they were before it existed.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["DetailRecord", "absent"]


def absent(value: object) -> bool:
    """An optional field that is absent (None) is left out of the stored JSON, so details
    without it are exactly what they were before it existed."""
    return value is None


class DetailRecord(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")
