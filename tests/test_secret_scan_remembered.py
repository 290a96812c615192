"""A value the secret scan found clean before is not scanned again within ``remembered_scans``:
only digests are kept, a secret is never remembered, and another scanner starts afresh."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from goldeneval.core import secret_scan
from goldeneval.core.secret_scan import looks_like_secret, remembered_scans
from tests.test_startup_imports import probe

CLEAN = "goldeneval.lexical/bm25s-lucene-v1(k1=1.2,b=0.75)"
AWS_KEY = "AKIAIOSFODNN7EXAMPLE"


def _digest(value: str) -> str:
    return hashlib.sha256(value.encode()).hexdigest()


def _remembered_files(cache: Path) -> list[Path]:
    return sorted((cache / "secret-scans").glob("*.json"))


@pytest.fixture
def scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every value the scan itself looks at (the remembered ones are not)."""
    seen: list[str] = []
    real = secret_scan._scan.__wrapped__

    def counting(value: str) -> str | None:
        seen.append(value)
        return real(value)

    monkeypatch.setattr(secret_scan, "_scan", counting)
    return seen


def test_a_clean_value_is_scanned_once_and_kept_as_its_digest_only(tmp_path: Path, scans: list[str]) -> None:
    with remembered_scans(tmp_path):
        assert looks_like_secret(CLEAN) is None
    [kept] = _remembered_files(tmp_path)
    assert json.loads(kept.read_text()) == [_digest(CLEAN)]
    assert CLEAN not in kept.read_text()
    with remembered_scans(tmp_path):
        assert looks_like_secret(CLEAN) is None
    assert scans == [CLEAN]
    assert looks_like_secret(CLEAN) is None  # outside the block the scan runs as ever
    assert scans == [CLEAN, CLEAN]


def test_a_secret_is_never_remembered_and_always_refused(tmp_path: Path, scans: list[str]) -> None:
    for _ in range(2):
        with remembered_scans(tmp_path):
            assert looks_like_secret(AWS_KEY) == "an AWS access key"
    assert scans == [AWS_KEY, AWS_KEY]
    assert _remembered_files(tmp_path) == []


def test_another_scanner_revision_does_not_trust_what_an_earlier_one_found_clean(
    tmp_path: Path, scans: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with remembered_scans(tmp_path):
        looks_like_secret(CLEAN)
    monkeypatch.setattr(secret_scan, "SCAN_REVISION", "secret-scan-v999")
    with remembered_scans(tmp_path):
        looks_like_secret(CLEAN)
    assert scans == [CLEAN, CLEAN]
    assert len(_remembered_files(tmp_path)) == 2


@pytest.mark.parametrize(
    "content",
    ["{not json", '{"a": 1}', "[1, 2]", "[" * 100_000],
    ids=["malformed", "object", "numbers", "nested-too-deeply"],
)
def test_a_damaged_memory_is_no_memory(tmp_path: Path, scans: list[str], content: str) -> None:
    with remembered_scans(tmp_path):
        looks_like_secret(CLEAN)
    [kept] = _remembered_files(tmp_path)
    kept.write_text(content)
    with remembered_scans(tmp_path):
        assert looks_like_secret(CLEAN) is None
    assert scans == [CLEAN, CLEAN]
    assert json.loads(kept.read_text()) == [_digest(CLEAN)]  # written whole again


def test_a_cache_folder_that_cannot_be_written_costs_nothing_but_the_memory(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a folder")
    with remembered_scans(blocked):
        assert looks_like_secret(CLEAN) is None
        assert looks_like_secret(AWS_KEY) == "an AWS access key"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_warm_lexical_run_does_not_import_the_secret_scanner(tmp_path: Path) -> None:
    """The retriever's provenance was found clean by the first run: the second never loads
    detect-secrets (0.05 s), and still stores the same provenance."""
    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--no-progress"]
    args += ["--store", str(tmp_path / "r.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--format", "json"]
    root = Path(__file__).resolve().parents[1]
    first_loaded, first = probe(args, root, ("detect_secrets",))
    second_loaded, second = probe(args, root, ("detect_secrets",))
    assert (first_loaded, second_loaded) == (["detect_secrets"], [])
    assert json.loads(first)["run"]["provenance"] == json.loads(second)["run"]["provenance"]
