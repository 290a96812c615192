"""Privacy modes (ADR-215, decision 5): what a run may persist.

``full`` keeps per-question details with their distinct returned document ids.
``metadata_only`` persists no question text and no document id anywhere — the DuckDB
store, Parquet tables, Dagster metadata and reports: question ids, forms, hard classes,
hit verdicts, latencies, rates and fingerprints remain.  The result store never holds
question text in either mode (the label digest stands in for it); with ``full`` the
``golden_question_sets`` Parquet table does, with ``metadata_only`` nothing does.
"""

from __future__ import annotations

import os
from enum import StrEnum

from goldeneval.core.errors import InputError

__all__ = ["PRIVACY_ENV", "PrivacyMode", "content_free_error", "resolve_privacy", "strictest", "withheld"]

PRIVACY_ENV = "GOLDENEVAL_PRIVACY"


class PrivacyMode(StrEnum):
    FULL = "full"
    METADATA_ONLY = "metadata_only"


def resolve_privacy(option: str | None = None) -> PrivacyMode:
    """``--privacy`` if given, else ``$GOLDENEVAL_PRIVACY``, else ``full``."""
    raw = option or os.environ.get(PRIVACY_ENV) or PrivacyMode.FULL.value
    try:
        return PrivacyMode(raw)
    except ValueError:
        choices = ", ".join(m.value for m in PrivacyMode)
        raise InputError(f"privacy mode {raw!r} is not one of: {choices}") from None


def strictest(*modes: PrivacyMode) -> PrivacyMode:
    """The strictest of ``modes``: a run recorded from tables written under ``metadata_only``
    stays ``metadata_only`` whatever its specification says now, and the reverse."""
    return PrivacyMode.METADATA_ONLY if PrivacyMode.METADATA_ONLY in modes else PrivacyMode.FULL


def content_free_error(message: str | None) -> str | None:
    """An error message can quote a question or a document id (``KeyError: 'doc-17'``):
    keep only the exception's class, or the fixed text of a timeout."""
    if message is None:
        return None
    head, sep, _ = message.partition(":")
    return head if sep else message if message.startswith("timed out after ") else "error"


def withheld(value: object) -> bool:
    """Whether a content field was withheld (``None``): such a field is left out of the stored
    JSON altogether (a pydantic ``exclude_if``), not written as ``null``."""
    return value is None
