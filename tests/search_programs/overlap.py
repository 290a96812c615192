"""The ranking of tests/search_programs/search.php, in Python: the Markdown files of a folder
ranked by how many distinct terms of the question each holds, ties by id.  Terms are the runs
of ASCII letters and digits of the lowercased UTF-8 bytes (as PHP's ``strtolower`` and
``preg_split`` see them), stop words removed."""

from __future__ import annotations

import functools
import re
from pathlib import Path

STOP_WORDS = frozenset(
    {"a", "an", "and", "are", "at", "be", "by", "can", "do", "does", "for", "how", "i", "in", "is", "it", "my"}
    | {"of", "on", "or", "the", "to", "what", "when", "with"}
)


def terms(text: str) -> set[str]:
    words = re.findall(rb"[a-z0-9]+", text.encode("utf-8").lower())
    return {word.decode() for word in words} - STOP_WORDS


@functools.cache
def documents(folder: Path) -> tuple[tuple[str, frozenset[str]], ...]:
    found = {
        path.relative_to(folder).with_suffix("").as_posix(): frozenset(terms(path.read_text(encoding="utf-8")))
        for path in folder.rglob("*.md")
    }
    return tuple(sorted(found.items()))


def rank(folder: Path, question: str, limit: int) -> list[str]:
    query = terms(question)
    scored = [(len(query & words), doc_id) for doc_id, words in documents(folder)]
    ranked = sorted((item for item in scored if item[0] > 0), key=lambda item: (-item[0], item[1]))
    return [doc_id for _, doc_id in ranked[:limit]]
