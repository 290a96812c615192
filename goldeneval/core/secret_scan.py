"""Whether a value looks like a credential: provenance values are stored, shown and sent in
alerts, so none may carry a secret (ADR-215: "no secrets").

The rules (:func:`looks_like_secret`) are detect-secrets' pattern plugins and rules of our
own for what they miss.  detect-secrets costs 0.05 s to import and set up, on every run, for
the same few values (a retriever's provenance does not change from run to run): within
:func:`remembered_scans` a value this scanner found clean before, under the run's cache
folder, is not scanned again.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import hashlib
import json
import math
import os
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from detect_secrets.plugins.base import BasePlugin

__all__ = ["SCAN_REVISION", "looks_like_secret", "remembered_scans"]

SCAN_REVISION = "secret-scan-v1"
"""The revision of this module's rules: change it with any rule, so that no value found clean
by an earlier revision is taken as clean by this one."""

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


@functools.lru_cache(maxsize=4096)
def _scan(value: str) -> str | None:
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


@dataclass
class _Remembered:
    """Digests of values found clean by this scanner, as read from one file, and those added."""

    path: Path
    clean: set[str]
    added: set[str] = field(default_factory=set)


_DIGEST = re.compile(r"[0-9a-f]{64}")

_REMEMBERED: contextvars.ContextVar[_Remembered | None] = contextvars.ContextVar("remembered_scans", default=None)


def _scanner_identity() -> str:
    """What a clean verdict depends on: these rules and the installed detect-secrets."""
    return hashlib.sha256(f"{SCAN_REVISION}|detect-secrets=={package_version('detect-secrets')}".encode()).hexdigest()


@contextlib.contextmanager
def remembered_scans(cache_dir: Path) -> Iterator[None]:
    """Within the block, values this scanner found clean before are not scanned again, and the
    values found clean are remembered: by their SHA-256 digest (never the value itself), in
    ``<cache_dir>/secret-scans/<scanner>.json``.  A file that cannot be read is no memory; one
    that cannot be written is none kept; a value found to be a secret is never remembered.  The
    folder is trusted as the index cache beside it is: whoever can write it decides what was
    found clean."""
    path = cache_dir / "secret-scans" / f"{_scanner_identity()[:32]}.json"
    try:
        kept = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        kept = []
    digests = kept if isinstance(kept, list) else []
    remembered = _Remembered(path, {item for item in digests if isinstance(item, str) and _DIGEST.fullmatch(item)})
    token = _REMEMBERED.set(remembered)
    try:
        yield
    finally:
        _REMEMBERED.reset(token)
        if remembered.added:
            _keep(remembered)


def _keep(remembered: _Remembered) -> None:
    """Write the digests whole (a temporary file renamed over the old one) or not at all."""
    staging = remembered.path.with_name(f"{remembered.path.name}.{os.getpid()}.tmp")
    try:
        remembered.path.parent.mkdir(parents=True, exist_ok=True)
        staging.write_text(json.dumps(sorted(remembered.clean | remembered.added)), encoding="utf-8")
        os.replace(staging, remembered.path)
    except OSError:
        with contextlib.suppress(OSError):
            staging.unlink()


def looks_like_secret(value: str) -> str | None:
    """The kind of credential ``value`` looks like (``"an AWS access key"``), or None (see
    :func:`_scan`); within :func:`remembered_scans`, a value found clean before is clean."""
    remembered = _REMEMBERED.get()
    if remembered is None:
        return _scan(value)
    digest = hashlib.sha256(value.encode("utf-8", "surrogatepass")).hexdigest()
    if digest in remembered.clean or digest in remembered.added:
        return None
    kind = _scan(value)
    if kind is None:
        remembered.added.add(digest)
    return kind
