"""The judgments file: one JSON object a line, append-only, a later line superseding an earlier one.

Each line is a :class:`JudgmentLine`: a question id, a document id, a ``grade`` (``null``
until judged), the ``assessor`` who gave it (``null`` on a line the pool wrote), when
(``judged_at``) and where the pair came from (``sources``: each retriever or stored run that
returned the document, at which rank; ``search:<assessor>`` for a document a person found with
the judging page's search).  Two kinds of line share the format:

* a *pool line* (``assessor`` null, ``grade`` null) says the pair is to be judged;
* a *judgment* (an ``assessor``, a ``grade``) is one person's grade of the pair;
* a *suggestion* (an assessor ``model:...``, a ``grade`` and a ``suggestion`` object with the
  judge model's sample scores, their spread in grades and whether they disagree on relevant
  vs not relevant) is a model's grade (:mod:`goldeneval.judgments.suggest`), its own
  assessor, never a person's.  The key ``suggestion`` is written only on such lines.

Nothing is ever rewritten in place: a line for the same (question, document, assessor) written
later supersedes an earlier one (a corrected grade, or a pool line with more sources).  Each
judgment is written with one unbuffered ``write`` and ``fsync``-ed, under an exclusive lock
of the file, so a crash loses at most the line being written (the pool's lines are synced
once at the end: pooling again restores them).  A line that is not complete JSON
(a write torn by a crash) is ignored with a warning when the file is read, not an error, and
the next append starts on a new line after it; a complete line that is not a valid judgment
is invalid input naming the file and the line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictInt, ValidationError

from goldeneval.core.errors import InputError, invalid_input

_encode_string: Callable[[str], str] = json.encoder.encode_basestring

try:
    import fcntl
except ImportError:  # Windows: appends are not locked against a second writer
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DEFAULT_SCALE",
    "DRAFT_SOURCE",
    "MODEL_ASSESSOR_PREFIX",
    "SEARCH_SOURCE",
    "JudgmentLine",
    "Judgments",
    "JudgmentsError",
    "Source",
    "Suggestion",
    "append_lines",
    "appending",
    "check_judgments",
    "is_model_assessor",
    "json_string",
    "parse_line",
    "pool_line_json",
    "pool_lines",
    "read_judgments",
    "source_json",
    "utc_now",
]


DEFAULT_SCALE = (0, 1, 2, 3)
"""The grades offered by default: 0 not relevant, 1 relevant, 2 highly relevant, 3 perfect."""


SEARCH_SOURCE = "search:"
"""A pair a person found with the judging page's search is pooled with the source
``search:<assessor>`` (its rank: the document's place among the results): no retriever found it."""
DRAFT_SOURCE = "draft"
"""The source ``goldeneval pool`` gives a drafted question's own source document: no retriever found it."""


def found_by_retrieval(source: str) -> bool:
    """Whether a pooled pair's source is a retriever or a stored run (what found the document),
    not a person's search (``search:<assessor>``) or a draft's own source document (``draft``)."""
    return source != DRAFT_SOURCE and not source.startswith(SEARCH_SOURCE)


MODEL_ASSESSOR_PREFIX = "model:"
"""Assessors named ``model:...`` are models' suggestions, never people."""


def is_model_assessor(assessor: str) -> bool:
    return assessor.startswith(MODEL_ASSESSOR_PREFIX)


class JudgmentsError(InputError):
    """A judgments file cannot be read or written."""


class Source(BaseModel):
    """Where a pooled document came from: a retriever (``goldeneval.lexical``, with options as
    ``goldeneval.lexical?k1=0.9``) or a stored run (``run:<id>``), and its rank there (1 = best)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    source: str = Field(min_length=1)
    rank: StrictInt = Field(ge=1)


class Suggestion(BaseModel):
    """What a model's suggested grade rests on: the judge's sample scores (0..1, mapped to the
    grade as ``round(mean * top grade)``), their spread in grades (the highest sample's grade
    less the lowest's) and whether the samples disagree on relevant (grade >= 1) vs not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    scores: tuple[float, ...] = Field(min_length=1)
    spread: StrictInt = Field(ge=0)
    unstable: bool = False
    rubric: str | None = None
    """The identity of the instructions the judge was given (name, version, digest)."""


class JudgmentLine(BaseModel):
    """One line of a judgments file."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    question: str = Field(min_length=1)
    document: str = Field(min_length=1)
    grade: StrictInt | None = Field(default=None, ge=0)
    assessor: str | None = Field(default=None, min_length=1)
    judged_at: str | None = None
    sources: tuple[Source, ...] = ()
    question_text: str | None = None
    """The question as asked (on pool lines), so the judging page needs no set file."""
    suggestion: Suggestion | None = None
    """Set on a model's suggestion only (its assessor is ``model:...``)."""

    @property
    def key(self) -> tuple[str, str, str | None]:
        return (self.question, self.document, self.assessor)

    @property
    def pair(self) -> tuple[str, str]:
        return (self.question, self.document)

    def to_json_line(self) -> str:
        """Compact JSON, UTF-8 as it is (pydantic's serializer: the bytes ``json.dumps`` with
        ``ensure_ascii=False`` and compact separators writes, several times faster)."""
        if self.suggestion is None:  # only a suggestion carries the key
            return self.model_dump_json(exclude=_NO_SUGGESTION) + "\n"
        return self.model_dump_json() + "\n"


_NO_SUGGESTION = {"suggestion"}


def utc_now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class Judgments:
    """A judgments file as read: the latest line of each (question, document, assessor)."""

    pairs: dict[tuple[str, str], tuple[Source, ...]]
    """Every pooled (question, document), in first-seen order, with its sources (latest pool line)."""
    grades: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(question, document, assessor) -> grade, the latest judgment of each (a pair judged
    without pooling counts as pooled too)."""
    texts: dict[str, str] = field(default_factory=dict)
    """Question id -> its text, from the pool lines."""
    warnings: tuple[str, ...] = ()
    suggestions: dict[tuple[str, str, str], Suggestion] = field(default_factory=dict)
    """(question, document, model assessor) -> what the latest suggestion's grade rests on
    (its grade is in ``grades``)."""
    lines: dict[tuple[str, str, str], int] = field(default_factory=dict)
    """(question, document, assessor) -> the line (from 1) of the latest grade in ``grades``."""

    @property
    def assessors(self) -> list[str]:
        """Everyone who graded, models' suggestions included."""
        return sorted({assessor for _, _, assessor in self.grades})

    @property
    def people(self) -> list[str]:
        """The assessors that are not models (``model:...``)."""
        return [assessor for assessor in self.assessors if not is_model_assessor(assessor)]

    def questions(self) -> list[str]:
        """Question ids in first-seen order."""
        return list(dict.fromkeys(question for question, _ in self.pairs))

    def documents(self, question: str) -> list[str]:
        return [document for q, document in self.pairs if q == question]

    def by_assessor(self, assessor: str) -> dict[tuple[str, str], int]:
        return {(q, d): grade for (q, d, a), grade in self.grades.items() if a == assessor}


def read_judgments(path: Path, *, missing_ok: bool = False) -> Judgments:
    """Read ``path``; a torn line is skipped with a warning.  ``missing_ok``: no file reads as empty."""
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        if missing_ok:
            return Judgments(pairs={})
        raise JudgmentsError(f"{path}: judgments file not found") from None
    except OSError as exc:
        raise JudgmentsError(f"{path}: cannot read: {exc.strerror}") from None
    with handle:
        try:
            return _read(path, handle)
        except OSError as exc:
            raise JudgmentsError(f"{path}: cannot read: {exc.strerror}") from None


def _read(path: Path, handle: Iterable[bytes]) -> Judgments:
    """The file read a line at a time (never whole); each id held once, however many lines
    name it, and each distinct list of sources once, however many pairs share it."""
    pairs: dict[tuple[str, str], tuple[Source, ...]] = {}
    grades: dict[tuple[str, str, str], int] = {}
    texts: dict[str, str] = {}
    suggestions: dict[tuple[str, str, str], Suggestion] = {}
    warnings: list[str] = []
    lines: dict[tuple[str, str, str], int] = {}
    shared: dict[tuple[str, int], Source] = {}  # one object per (source, rank): a pool holds few distinct
    listed: dict[tuple[Source, ...], tuple[Source, ...]] = {}  # one tuple per distinct list of sources
    names: dict[str, str] = {}  # one string per id
    for lineno, line in _lines(path, handle, warnings):
        question = names.setdefault(line.question, line.question)
        pair = (question, names.setdefault(line.document, line.document))
        pairs.setdefault(pair, ())
        if line.question_text is not None and texts.get(question) != line.question_text:
            texts[question] = line.question_text
        if line.assessor is None:
            sources = tuple(shared.setdefault((s.source, s.rank), s) for s in line.sources)
            pairs[pair] = listed.setdefault(sources, sources)
        elif line.grade is None:  # a judgment taken back
            grades.pop((*pair, line.assessor), None)
            suggestions.pop((*pair, line.assessor), None)
            lines.pop((*pair, line.assessor), None)
        else:
            key = (*pair, line.assessor)
            grades[key] = line.grade
            lines[key] = lineno
            if line.suggestion is not None:
                suggestions[key] = line.suggestion
            else:
                suggestions.pop(key, None)
    return Judgments(
        pairs=pairs, grades=grades, texts=texts, warnings=tuple(warnings), suggestions=suggestions, lines=lines
    )


def check_judgments(
    path: Path,
    judgments: Judgments,
    *,
    scale: Collection[int] = DEFAULT_SCALE,
    documents: Collection[str] | None = None,
    corpus_name: str = "the corpus",
) -> None:
    """Check the grades of ``judgments`` (read from ``path``) as a set file's labels are
    checked: each latest grade must lie on ``scale``, and, unless ``documents`` is None (unknown
    documents allowed), each graded document must be one of ``documents`` (the corpus's ids).
    Raises :class:`JudgmentsError` naming the file, the line and the field of the first
    offending grade, in file order."""
    allowed = frozenset(scale)
    shown = ",".join(str(g) for g in sorted(allowed))
    for key, lineno in sorted(judgments.lines.items(), key=lambda item: item[1]):
        grade = judgments.grades[key]
        if grade not in allowed:
            raise JudgmentsError(
                f"{path}: line {lineno}: field 'grade': {grade} is not on the scale {shown} "
                f"(assessor {key[2]!r}, question {key[0]!r}, document {key[1]!r}; --scale names the grades)"
            )
        if documents is not None and key[1] not in documents:
            raise JudgmentsError(
                f"{path}: line {lineno}: field 'document': {key[1]!r} is not in {corpus_name} "
                f"(question {key[0]!r}, assessor {key[2]!r}); --allow-unknown-documents keeps such a document"
            )


def _lines(path: Path, handle: Iterable[bytes], warnings: list[str]) -> Iterator[tuple[int, JudgmentLine]]:
    for lineno, raw in enumerate(handle, start=1):
        line = parse_line(path, lineno, raw, warnings)
        if line is not None:
            yield lineno, line


def parse_line(path: Path, lineno: int, raw: bytes, warnings: list[str]) -> JudgmentLine | None:
    """One line of the file read: None for a blank line, and for a line that is not complete
    JSON (with a warning); a complete line that is not a valid judgment is
    :class:`JudgmentsError` naming the file and the line."""
    if not raw.strip():
        return None
    try:  # the fast path: pydantic parses and validates the JSON at once
        return JudgmentLine.model_validate_json(raw)
    except ValidationError:
        pass  # said below, as before: a torn line, or a field that is wrong
    try:
        item = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        warnings.append(f"{path}: line {lineno} is not complete JSON (a write cut short?); ignored")
        return None
    try:
        return JudgmentLine.model_validate(item)
    except ValidationError as exc:
        raise invalid_input(exc, f"{path}: line {lineno}", whole="(line)", error=JudgmentsError) from None


@contextmanager
def appending(path: Path) -> Iterator[Callable[[str], None]]:
    """Append whole lines of text to ``path`` as they come: the function yielded takes one line
    (ending in a newline); lines are gathered into writes of about :data:`BATCH_BYTES` (a crash
    tears at most the last line), under an exclusive lock, and synced once at the end.  A file
    that ends in a torn line gets a newline first, as :func:`append_lines` does.  What the pool
    writes goes through here, a line at a time, with no model object per line."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise JudgmentsError(f"{path}: cannot write: {exc.strerror}") from None
    batch: list[str] = []
    size = 0

    def flush() -> None:
        nonlocal batch, size
        if batch:
            _write_all(fd, "".join(batch).encode("utf-8"))
            batch, size = [], 0

    def write(text: str) -> None:
        nonlocal size
        batch.append(text)
        size += len(text)
        if size >= BATCH_BYTES:
            flush()

    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        if _ends_torn(path):
            _write_all(fd, b"\n")
        yield write
        flush()
        os.fsync(fd)
    except OSError as exc:
        raise JudgmentsError(f"{path}: cannot write: {exc.strerror}") from None
    finally:
        os.close(fd)  # releases the lock


def pool_line_json(question: str, document: str, sources: str, question_text: str | None) -> str:
    """A pool line's JSON, built as text: the bytes :meth:`JudgmentLine.to_json_line` writes
    for it (``tests/test_judgments_pool.py`` holds the two equal).  ``question``, ``document``
    and ``question_text`` come JSON-encoded already (:func:`json_string`), ``sources`` as the
    encoded source objects joined by commas (:func:`source_json`)."""
    text = "null" if question_text is None else question_text
    return (
        f'{{"question":{question},"document":{document},"grade":null,"assessor":null,"judged_at":null,'
        f'"sources":[{sources}],"question_text":{text}}}\n'
    )


def json_string(text: str) -> str:
    """``text`` as a JSON string, UTF-8 as it is (what pydantic's serializer writes)."""
    return _encode_string(text)


def source_json(source: str, rank: int) -> str:
    """One source of a pool line as JSON text."""
    return f'{{"source":{_encode_string(source)},"rank":{rank}}}'


def append_lines(path: Path, lines: Iterable[JudgmentLine], *, sync_each: bool = True) -> int:
    """Append ``lines``, each with one write (unbuffered: no flush is pending) and an fsync,
    under an exclusive lock.  ``sync_each=False`` writes whole lines in writes of about
    :data:`BATCH_BYTES` and syncs once after the last one instead (:func:`appending`): for
    many lines that writing again restores after a crash.

    When the file ends in a torn line (no final newline), a newline is written first, so the
    torn fragment stays a line of its own that reading skips.  Returns the lines written."""
    written = 0
    if not sync_each:
        with appending(path) as write:
            for line in lines:
                write(line.to_json_line())
                written += 1
        return written
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    except OSError as exc:
        raise JudgmentsError(f"{path}: cannot write: {exc.strerror}") from None
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        if _ends_torn(path):
            _write_all(fd, b"\n")
        for line in lines:
            _write_all(fd, line.to_json_line().encode("utf-8"))
            os.fsync(fd)
            written += 1
    except OSError as exc:
        raise JudgmentsError(f"{path}: cannot write: {exc.strerror}") from None
    finally:
        os.close(fd)  # releases the lock
    return written


BATCH_BYTES = 1 << 20
"""About how much one write of :func:`append_lines` holds when it syncs once at the end."""


def _ends_torn(path: Path) -> bool:
    with path.open("rb") as handle:
        handle.seek(0, os.SEEK_END)
        if handle.tell() == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def _write_all(fd: int, data: bytes) -> None:
    """One ``write`` call for a line (O_APPEND puts it at the end whole); loops only if the
    kernel takes less, which a regular file does only when the disk is full."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def pool_lines(
    existing: Judgments, found: dict[tuple[str, str], Sequence[Source]], texts: Mapping[str, str]
) -> list[JudgmentLine]:
    """Pool lines for the pairs in ``found`` that ``existing`` lacks, and for known pairs that
    gained a source (the new line lists the old sources and the new ones, and supersedes)."""
    lines: list[JudgmentLine] = []
    for (question, document), sources in found.items():
        known = existing.pairs.get((question, document))
        if known is None:
            merged = tuple(sources)
        else:
            names = {s.source for s in known}
            new = [s for s in sources if s.source not in names]
            if not new:
                continue
            merged = (*known, *new)
        lines.append(
            JudgmentLine(question=question, document=document, sources=merged, question_text=texts.get(question))
        )
    return lines
