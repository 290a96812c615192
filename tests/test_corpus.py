"""Corpus loaders (a folder of .md/.txt, a BEIR corpus.jsonl) and the content revision."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from goldeneval.core.corpus import (
    CORPUS_REVISION_PREFIX,
    Corpus,
    Document,
    load_beir_corpus,
    load_corpus,
    load_folder_corpus,
)
from goldeneval.core.errors import CorpusError

DOCUMENTS = (
    Document("fares/child-tickets", "Child tickets", "Children under 15 pay half."),
    Document("service/night/buses", "", "Night buses run every hour."),
    Document("permits/bicycles", "Bicycles", "Bicycles travel free."),
)


def write_files(folder: Path, files: dict[str, str | bytes]) -> Path:
    for name, content in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return folder


def write_beir_corpus(path: Path, documents: tuple[Document, ...]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps({"_id": d.id, "title": d.title, "text": d.text}) for d in documents]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def folder_corpus(tmp_path: Path) -> Path:
    return write_files(
        tmp_path / "corpus",
        {
            "fares/child-tickets.md": "# Child tickets\n\nChildren under 15 pay half.\n",
            "service/night/buses.txt": "Night buses run every hour.\n",
            "permits/bicycles.md": "# Bicycles\nBicycles travel free.\n",
            "permits/scan.pdf": "not a document",
        },
    )


# --------------------------------------------------------------------------- folder corpus


def test_folder_document_ids_are_relative_paths_without_the_extension(folder_corpus: Path) -> None:
    assert load_folder_corpus(folder_corpus).ids == {
        "fares/child-tickets",
        "service/night/buses",
        "permits/bicycles",
    }


def test_a_leading_heading_becomes_the_title_and_leaves_the_body(folder_corpus: Path) -> None:
    documents = {doc.id: doc for doc in load_folder_corpus(folder_corpus)}

    assert documents["fares/child-tickets"] == Document(
        "fares/child-tickets", "Child tickets", "Children under 15 pay half."
    )


def test_a_file_without_a_heading_has_an_empty_title(folder_corpus: Path) -> None:
    documents = {doc.id: doc for doc in load_folder_corpus(folder_corpus)}

    assert documents["service/night/buses"] == Document("service/night/buses", "", "Night buses run every hour.")


def test_a_folder_without_documents_fails_naming_it(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "empty", {"notes.pdf": "binary"})

    with pytest.raises(CorpusError) as caught:
        load_folder_corpus(folder)

    assert str(caught.value) == f"{folder}: no .md or .txt files found"


def test_two_files_with_one_id_fail_as_a_duplicate_document(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "corpus", {"fares.md": "# Fares\n", "fares.txt": "Fares\n"})

    with pytest.raises(CorpusError) as caught:
        load_folder_corpus(folder)

    assert str(caught.value) == f"{folder}: duplicate document id 'fares'"


def test_a_folder_file_that_is_not_utf8_fails_naming_the_file(tmp_path: Path) -> None:
    folder = write_files(tmp_path / "corpus", {"ok.md": "fine", "latin1.md": "# Caf\xe9\n".encode("latin-1")})

    with pytest.raises(CorpusError) as caught:
        load_folder_corpus(folder)

    assert str(caught.value) == f"{folder / 'latin1.md'}: not valid UTF-8 at byte 5"


# --------------------------------------------------------------------------- BEIR corpus


def test_a_beir_corpus_loads_ids_titles_and_texts_in_file_order(tmp_path: Path) -> None:
    path = write_beir_corpus(tmp_path / "corpus.jsonl", DOCUMENTS)

    assert load_beir_corpus(path).documents == DOCUMENTS


def test_a_beir_corpus_accepts_numeric_ids_and_missing_titles(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": 4983, "text": "Alveolar macrophages."}\n\n', encoding="utf-8")

    assert load_beir_corpus(path).documents == (Document("4983", "", "Alveolar macrophages."),)


def test_a_beir_corpus_with_a_duplicate_id_fails_naming_the_id(tmp_path: Path) -> None:
    path = write_beir_corpus(tmp_path / "corpus.jsonl", (*DOCUMENTS, DOCUMENTS[0]))

    with pytest.raises(CorpusError) as caught:
        load_beir_corpus(path)

    assert str(caught.value) == f"{path}: duplicate document id 'fares/child-tickets'"


def test_a_beir_corpus_that_is_not_utf8_fails_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_bytes(b'{"_id": "d1", "text": "caf\xe9"}\n')

    with pytest.raises(CorpusError) as caught:
        load_beir_corpus(path)

    assert str(caught.value) == f"{path}: line 1: not valid UTF-8 (byte 27 of the line)"


def test_a_beir_line_without_an_id_fails_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "corpus.jsonl"
    path.write_text('{"_id": "d1", "text": "a"}\n{"title": "b", "text": "c"}\n', encoding="utf-8")

    with pytest.raises(CorpusError) as caught:
        load_beir_corpus(path)

    assert str(caught.value) == f"{path}: line 2: field '_id': missing or empty"


# --------------------------------------------------------------------------- load_corpus


def test_load_corpus_reads_a_beir_folder_through_its_corpus_jsonl(tmp_path: Path) -> None:
    write_beir_corpus(tmp_path / "scifact" / "corpus.jsonl", DOCUMENTS)

    assert load_corpus(tmp_path / "scifact").documents == DOCUMENTS


def test_load_corpus_reads_a_folder_of_files(folder_corpus: Path) -> None:
    assert load_corpus(folder_corpus).ids == load_folder_corpus(folder_corpus).ids


def test_load_corpus_fails_on_a_missing_path_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "absent"

    with pytest.raises(CorpusError) as caught:
        load_corpus(path)

    assert str(caught.value) == f"{path}: corpus not found (expected corpus.jsonl or a folder of .md/.txt)"


# --------------------------------------------------------------------------- revision


def test_the_revision_is_a_versioned_sha256(folder_corpus: Path) -> None:
    revision = load_folder_corpus(folder_corpus).revision

    assert (revision.startswith(CORPUS_REVISION_PREFIX), len(revision)) == (
        True,
        len(CORPUS_REVISION_PREFIX) + 64,
    )


def test_the_revision_does_not_depend_on_document_order(tmp_path: Path) -> None:
    forward = load_beir_corpus(write_beir_corpus(tmp_path / "a" / "corpus.jsonl", DOCUMENTS))
    backward = load_beir_corpus(write_beir_corpus(tmp_path / "b" / "corpus.jsonl", DOCUMENTS[::-1]))

    assert forward.revision == backward.revision


def test_the_revision_does_not_depend_on_where_the_corpus_lies(folder_corpus: Path, tmp_path: Path) -> None:
    moved = shutil.copytree(folder_corpus, tmp_path / "elsewhere" / "copy")

    assert load_folder_corpus(moved).revision == load_folder_corpus(folder_corpus).revision


def test_a_folder_and_a_beir_file_with_the_same_documents_share_a_revision(folder_corpus: Path, tmp_path: Path) -> None:
    beir = load_beir_corpus(write_beir_corpus(tmp_path / "corpus.jsonl", DOCUMENTS))

    assert beir.revision == load_folder_corpus(folder_corpus).revision


CHANGES = {
    "id": Document("fares/child-ticket", "Child tickets", "Children under 15 pay half."),
    "title": Document("fares/child-tickets", "Child ticket", "Children under 15 pay half."),
    "text": Document("fares/child-tickets", "Child tickets", "Children under 14 pay half."),
    "title-text-boundary": Document("fares/child-tickets", "Child ticketsC", "hildren under 15 pay half."),
}


@pytest.mark.parametrize("changed", CHANGES.values(), ids=CHANGES.keys())
def test_any_change_to_an_id_title_or_text_changes_the_revision(changed: Document) -> None:
    original = Corpus(DOCUMENTS)

    assert Corpus((changed, *DOCUMENTS[1:])).revision != original.revision
