"""The benchmark manifest held compactly (issue 43's memory regression): the questions'
digests as arrays (:class:`QuestionDigests`) behave as the dict they replace, and the JSON
text the store keeps is ``json.dumps`` of that dict, written a chunk at a time."""

from __future__ import annotations

import hashlib
import json
import pickle
from collections.abc import Mapping
from pathlib import Path

import pytest

import goldeneval
from goldeneval.core.manifest import MANIFEST_VERSION, BenchmarkManifest, QuestionDigests, benchmark_change
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.sets import corpus_for
from goldeneval.retrieval.manifest import build_manifest
from goldeneval.retrieval.sets import resolve_golden_set

SAMPLE = Path(goldeneval.__file__).parent / "sample" / "transit"


def reference_text(manifest: BenchmarkManifest) -> str:
    """The stored format: one ``json.dumps`` of the whole manifest as dicts and lists."""
    return json.dumps(
        {
            "version": MANIFEST_VERSION,
            "privacy": manifest.privacy.value,
            "document_count": manifest.document_count,
            "documents": None if manifest.documents is None else dict(manifest.documents),
            "questions": {q: list(entry) for q, entry in dict(manifest.questions).items()},
        },
        separators=(",", ":"),
        ensure_ascii=False,
    )


def digests(count: int, salt: str) -> bytes:
    return b"".join(hashlib.sha256(f"{salt}{i}".encode()).digest()[:16] for i in range(count))


@pytest.mark.parametrize("with_corpus", [True, False])
def test_a_built_manifest_writes_the_stored_format_and_reads_back_equal(with_corpus: bool) -> None:
    golden_set = resolve_golden_set(str(SAMPLE / "golden.yaml"), ())
    corpus = corpus_for(None, golden_set.corpus)
    assert corpus is not None
    manifest = build_manifest(golden_set, corpus, corpus.revision if with_corpus else "another revision", "fp")
    assert manifest is not None
    assert list(manifest.questions) == [q.id for q in golden_set.questions]
    assert all(judged is not None for _, judged in manifest.questions.values()) is with_corpus
    for privacy in PrivacyMode:
        kept = manifest.for_privacy(privacy)
        text = kept.to_json_text()
        assert text == reference_text(kept)
        assert BenchmarkManifest.from_json_text("fp", text, "here") == kept


@pytest.mark.parametrize("judged", [True, False])
def test_question_digests_behave_as_the_dict_they_replace(judged: bool) -> None:
    ids = [f'q\u00e9"\\\n{i}\u2028' for i in range(20_000)] + ["lone \ud800 surrogate"]
    labels = digests(len(ids), "labels")
    judged_digests = digests(len(ids), "judged") if judged else None
    compact = QuestionDigests(ids, labels, judged_digests)
    as_dict = {
        q: (
            labels[16 * i : 16 * i + 16].hex(),
            None if judged_digests is None else judged_digests[16 * i : 16 * i + 16].hex(),
        )
        for i, q in enumerate(ids)
    }
    assert isinstance(compact, Mapping) and len(compact) == len(as_dict)
    assert list(compact) == ids and list(compact.items()) == list(as_dict.items())
    assert compact == as_dict and as_dict == compact
    assert compact[ids[12_345]] == as_dict[ids[12_345]] and ids[-1] in compact and "q0" not in compact
    with pytest.raises(KeyError):
        compact["q0"]
    assert pickle.loads(pickle.dumps(compact)) == as_dict
    held = BenchmarkManifest("fp", PrivacyMode.FULL, 2, {"d\u00e9": "00", "e": "11"}, compact)
    plain = BenchmarkManifest("fp", PrivacyMode.FULL, 2, {"d\u00e9": "00", "e": "11"}, as_dict)
    assert held.to_json_text() == plain.to_json_text() == reference_text(plain)
    assert held == plain and BenchmarkManifest.from_json_text("fp", held.to_json_text(), "here") == held


def test_compact_and_dict_manifests_compare_alike() -> None:
    ids_then, ids_now = [f"q{i}" for i in range(3000)], [f"q{i}" for i in range(100, 3100)]
    labels_then, judged_then = digests(3000, "l"), digests(3000, "j")
    labels_now = (
        labels_then[16 * 100 : 16 * 200] + digests(100, "changed") + labels_then[16 * 300 :] + digests(100, "new")
    )
    judged_now = judged_then[16 * 100 :] + digests(100, "new")
    then = QuestionDigests(ids_then, labels_then, judged_then)
    now = QuestionDigests(ids_now, labels_now, judged_now)
    compact = [BenchmarkManifest(fp, PrivacyMode.FULL, None, None, q) for fp, q in (("a", then), ("b", now))]
    plain = [BenchmarkManifest(m.benchmark_fingerprint, m.privacy, None, None, dict(m.questions)) for m in compact]
    for same_corpus in (False, True):
        change = benchmark_change(*compact, named=True, same_corpus=same_corpus)
        assert change == benchmark_change(*plain, named=True, same_corpus=same_corpus)
        assert (len(change.labels_changed), len(change.questions_added), len(change.questions_removed)) == (
            100,
            100,
            100,
        )


def test_question_digests_refuse_digests_that_do_not_match_the_ids() -> None:
    with pytest.raises(ValueError, match="2 question ids need 32 bytes"):
        QuestionDigests(["a", "b"], b"\0" * 16, None)
