"""Where golden question sets come from: files in configured folders, Python providers, BEIR
folders and TREC qrels with their topics.

Providers are registered under the entry-point group ``goldeneval.golden_question_sets``
(the Python equivalent of ADR-072's DI tag): each entry point names a callable that returns
an iterable of :class:`~goldeneval.retrieval.golden.GoldenQuestionSet`.  A set id declared twice fails
at load time and names both sources.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from goldeneval.core.corpus import load_corpus
from goldeneval.core.errors import GoldenSetError
from goldeneval.core.sets import SetKind, SetRegistry
from goldeneval.retrieval.beir import is_beir_folder, load_beir_set
from goldeneval.retrieval.golden import SET_FILE_SUFFIXES, GoldenQuestionSet, load_golden_set
from goldeneval.retrieval.qrels import is_trec_qrels, load_trec_set

__all__ = [
    "SETS_ENTRY_POINT_GROUP",
    "SETS_PATH_ENV",
    "GoldenSetRegistry",
    "resolve_golden_set",
]

SETS_ENTRY_POINT_GROUP = "goldeneval.golden_question_sets"
SETS_PATH_ENV = "GOLDENEVAL_SETS_PATH"
"""Extra folders of set files, separated like PATH (``os.pathsep``)."""


class GoldenSetRegistry(SetRegistry[GoldenQuestionSet]):
    """All known golden question sets by id, each with a description of its source."""

    kind = SetKind(
        set_type=GoldenQuestionSet,
        noun="golden question set",
        short="set",
        folder_noun="golden set",
        group=SETS_ENTRY_POINT_GROUP,
        path_env=SETS_PATH_ENV,
        suffixes=frozenset(SET_FILE_SUFFIXES),
        load=load_golden_set,
    )


def resolve_golden_set(
    reference: str,
    folders: Iterable[Path] = (),
    *,
    beir_split: str = "test",
    topics: Path | None = None,
    topic_field: str | None = None,
    corpus: Path | None = None,
) -> GoldenQuestionSet:
    """A set by file path, by BEIR folder (its ``beir_split`` qrels), by TREC qrels file with
    its ``topics`` (and ``topic_field``) labelled against ``corpus``, or by registered id."""
    path = Path(reference)
    if topics is not None:
        if not path.is_file():
            kind = "a BEIR folder" if is_beir_folder(path) else "no file"
            raise GoldenSetError(path, f"--topics goes with a TREC qrels file as --set; this is {kind}")
        if corpus is None:
            raise GoldenSetError(path, "TREC qrels with --topics need --corpus: the corpus their document ids name")
        return load_trec_set(path, topics, load_corpus(corpus), corpus_ref=str(corpus), field=topic_field)
    if topic_field is not None:
        raise GoldenSetError(path, "--topic-field chooses a field of --topics; give --topics too")
    if is_beir_folder(path):
        return load_beir_set(path, beir_split)
    if is_trec_qrels(path):
        raise GoldenSetError(
            path, "a TREC qrels file: give its topics file with --topics (and the corpus with --corpus)"
        )
    return GoldenSetRegistry.resolve(reference, folders)
