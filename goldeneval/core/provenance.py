"""Provenance (ADR-215): what a run measured, so that only comparable runs are compared.

Three ideas, each with one encoder:

* :class:`Provenance` — a retriever's optional declaration of corpus revision,
  embedding-model revision, chunking identity, pipeline identity and execution revision.
  Each field is a value, explicitly ``not_applicable``, or absent (``None`` = unknown).
  Values are bounded, printable, and must not look like secrets.
* the **label digest** — computed from the set, never supplied (docs/label-digest.md).
* the **benchmark fingerprint** (corpus revision, label digest, scoring protocol) and the
  **variant fingerprint** (model, chunking, pipeline).  A benchmark change makes runs
  incomparable; a variant change is the treatment being measured.  The execution revision
  is kept for reproduction and is in neither.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from goldeneval.core.errors import InputError, error_problem, one_line

__all__ = [
    "BENCHMARK_FINGERPRINT_VERSION",
    "NOT_APPLICABLE",
    "PROVENANCE_FIELDS",
    "VARIANT_FINGERPRINT_VERSION",
    "Provenance",
    "ProvidesProvenance",
    "benchmark_fingerprint",
    "canonical_json",
    "canonical_text",
    "parse_provenance",
    "retriever_provenance",
    "variant_fingerprint",
]

NOT_APPLICABLE = "not_applicable"
"""An explicit declaration that a field does not apply (a lexical retriever has no model)."""
MAX_VALUE_LENGTH = 200
BENCHMARK_FINGERPRINT_VERSION = "benchmark-v1"
VARIANT_FINGERPRINT_VERSION = "variant-v1"

PROVENANCE_FIELDS = (
    "corpus_revision",
    "model_revision",
    "chunking_identity",
    "pipeline_identity",
    "execution_revision",
)


class Provenance(BaseModel):
    """A retriever's declaration of what it is and what it searched (ADR-215, decision 1).

    An operator/consumer declaration, not proof: a mutable model alias is not an immutable
    revision.  ``None`` means unknown; ``"not_applicable"`` is a known answer.
    """

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    corpus_revision: str | None = Field(default=None, description="Content revision of the searched corpus.")
    model_revision: str | None = Field(default=None, description="Immutable revision of the embedding model.")
    chunking_identity: str | None = Field(default=None, description="Chunking strategy and parameters.")
    pipeline_identity: str | None = Field(
        default=None, description="Retrieval pipeline and its parameters (fusion, rerank, BM25 ...)."
    )
    execution_revision: str | None = Field(
        default=None, description="Code revision that ran; for reproduction, in no fingerprint."
    )

    @field_validator(*PROVENANCE_FIELDS)
    @classmethod
    def _bounded_printable_not_secret(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value or len(value) > MAX_VALUE_LENGTH:
            raise ValueError(f"must be 1 to {MAX_VALUE_LENGTH} characters, got {len(value)}")
        if not value.isprintable():
            raise ValueError("must hold printable characters only (no control characters or newlines)")
        from goldeneval.core.secret_scan import looks_like_secret  # its patterns load when a value is checked

        reason = looks_like_secret(value)
        if reason:
            raise ValueError(f"looks like a secret ({reason}); declare identities and hashes, never credentials")
        return value

    def merged_with(self, override: Provenance) -> Provenance:
        """Fields declared in ``override`` win; the others keep this declaration's values.

        The result is validated whole: either side may have been built without validation
        (``model_construct``), and ``model_copy`` would not check the merge."""
        declared = {name: value for name, value in _declared_values(override).items() if value is not None}
        return _validated({**_declared_values(self), **declared}, "provenance")

    def as_columns(self) -> dict[str, str | None]:
        return self.model_dump()


@runtime_checkable
class ProvidesProvenance(Protocol):
    """The optional retriever capability (ADR-215, decision 1): no retriever must have it."""

    def provenance(self) -> Provenance: ...


def parse_provenance(values: Mapping[str, Any], source: str) -> Provenance:
    """Validate a declaration from configuration; errors name the source and the field."""
    return _validated(values, f"{source}: provenance")


def _validated(values: Mapping[str, Any], what: str) -> Provenance:
    """``values`` as a validated :class:`Provenance`; an error names ``what`` and the field."""
    try:
        return Provenance.model_validate(dict(values))
    except ValidationError as exc:
        error = exc.errors()[0]
        field = ".".join(str(p) for p in error["loc"]) or "(provenance)"
        message = error_problem(error, {"extra_forbidden": "unknown field"})
        raise InputError(f"{what} field {field!r}: {message}") from None


def _declared_values(provenance: Provenance) -> dict[str, Any]:
    """The values a provenance holds, as given: read without serialising, since a provenance
    built with ``model_construct`` may hold anything (an int, 5 MB of text)."""
    return {**provenance.__dict__, **(provenance.__pydantic_extra__ or {})}


def retriever_provenance(retriever: object, source: str = "retriever") -> Provenance:
    """What the retriever declares, or an all-unknown provenance when it cannot say."""
    if not isinstance(retriever, ProvidesProvenance):
        return Provenance()
    try:
        declared = retriever.provenance()
    except InputError:
        raise
    except (Exception, SystemExit) as exc:  # a plug-in's bug is invalid input, named, not a traceback
        raise InputError(f"{source}: provenance() raised {type(exc).__name__}: {one_line(str(exc))}") from None
    if not isinstance(declared, Provenance):
        raise InputError(f"{source}: provenance() returned {type(declared).__name__}, not a Provenance")
    # Validated again, whatever built it: ``Provenance.model_construct`` skips every check.
    return _validated(_declared_values(declared), f"{source}: provenance()")


def canonical_json(value: Any) -> bytes:
    """The one canonical JSON of every digest and fingerprint: UTF-8, no spaces, no ASCII escapes."""
    return canonical_text(value).encode("utf-8")


def canonical_text(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# --------------------------------------------------------------------------- fingerprints


def _fingerprint(version: str, parts: list[str]) -> str:
    digest = hashlib.sha256(canonical_json([version, *parts])).hexdigest()
    return f"{version}:sha256:{digest}"


def benchmark_fingerprint(corpus_revision: str | None, labels: str, protocol_revision: str) -> str | None:
    """What was measured: unknown (None) unless the corpus revision is a known value."""
    if corpus_revision is None or corpus_revision == NOT_APPLICABLE:
        return None
    return _fingerprint(BENCHMARK_FINGERPRINT_VERSION, [corpus_revision, labels, protocol_revision])


def variant_fingerprint(provenance: Provenance) -> str | None:
    """The treatment: model, chunking and pipeline; unknown (None) if any of them is."""
    parts = [provenance.model_revision, provenance.chunking_identity, provenance.pipeline_identity]
    if any(part is None for part in parts):
        return None
    return _fingerprint(VARIANT_FINGERPRINT_VERSION, [p for p in parts if p is not None])
