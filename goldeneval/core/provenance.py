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

import functools
import hashlib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from goldeneval.core.errors import InputError, one_line

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

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

_URL_CREDENTIALS = re.compile(r"[a-z][a-z0-9+.-]*://[^/\s:@]+:[^/\s@]+@", re.IGNORECASE)
_SECRET_PAIR = re.compile(
    r"(?i)(api[_-]?key|access[_-]?key|secret|token|password|passwd|pwd|auth|bearer|key)\s*[=:]\s*\S"
)
_PASSWORD = re.compile(r"(?i)\b(?:password|passwd|passphrase)(?:\s*[=:]\s*|\s+)\S")
_BEARER = re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=-]{6,}")
"""``Bearer`` and a token of six or more characters: short opaque tokens exist (test and internal
services), and an identity has no reason to say ``Bearer`` followed by a word."""
_HUGGING_FACE_TOKEN = re.compile(r"(?<![A-Za-z0-9])hf_[A-Za-z0-9]{30,}")
_SK_KEY = re.compile(r"(?<![A-Za-z0-9])sk-([A-Za-z0-9_-]{20,})")
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{24,}")
_RANDOM_RUN = re.compile(r"[A-Za-z0-9]{16,}")
_HEX = re.compile(r"[0-9a-fA-F]+")

_DETECTOR_KINDS = {
    "AWS Access Key": "an AWS access key",
    "Artifactory Credentials": "Artifactory credentials",
    "Azure Storage Account access key": "an Azure storage account key",
    "Basic Auth Credentials": "a URL with credentials",
    "Cloudant Credentials": "Cloudant credentials",
    "Discord Bot Token": "a Discord bot token",
    "GitHub Token": "a GitHub token",
    "GitLab Token": "a GitLab token",
    "IBM COS HMAC Credentials": "IBM COS HMAC credentials",
    "IBM Cloud IAM Key": "an IBM Cloud IAM key",
    "JSON Web Token": "a JSON web token",
    "Mailchimp Access Key": "a Mailchimp access key",
    "NPM tokens": "an npm token",
    "OpenAI Token": "an OpenAI API key",
    "Private Key": "a private key",
    "PyPI Token": "a PyPI token",
    "SendGrid API Key": "a SendGrid API key",
    "Slack Token": "a Slack token",
    "SoftLayer Credentials": "SoftLayer credentials",
    "Square OAuth Secret": "a Square OAuth secret",
    "Stripe Access Key": "a Stripe secret key",
    "Telegram Bot Token": "a Telegram bot token",
    "Twilio API Key": "a Twilio API key",
}
"""detect-secrets' plugin ``secret_type`` -> the kind an error names (others: the type itself)."""
_NOT_CREDENTIALS = frozenset({"IPPublicDetector"})
"""detect-secrets plugins whose match is no credential: an IP address in an identity is fine."""


@functools.cache
def _credential_detectors() -> tuple[BasePlugin, ...]:
    """detect-secrets' pattern plugins (AWS, Stripe, GitHub, OpenAI, JWT, private keys ...).

    Only their regular expressions are used (``analyze_string``): no settings, no baseline,
    no filters and no verification, so nothing is read or sent anywhere.  Its entropy plugins
    (which flag any unquoted word in ad-hoc scans) are replaced by the rule below.  Imported
    on first use: the command line starts without it.
    """
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.plugins.base import RegexBasedDetector

    plugin_types: Iterable[type[BasePlugin]] = get_mapping_from_secret_type_to_class().values()
    return tuple(
        plugin_type()
        for plugin_type in sorted(plugin_types, key=lambda t: t.__name__)
        if issubclass(plugin_type, RegexBasedDetector) and plugin_type.__name__ not in _NOT_CREDENTIALS
    )


def _has_secret_keyword(value: str) -> bool:
    """detect-secrets' keyword plugin, with its rules for configuration files (no quotes needed)."""
    from detect_secrets.plugins.keyword import CONFIG_DENYLIST_REGEX_TO_GROUP, KeywordDetector

    return any(True for _ in KeywordDetector().analyze_string(value, CONFIG_DENYLIST_REGEX_TO_GROUP))


def _entropy_bits_per_char(token: str) -> float:
    counts = Counter(token)
    return -sum(n / len(token) * math.log2(n / len(token)) for n in counts.values())


def _is_random_sk_key(tail: str) -> bool:
    """``sk-`` keys (OpenAI, Anthropic, ...) end in a long random run; ``sk-learn-tfidf-v1`` does not."""
    return any(c.isdigit() for c in tail) and any(c.isalpha() for c in tail) and bool(_RANDOM_RUN.search(tail))


def looks_like_secret(value: str) -> str | None:
    """The kind of credential ``value`` looks like (``"an AWS access key"``), or None.

    detect-secrets' pattern plugins first (:func:`_credential_detectors`), then rules for
    what they miss: Hugging Face ``hf_`` tokens, ``sk-`` API keys in any case, ``Bearer``
    tokens, ``password ...``, ``key=``/``token=`` pairs, other secret-named settings such as
    ``db_pass: ...`` (detect-secrets' keyword plugin), URL credentials and long mixed-case high-entropy
    strings.  Hex digests (revisions, git SHAs) are fine.
    """
    for detector in _credential_detectors():
        if any(True for _ in detector.analyze_string(value)):
            kind = str(detector.secret_type)
            return _DETECTOR_KINDS.get(kind, kind)
    if _HUGGING_FACE_TOKEN.search(value):
        return "a Hugging Face token"
    if any(_is_random_sk_key(match.group(1)) for match in _SK_KEY.finditer(value)):
        return "an sk- API key"
    if _BEARER.search(value):
        return "a bearer token"
    if _PASSWORD.search(value):
        return "a password"
    if _SECRET_PAIR.search(value):
        return "a key=/token= pair"
    if _has_secret_keyword(value):
        return "a secret keyword with a value"
    if _URL_CREDENTIALS.search(value):
        return "a URL with credentials"
    for token in _LONG_TOKEN.findall(value):
        mixed = any(c.islower() for c in token) and any(c.isupper() for c in token) and any(c.isdigit() for c in token)
        if not _HEX.fullmatch(token) and mixed and _entropy_bits_per_char(token) > 4.0:
            return "a long high-entropy string"
    return None


class Provenance(BaseModel):
    """A retriever's declaration of what it is and what it searched (ADR-215, decision 1).

    An operator/consumer declaration, not proof: a mutable model alias is not an immutable
    revision.  ``None`` means unknown; ``"not_applicable"`` is a known answer.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

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
        message = "unknown field" if error["type"] == "extra_forbidden" else error["msg"].removeprefix("Value error, ")
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
