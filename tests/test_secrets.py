"""The secret filter on provenance values (issue 10): each kind of credential is refused and
named; identities and digests pass.  All values below are fakes in the vendors' formats."""

from __future__ import annotations

import pytest

from goldeneval.core.errors import InputError
from goldeneval.core.provenance import Provenance, parse_provenance
from goldeneval.core.secret_scan import looks_like_secret


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567", "a Hugging Face token"),
        ("hf_abcdefghijklmnopqrstuvwxyz01234567", "a Hugging Face token"),
        ("sk-proj-abcdefghijklmnopqrstuvwx0123456789abcdef", "an sk- API key"),
        ("sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789abcdefghij", "an sk- API key"),
        ("sk-abcdefghij0123456789T3BlbkFJabcdefghij0123456789", "an OpenAI API key"),
        ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "a Stripe secret key"),
        ("AKIAIOSFODNN7EXAMPLE", "an AWS access key"),
        ("Bearer 4f8a9b2c7d1e3f5a6b8c9d0e", "a bearer token"),
        ("bearer abc123def456ghi789", "a bearer token"),
        ("Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2lnbmF0dXJl", "a JSON web token"),
        ("password hunter2", "a password"),
        ("Password=correct-horse-battery", "a password"),
        ("ghp_1234567890abcdefghijABCDEFGHIJ123456", "a GitHub token"),
        ("xoxb-123456789012-1234567890123-abcdefghijklmnopqrstuvwx", "a Slack token"),
        ("-----BEGIN RSA PRIVATE KEY-----", "a private key"),
        ("db_pass: hunter2", "a secret keyword with a value"),
        ("https://user:pass@host/p", "a URL with credentials"),
    ],
    ids=[
        "hugging-face-mixed-case",
        "hugging-face-lower-case",
        "sk-project-key-lower-case",
        "sk-anthropic-key",
        "openai-legacy-key",
        "stripe-live-key",
        "aws-access-key",
        "bearer-opaque",
        "bearer-lower-case",
        "bearer-jwt",
        "password-then-space",
        "password-equals",
        "github-token",
        "slack-token",
        "private-key",
        "secret-keyword",
        "url-credentials",
    ],
)
def test_a_credential_is_refused_naming_its_kind(value: str, kind: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_provenance({"model_revision": value}, "goldeneval.yaml")
    assert str(caught.value) == (
        f"goldeneval.yaml: provenance field 'model_revision': looks like a secret ({kind}); "
        "declare identities and hashes, never credentials"
    )


@pytest.mark.parametrize(
    "value",
    [
        "sha256:" + "0123456789abcdef" * 4,
        "corpus-v1:sha256:" + "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
        "3f2a9c1d7e5b4a6c8d0e1f2a3b4c5d6e7f8a9b0c",
        "goldeneval.lexical/bm25s-lucene-v1(k1=1.5,b=0.75)",
        "tokens(size=128,overlap=32)",
        "goldeneval.hybrid/rrf(k=60,weights=1:1,depth=100)[goldeneval.lexical/bm25s-lucene-v1(k1=1.5,b=0.75)]",
        "goldeneval.trec_run/file(sha256:" + "ab" * 32 + ")",
        "goldeneval 0.1.0, bm25s 0.3.16, torch 2.13.0",
        "sklearn/sk-learn-tfidf-vectorizer-v1",
        "passwordless-login-v2",
        "bearer-token-free",
        "10.0.0.1",
        "8.8.8.8",
    ],
    ids=[
        "sha256-digest",
        "corpus-revision",
        "git-sha",
        "lexical-pipeline",
        "token-chunking",
        "hybrid-pipeline",
        "trec-run-pipeline",
        "execution-revision",
        "sk-prefixed-name",
        "password-in-a-word",
        "bearer-in-a-word",
        "private-ip",
        "public-ip",
    ],
)
def test_an_identity_or_digest_is_not_a_secret(value: str) -> None:
    assert looks_like_secret(value) is None
    assert Provenance(pipeline_identity=value).pipeline_identity == value
