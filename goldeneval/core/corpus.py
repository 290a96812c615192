"""Corpora: the documents a golden set is labelled against.

Two layouts load: a BEIR ``corpus.jsonl`` (``_id``, ``title``, ``text``) and a folder of
``.md``/``.txt`` files whose document id is the relative path without the extension.  The
corpus revision is computed from the content, never assumed, so a changed document is a
changed corpus.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from goldeneval.core.errors import CorpusError
from goldeneval.core.jsonl import iter_jsonl

__all__ = ["Corpus", "Document", "load_beir_corpus", "load_corpus", "load_folder_corpus", "shared_corpora"]

CORPUS_REVISION_PREFIX = "corpus-v1:sha256:"
FOLDER_SUFFIXES = (".md", ".txt")


@dataclass(frozen=True, slots=True)
class Document:
    id: str
    title: str
    text: str


@dataclass(frozen=True)
class Corpus:
    """An ordered, id-unique collection of documents with a content revision."""

    documents: tuple[Document, ...]
    source: str = ""

    def __post_init__(self) -> None:
        seen: set[str] = set()
        for doc in self.documents:
            if doc.id in seen:
                raise CorpusError(f"{self.source or 'corpus'}: duplicate document id {doc.id!r}")
            seen.add(doc.id)

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)

    @cached_property
    def ids(self) -> frozenset[str]:
        return frozenset(doc.id for doc in self.documents)

    @cached_property
    def revision(self) -> str:
        """SHA-256 over every (id, title, text), in id order, length-prefixed.

        Independent of file order and of where the corpus lies; any change to an id, a
        title or a text changes it.
        """
        digest = hashlib.sha256()
        for doc in sorted(self.documents, key=lambda d: d.id):
            for part in (doc.id, doc.title, doc.text):
                data = part.encode("utf-8")
                digest.update(len(data).to_bytes(8, "big"))
                digest.update(data)
        return CORPUS_REVISION_PREFIX + digest.hexdigest()


def load_corpus(path: str | Path) -> Corpus:
    """Load a BEIR corpus (``corpus.jsonl`` or a folder holding one) or a folder of files."""
    path = Path(path)
    if path.is_file():
        return load_beir_corpus(path)
    if (path / "corpus.jsonl").is_file():
        return load_beir_corpus(path / "corpus.jsonl")
    if path.is_dir():
        return load_folder_corpus(path)
    raise CorpusError(f"{path}: corpus not found (expected corpus.jsonl or a folder of .md/.txt)")


_SHARED: ContextVar[dict[tuple[int, int, int, int], Corpus] | None] = ContextVar("shared_corpora", default=None)


@contextmanager
def shared_corpora() -> Iterator[None]:
    """Within this block a ``corpus.jsonl`` is read once: a BEIR set's loader (which reads the
    corpus for the question forms) and the retriever's corpus get the same object.  A file
    changed in between (size, mtime or inode) is read again; nothing is kept after the block.
    The file is known by its identity (device and inode), so a relative and a resolved path
    to it share; the first read's path is the one its messages name.
    A block inside another shares the outer one's corpora."""
    if _SHARED.get() is not None:
        yield
        return
    token = _SHARED.set({})
    try:
        yield
    finally:
        _SHARED.reset(token)


def load_beir_corpus(path: str | Path) -> Corpus:
    path = Path(path)

    def read() -> Corpus:
        return Corpus(tuple(_beir_documents(path)), source=str(path))

    shared = _SHARED.get()
    if shared is None:
        return read()
    try:
        status = path.stat()
    except OSError:  # not found or unreadable: the reader says so in its words
        return read()
    key = (status.st_dev, status.st_ino, status.st_mtime_ns, status.st_size)
    if key not in shared:
        shared[key] = read()
    return shared[key]


def _beir_documents(path: Path) -> Iterable[Document]:
    def error(problem: str) -> CorpusError:
        return CorpusError(f"{path}: {problem}")

    for lineno, item in iter_jsonl(path, error):
        doc_id = item.get("_id") if isinstance(item, dict) else None
        if not isinstance(doc_id, str | int) or str(doc_id) == "":
            raise error(f"line {lineno}: field '_id': missing or empty")
        title, text = item.get("title") or "", item.get("text") or ""
        if not isinstance(title, str) or not isinstance(text, str):
            raise error(f"line {lineno} (id {doc_id!r}): fields 'title' and 'text' must be strings")
        yield Document(str(doc_id), title, text)


def load_folder_corpus(folder: str | Path) -> Corpus:
    """Every ``.md``/``.txt`` file below ``folder``; a leading ``# Heading`` becomes the title.

    A symbolic link to a file inside the folder is a document like any other; one to a file
    outside it is refused (:func:`_inside`).  Linked folders are not descended into."""
    folder = Path(folder)
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.suffix in FOLDER_SUFFIXES)
    if not files:
        raise CorpusError(f"{folder}: no .md or .txt files found")
    root = folder.resolve()
    return Corpus(tuple(_folder_document(folder, _inside(root, folder, p)) for p in files), source=str(folder))


def _inside(root: Path, folder: Path, path: Path) -> Path:
    """``path``, unless it is a symbolic link that leads out of the corpus folder.

    Refused rather than skipped: the corpus revision would hash a file the folder does not
    hold (it can change while the folder does not), and whatever the link reaches (a
    credentials file, another project) would be indexed, embedded and quoted in answers; a
    skipped file would silently be a missing document instead.  One line says which link."""
    if path.is_symlink() and not path.resolve().is_relative_to(root):
        raise CorpusError(
            f"{path}: a symbolic link to a file outside the corpus folder {folder}; "
            "copy the file into the folder or remove the link"
        )
    return path


def _folder_document(folder: Path, path: Path) -> Document:
    doc_id = path.relative_to(folder).with_suffix("").as_posix()
    try:
        content = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise CorpusError(f"{path}: not valid UTF-8 at byte {exc.start}") from None
    title, body = _split_title(content)
    return Document(doc_id, title, body)


def _split_title(content: str) -> tuple[str, str]:
    lines: Sequence[str] = content.lstrip("\ufeff").splitlines()
    if lines and lines[0].startswith("# "):
        return lines[0][2:].strip(), "\n".join(lines[1:]).strip()
    return "", content.strip()
