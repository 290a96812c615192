"""The built-in BM25 retriever: analyser, empty results and the on-disk index cache."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from goldeneval.core.corpus import Corpus, Document
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.retrievers.lexical import LexicalRetriever

CORPUS = Corpus(
    (
        Document("fares/day", "Day ticket", "A day ticket costs 7.80 and is valid until 4 am."),
        Document("rights/delay", "Delay compensation", "Delays of over 30 minutes are refunded."),
        Document("service/bikes", "Bikes on board", "Bicycles travel free outside rush hour."),
    )
)


def test_stemming_matches_inflected_forms(tmp_path: Path) -> None:
    retriever = LexicalRetriever(CORPUS, tmp_path)
    assert retriever.retrieve("delayed trains refunding", 3)[0] == "rights/delay"


def test_a_question_sharing_no_term_gets_an_empty_ranking(tmp_path: Path) -> None:
    assert LexicalRetriever(CORPUS, tmp_path).retrieve("kayak on the cable car", 30) == []


def test_a_question_of_only_stop_words_gets_an_empty_ranking(tmp_path: Path) -> None:
    assert LexicalRetriever(CORPUS, tmp_path).retrieve("what is the", 30) == []


def test_the_limit_caps_the_ranking(tmp_path: Path) -> None:
    assert len(LexicalRetriever(CORPUS, tmp_path).retrieve("ticket delays bicycles", 2)) == 2


def test_the_index_is_built_once_per_corpus_revision(tmp_path: Path) -> None:
    first = LexicalRetriever(CORPUS, tmp_path)
    second = LexicalRetriever(CORPUS, tmp_path)
    changed = LexicalRetriever(Corpus((*CORPUS.documents, Document("x", "", "ferry"))), tmp_path)
    assert (first.index_loaded_from_cache, second.index_loaded_from_cache) == (False, True)
    assert not changed.index_loaded_from_cache
    assert second.retrieve("day ticket", 3) == first.retrieve("day ticket", 3)


def test_the_registered_factory_needs_a_corpus(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match="needs a corpus: pass --corpus PATH"):
        build_retriever("goldeneval.lexical", RetrieverContext(corpus=None, cache_dir=tmp_path))


def test_the_registered_factory_passes_bm25_options(tmp_path: Path) -> None:
    context = RetrieverContext(corpus=CORPUS, cache_dir=tmp_path, options={"k1": "0.9", "b": "0.4"})
    retriever = build_retriever("goldeneval.lexical", context)
    assert isinstance(retriever, LexicalRetriever) and (retriever.k1, retriever.b) == (0.9, 0.4)


def test_a_non_numeric_option_is_a_clear_error(tmp_path: Path) -> None:
    context = RetrieverContext(corpus=CORPUS, cache_dir=tmp_path, options={"k1": "high"})
    with pytest.raises(
        RetrieverError, match=re.escape("retriever 'goldeneval.lexical': option 'k1': expected a number, got 'high'")
    ):
        build_retriever("goldeneval.lexical", context)


# --------------------------------------------------------------------------- cache integrity


def index_folder(cache: Path) -> Path:
    (folder,) = (cache / "lexical").iterdir()
    return folder


def drop_the_first_id(folder: Path) -> None:
    ids = json.loads((folder / "ids.json").read_text())
    (folder / "ids.json").write_text(json.dumps(ids[1:]))


def zero_the_scores(folder: Path) -> None:
    data = folder / "data.csc.index.npy"
    raw = data.read_bytes()
    header = raw.index(b"\n") + 1  # the .npy header ends with a newline; the scores follow
    data.write_bytes(raw[:header] + bytes(len(raw) - header))


def delete_the_manifest(folder: Path) -> None:
    (folder / "manifest.json").unlink()


def add_a_file(folder: Path) -> None:
    (folder / "extra.npy").write_bytes(b"\x00")


CORRUPTIONS = [
    (drop_the_first_id, "ids.json does not match its checksum"),
    (zero_the_scores, "data.csc.index.npy does not match its checksum"),
    (delete_the_manifest, "manifest.json is missing"),
    (add_a_file, "files differ from the manifest: extra.npy"),
]
CORRUPTION_IDS = ["shortened-id-list", "edited-data-file", "deleted-manifest", "extra-file"]


@pytest.mark.parametrize("corrupt", [c[0] for c in CORRUPTIONS], ids=CORRUPTION_IDS)
def test_a_corrupted_cache_is_rebuilt_and_ranks_the_right_documents(
    tmp_path: Path, corrupt: Callable[[Path], None]
) -> None:
    LexicalRetriever(CORPUS, tmp_path)
    corrupt(index_folder(tmp_path))
    rebuilt = LexicalRetriever(CORPUS, tmp_path)
    assert not rebuilt.index_loaded_from_cache
    assert rebuilt.retrieve("delay refunded", 3) == ["rights/delay"]
    assert rebuilt.retrieve("bicycles rush hour", 3) == ["service/bikes"]


@pytest.mark.parametrize(("corrupt", "problem"), CORRUPTIONS, ids=CORRUPTION_IDS)
def test_the_rebuild_says_what_was_wrong(tmp_path: Path, corrupt: Callable[[Path], None], problem: str) -> None:
    LexicalRetriever(CORPUS, tmp_path)
    corrupt(index_folder(tmp_path))
    assert LexicalRetriever(CORPUS, tmp_path).cache_problem == problem


@pytest.mark.parametrize("corrupt", [c[0] for c in CORRUPTIONS], ids=CORRUPTION_IDS)
def test_the_rebuilt_cache_replaces_the_corrupted_one(tmp_path: Path, corrupt: Callable[[Path], None]) -> None:
    LexicalRetriever(CORPUS, tmp_path)
    corrupt(index_folder(tmp_path))
    LexicalRetriever(CORPUS, tmp_path)
    reloaded = LexicalRetriever(CORPUS, tmp_path)
    assert (reloaded.index_loaded_from_cache, reloaded.cache_problem) == (True, None)
    assert [path.name for path in (tmp_path / "lexical").iterdir()] == [index_folder(tmp_path).name]


def test_a_valid_cache_is_loaded_without_a_problem(tmp_path: Path) -> None:
    LexicalRetriever(CORPUS, tmp_path)
    loaded = LexicalRetriever(CORPUS, tmp_path)
    assert (loaded.index_loaded_from_cache, loaded.cache_problem) == (True, None)
    assert loaded.retrieve("delay refunded", 3) == ["rights/delay"]


def test_the_manifest_holds_the_checksum_of_every_index_file(tmp_path: Path) -> None:
    LexicalRetriever(CORPUS, tmp_path)
    folder = index_folder(tmp_path)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["documents"] == 3
    assert manifest["files"] == {
        path.name: hashlib.sha256(path.read_bytes()).hexdigest()
        for path in folder.iterdir()
        if path.name != "manifest.json"
    }


def test_an_unwritable_cache_is_a_retriever_error_naming_the_folder(tmp_path: Path) -> None:
    not_a_folder = tmp_path / "cache"
    not_a_folder.write_text("a file where the cache folder should be")
    context = RetrieverContext(corpus=CORPUS, cache_dir=not_a_folder)
    with pytest.raises(RetrieverError) as caught:
        build_retriever("goldeneval.lexical", context)
    assert str(caught.value) == (
        f"retriever 'goldeneval.lexical': cannot write the index cache at {not_a_folder / 'lexical'}: Not a directory"
    )
