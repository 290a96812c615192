"""A retrieval run's benchmark manifest (:mod:`goldeneval.core.manifest`): built from the set it
asked and the corpus it measured, when that corpus is the one its fingerprint names.

A document's digest covers its title and text (length-prefixed, as the corpus revision
does); a question's labels digest is the SHA-256 of its record in the label digest's
canonical encoding (docs/label-digest.md), so two questions' digests differ exactly when
that question's part of the label digest does.  A question's judged-documents digest covers
each document it judges (expected and judged not relevant) with that document's digest, or
a mark that the corpus does not hold it.  Digests are the first 128 bits in hex: they tell
versions of one document or question apart, and spell nothing.
"""

from __future__ import annotations

import hashlib

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.manifest import DIGEST_BYTES, BenchmarkManifest, QuestionDigests
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.provenance import canonical_json
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.labels import question_record

__all__ = ["DIGEST_HEX", "build_manifest", "document_digest"]

DIGEST_HEX = 32
_ABSENT = "absent"


def _short(digest: hashlib._Hash) -> str:
    return digest.hexdigest()[:DIGEST_HEX]


def document_digest(document: Document) -> str:
    digest = hashlib.sha256()
    for part in (document.title, document.text):
        data = part.encode("utf-8")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return _short(digest)


def _labels_digest(question: GoldenQuestion) -> bytes:
    return hashlib.sha256(canonical_json(question_record(question))).digest()[:DIGEST_BYTES]


def _judged_digest(question: GoldenQuestion, documents: dict[str, str]) -> bytes:
    judged = sorted(question.judged)
    digest = hashlib.sha256(canonical_json([[doc, documents.get(doc, _ABSENT)] for doc in judged]))
    return digest.digest()[:DIGEST_BYTES]


def build_manifest(
    golden_set: GoldenQuestionSet, corpus: Corpus | None, corpus_revision: str | None, fingerprint: str | None
) -> BenchmarkManifest | None:
    """The manifest of the benchmark ``fingerprint`` names (None when it is unknown).  The
    documents are the corpus's only when its revision is the run's ``corpus_revision``: a
    retriever that declares another revision (a search service over its own index) measured
    text this process does not hold, so the manifest then knows the questions only."""
    if fingerprint is None:
        return None
    measured = corpus if corpus is not None and corpus.revision == corpus_revision else None
    documents = {doc.id: document_digest(doc) for doc in measured} if measured is not None else None
    # The digests as bytes and the ids as one array (QuestionDigests): the run holds the
    # manifest to its write, after its door has let go of the set, so no string of the set's
    # may stay in it (each would keep a block of the set's freed memory from the system).
    labels = b"".join(_labels_digest(q) for q in golden_set.questions)
    judged = None if documents is None else b"".join(_judged_digest(q, documents) for q in golden_set.questions)
    questions = QuestionDigests([q.id for q in golden_set.questions], labels, judged)
    return BenchmarkManifest(
        fingerprint, PrivacyMode.FULL, None if documents is None else len(documents), documents, questions
    )
