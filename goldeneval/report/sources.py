"""What a comparison shows beside the stored runs: the question text, the expected documents
and the documents' titles, read from the set and the corpus at hand.

A stored run keeps no question text (ADR-215 decision 5: the store holds what was measured),
so a person reading a comparison gets the text from the set as it is now: the set named by
``--set`` (a file, a BEIR folder or a registered id), else the registered set of the run's
``set_id``; and the titles from ``--corpus``, else the set's own corpus.  What cannot be found
is said, never guessed: a comparison without its set shows ids and says why.  A set whose
labels differ from the run's (its label digest changed since) still gives its text, with a
note, since ids name the same questions.

Under ``metadata_only`` nothing is read: no text, no title, and the note says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from goldeneval.core.corpus import Corpus, Document, load_corpus
from goldeneval.core.errors import GoldenEvalError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.records import StoredRun

__all__ = ["SNIPPET_CHARS", "DocumentInfo", "Sources", "load_sources"]

SNIPPET_CHARS = 160
"""Characters of a document's text shown as its snippet."""


@dataclass(frozen=True, slots=True)
class DocumentInfo:
    """A document as a comparison shows it: its title and the start of its text."""

    title: str
    snippet: str


@dataclass(frozen=True)
class Sources:
    """The set and corpus at hand for a comparison (empty where none was found)."""

    texts: Mapping[str, str] = field(default_factory=dict)
    """Question (or prompt) id -> its text."""
    expected: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Question id -> its expected document ids (retrieval and answer runs)."""
    judged: Mapping[str, frozenset[str]] = field(default_factory=dict)
    """Question id -> every judged document id, relevant or not (sets with judged negatives)."""
    corpus: Mapping[str, Document] | None = None
    """The corpus at hand by document id; None when there is none."""
    label_digest: str | None = None
    """The label digest of the set at hand (retrieval sets), to say when it is not the run's."""
    notes: tuple[str, ...] = ()
    """What could not be read, and why."""

    def document(self, doc_id: str) -> DocumentInfo | None:
        if self.corpus is None:
            return None
        found = self.corpus.get(doc_id)
        if found is None:
            return None
        snippet = " ".join(found.text.split())
        if len(snippet) > SNIPPET_CHARS:
            snippet = snippet[: SNIPPET_CHARS - 1].rstrip() + "…"
        return DocumentInfo(found.title, snippet)


def _uses_question_set(run: StoredRun) -> bool:
    """Prompt runs measure a golden prompt set; every other kind (retrieval, answers, a declared
    third kind) a golden question set, whose questions' text is found by their ids."""
    return getattr(run.details, "kind", None) != "prompts"


def load_sources(
    run: StoredRun,
    privacy: PrivacyMode,
    *,
    set_ref: str | None = None,
    sets_dirs: tuple[Path, ...] = (),
    corpus_path: Path | None = None,
    beir_split: str = "test",
    topics: Path | None = None,
    topic_field: str | None = None,
) -> Sources:
    """The text and documents for a comparison whose newer run is ``run``.

    An explicit ``set_ref`` or ``corpus_path`` that cannot be read is invalid input (raised);
    the run's own set or corpus that cannot be found is a note."""
    if privacy is PrivacyMode.METADATA_ONLY:
        return Sources(notes=("metadata_only: question text, document ids, titles and answers are not shown",))
    notes: list[str] = []
    reference = set_ref or run.set_id
    try:
        if _uses_question_set(run):
            from goldeneval.retrieval.labels import label_digest
            from goldeneval.retrieval.sets import resolve_golden_set

            golden = resolve_golden_set(
                reference,
                sets_dirs,
                beir_split=beir_split,
                topics=topics,
                topic_field=topic_field,
                corpus=corpus_path,
            )
            texts = {q.id: q.text for q in golden.questions}
            expected = {q.id: q.expected for q in golden.questions}
            judged = {q.id: q.expected | q.not_relevant for q in golden.questions}
            digest: str | None = label_digest(golden)
            named_corpus = golden.corpus
        else:
            from goldeneval.prompts.registry import resolve_prompt_set

            prompts = resolve_prompt_set(reference, sets_dirs)
            texts = {p.id: p.prompt for p in prompts.prompts}
            expected, judged, digest, named_corpus = {}, {}, None, None
    except GoldenEvalError as exc:
        if set_ref is not None:
            raise
        notes.append(f"question text not shown: set {run.set_id!r} could not be read here ({exc}); name it with --set")
        return Sources(notes=tuple(notes))
    if digest is not None and run.label_digest is not None and digest != run.label_digest:
        notes.append(
            f"the set at hand ({reference}) has other labels than run {run.id[:12]} measured "
            "(its label digest changed since): text and expected documents are the set's as it is now"
        )
    corpus: Corpus | None = None
    path = corpus_path or named_corpus
    if path is not None:
        try:
            corpus = load_corpus(path)
        except GoldenEvalError as exc:
            if corpus_path is not None:
                raise
            notes.append(f"document titles not shown: the set's corpus could not be read ({exc})")
    elif _uses_question_set(run):
        notes.append("document titles not shown: the set names no corpus; name one with --corpus")
    index = None if corpus is None else {document.id: document for document in corpus}
    return Sources(texts, expected, judged, index, digest, tuple(notes))
