"""TREC interop: stored runs out as TREC run files, golden sets out as qrels, run files in.

A TREC run file has one line per retrieved document, six whitespace-separated columns::

    <query id> Q0 <document id> <rank> <score> <tag>

and TREC qrels one line per judgement::

    <query id> 0 <document id> <relevance>

An exported run lists, per question, every distinct document the stored run kept (to its
measurement depth, best first), with rank 1, 2, ... and score ``n - rank + 1`` so that every
tool orders them the same way; errored questions have no lines.  The tag is the retriever
id.  A chunk-grained run whose first raw ids held fewer than three documents missed
top-3 where its first three distinct documents may hold an expected one; the replay needs
to know, and the run file has no place for it that every TREC reader passes over, so
:func:`replay_notes` are written beside the file (``<file>.goldeneval.json``: the questions
whose top-3 was a miss while hit@3, the first three distinct documents without the raw head,
was not, and the label digest they were judged under), which ``goldeneval.trec_run`` reads
when it is there.  Qrels give every expected document its grade (1 unless the set grades it) and every
document the set records as judged not relevant (``not_relevant``) grade 0; a question with
neither has no line (qrels cannot say "nothing answers this").  Both are sorted, so the
files are deterministic.

Reading a run file follows trec_eval: each query's documents are ordered by score, highest
first, and tied scores by document id descending; the rank column is not read (it need not
even be an integer).  ``order="as_given"`` orders tied scores as the file gives them
instead: by the rank column (integer ranks first), then line order.  As trec_eval reads
them, lines starting with ``#`` are skipped and columns after the sixth are ignored
(:class:`TrecRun` counts these and the non-integer ranks, for one warning); fewer than six
columns, a score that is not a finite number and a document listed twice for one query are
errors.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from goldeneval.core.errors import InputError
from goldeneval.core.text_files import read_utf8
from goldeneval.retrieval.details import QuestionColumns, retrieval_details
from goldeneval.retrieval.golden import GoldenQuestionSet
from goldeneval.store import StoredRun

__all__ = [
    "REPLAY_NOTES_FORMAT",
    "REPLAY_NOTES_SUFFIX",
    "RUN_ORDERS",
    "ReplayNotes",
    "RunOrder",
    "TrecRun",
    "TrecRunError",
    "qrels_lines",
    "read_replay_notes",
    "read_trec_run",
    "read_trec_run_file",
    "replay_notes",
    "run_lines",
    "write_lines",
]

REPLAY_NOTES_SUFFIX = ".goldeneval.json"
"""What :func:`replay_notes` are written as: the run file's name with this added."""
REPLAY_NOTES_FORMAT = "goldeneval-replay-notes/v1"

RunOrder = Literal["trec_eval", "as_given"]
RUN_ORDERS: tuple[RunOrder, ...] = ("trec_eval", "as_given")
"""How tied scores are ordered: trec_eval's (document id descending) or the file's lines."""


class TrecRunError(InputError):
    """A TREC run file cannot be read, or a stored run cannot be written as one."""


_SPACE = re.compile(r"\s")
r"""Any character ``str.isspace`` calls white space (``re``'s ``\s`` on text is the same test)."""


def _check_token(value: str, what: str) -> str:
    if not value or _SPACE.search(value):
        raise TrecRunError(f"{what} {value!r} cannot be written to a TREC file: it is empty or holds whitespace")
    if what == "question id" and value.startswith("#"):
        raise TrecRunError(
            f"{what} {value!r} cannot be written to a TREC file: a line starting with '#' is a comment, "
            "which trec_eval and goldeneval.trec_run skip"
        )
    return value


def run_lines(stored: StoredRun) -> Iterator[str]:
    """The TREC run lines of a stored run (the documents of each question of its details),
    question after question in id order.

    Everything that could refuse the run is checked before the first line, in the order the
    whole run was read before: the stored documents (decoded once without being kept: codes
    that cannot be decoded are a store error), its privacy mode, the tag, every question id
    and every document id (each distinct id once).  The lines are then made as they are read,
    from the stored codes: a run of 200,000 questions x 100 documents was held as 20,000,000
    lines and records first, 6 GB."""
    details = retrieval_details(stored)
    questions = details.questions
    rows = None if isinstance(questions, QuestionColumns) else list(questions)
    if isinstance(questions, QuestionColumns) and questions.documents is not None:
        for _ in questions.documents.code_blocks():  # checked to the last byte, a block at a time
            pass
    if rows is None:
        assert isinstance(questions, QuestionColumns)
        withheld = questions.documents is None and "ok" in questions.status
    else:
        withheld = any(q.documents is None for q in rows if q.scored)
    if stored.privacy == "metadata_only" or withheld:
        raise TrecRunError(
            f"run {stored.id} was stored with privacy mode metadata_only: it holds no document ids "
            "to export; rerun with --privacy full"
        )
    tag = _check_token(stored.retriever_id or stored.model, "retriever id")
    if rows is not None:  # formats 1 to 3: records, as runs stored before columns hold them
        ids = [q.id for q in rows]
        order = sorted(range(len(ids)), key=ids.__getitem__)
        lists = [list(rows[i].documents or ()) for i in order]
        for i, question_documents in zip(order, lists, strict=True):
            query_id = _check_token(ids[i], "question id")
            for document in question_documents:
                _check_token(document, f"question {query_id!r}: document id")
        return _lines(ids, order, iter(lists), tag)
    assert isinstance(questions, QuestionColumns)
    ids = questions.id
    order = sorted(range(len(ids)), key=ids.__getitem__)
    _check_ids(ids, order, questions)
    return _lines(ids, order, questions.document_lists_in(order), tag)


@dataclass(frozen=True)
class ReplayNotes:
    """What a replay of an exported run needs beside its lines (:func:`replay_notes`)."""

    top3_misses: frozenset[str]
    """Questions whose top-3 was a miss although their first three documents may hold an
    expected one (the first raw ids held fewer than three documents)."""
    label_digest: str | None
    """The labels the misses were judged under: a replay under other labels is warned."""

    def to_json(self, run_id: str) -> str:
        return json.dumps(
            {
                "format": REPLAY_NOTES_FORMAT,
                "run": run_id,
                "label_digest": self.label_digest,
                "top3_misses": sorted(self.top3_misses),
            },
            indent=1,
        )


def replay_notes(stored: StoredRun) -> ReplayNotes | None:
    """The notes an export of ``stored`` needs for an exact replay, or None when it needs none
    (no question's top-3 was a miss its first three documents could make a hit)."""
    details = retrieval_details(stored)
    questions = details.questions
    level = details.relevance_level
    if isinstance(questions, QuestionColumns):
        at3 = questions.metrics.get("hit@3")
        values = at3 if at3 is not None else [None] * len(questions.id)
        rows = zip(questions.id, questions.top3_hit, values, strict=True)
        misses = {qid for qid, hit, value in rows if _marked(hit, value, at3 is not None, level)}
    else:
        reported = any("hit@3" in q.metrics for q in questions)
        misses = {q.id for q in questions if _marked(q.top3_hit, q.metrics.get("hit@3"), reported, level)}
    return ReplayNotes(frozenset(misses), stored.label_digest) if misses else None


def read_replay_notes(run_file: Path) -> ReplayNotes | None:
    """The notes beside ``run_file`` (``<file>.goldeneval.json``), or None when there are none."""
    path = run_file.with_name(run_file.name + REPLAY_NOTES_SUFFIX)
    if not path.is_file():
        return None
    text = read_utf8(path, TrecRunError, "replay notes not found")
    try:
        notes = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrecRunError(f"{path}: not valid JSON ({exc.msg}, line {exc.lineno})") from None
    if not isinstance(notes, dict) or notes.get("format") != REPLAY_NOTES_FORMAT:
        raise TrecRunError(f"{path}: not goldeneval replay notes (expected format {REPLAY_NOTES_FORMAT!r})")
    misses = notes.get("top3_misses")
    digest = notes.get("label_digest")
    if not isinstance(misses, list) or not all(isinstance(q, str) for q in misses):
        raise TrecRunError(f"{path}: field 'top3_misses': expected a list of query ids")
    if digest is not None and not isinstance(digest, str):
        raise TrecRunError(f"{path}: field 'label_digest': expected a string or null")
    return ReplayNotes(frozenset(misses), digest)


def _check_ids(ids: Sequence[str], order: Sequence[int], columns: QuestionColumns) -> None:
    """Refuse the run, as writing it line by line would, at the first question (in id order)
    whose id, or one of whose documents, cannot be written; each distinct document checked once."""
    vocabulary = columns.documents.vocabulary if columns.documents is not None else []
    unwritable = {code for code, document in enumerate(vocabulary) if not document or _SPACE.search(document)}
    if not unwritable and all(
        question_id and not _SPACE.search(question_id) and not question_id.startswith("#") for question_id in ids
    ):
        return
    codes = columns.document_codes_in(order)
    for i, question_codes in zip(order, codes, strict=True):
        query_id = _check_token(ids[i], "question id")
        for code in question_codes:
            if code in unwritable:
                _check_token(vocabulary[code], f"question {query_id!r}: document id")


def _marked(top3_hit: bool | None, hit_at_3: float | None, reported: bool, relevance_level: int | None) -> bool:
    """Whether a question's lines need the top-3 miss mark: its top-3 was a miss, and its
    first three distinct documents may hold an expected one.  Where the run reported hit@3
    (which reads them without the protocol's raw head), they may when it was above 0, or was
    defined at a relevance level above 1 (it then passes over expected documents graded
    below it); None is a question with no expected document, which nothing can make a hit."""
    if top3_hit is not False:
        return False
    if not reported:
        return True
    return hit_at_3 is not None and (hit_at_3 > 0 or (relevance_level or 1) > 1)


def _lines(ids: Sequence[str], order: Sequence[int], documents: Iterator[list[str]], tag: str) -> Iterator[str]:
    """Each question's lines: rank 1, 2, ... and score ``n - rank + 1``."""
    tails: dict[int, list[str]] = {}
    for i, question_documents in zip(order, documents, strict=True):
        count = len(question_documents)
        tail = tails.get(count)
        if tail is None:
            tail = tails[count] = [f" {rank} {count - rank + 1} {tag}" for rank in range(1, count + 1)]
        head = f"{ids[i]} Q0 "
        yield from [head + document + end for document, end in zip(question_documents, tail, strict=True)]


def qrels_lines(golden_set: GoldenQuestionSet) -> list[str]:
    """TREC qrels of a golden set: every expected document with its grade, every judged
    non-relevant one with grade 0, by document id."""
    lines: list[str] = []
    for question in sorted(golden_set.questions, key=lambda q: q.id):
        query_id = _check_token(question.id, "question id")
        judged = question.judgements
        if question.not_relevant:
            judged = dict(sorted({**judged, **dict.fromkeys(question.not_relevant, 0)}.items()))
        for doc_id, grade in judged.items():
            lines.append(f"{query_id} 0 {_check_token(doc_id, f'question {query_id!r}: document id')} {grade}")
    return lines


_LINES_AT_ONCE = 1 << 16
"""Lines :func:`write_lines` joins into one write."""


def write_lines(lines: Iterable[str], path: Path) -> int:
    """Write ``lines`` to ``path`` (``-`` is not special), a line each; returns how many.

    Written in place, as any command writes its output file: a link, a named pipe or
    ``/dev/stdout`` is written through, an existing file keeps its owner, mode and links.  The
    lines are made while they are written, so their maker checks first what could refuse them
    (:func:`run_lines` does)."""
    written = 0
    try:
        with path.open("w", encoding="utf-8", newline="\n") as out:
            remaining = iter(lines)
            while batch := list(itertools.islice(remaining, _LINES_AT_ONCE)):
                out.write("\n".join(batch) + "\n")
                written += len(batch)
    except OSError as exc:
        raise InputError(f"{path}: cannot write: {exc.strerror}") from None
    return written


@dataclass(frozen=True)
class TrecRun:
    """A TREC run file as read: the rankings and what trec_eval's reading passed over."""

    rankings: dict[str, list[str]]
    """Query id -> document ids, best first."""
    comment_lines: int = 0
    """Lines starting with ``#``, skipped."""
    extra_column_lines: int = 0
    """Lines with more than six columns; the columns after the sixth were ignored."""
    non_integer_ranks: int = 0
    """Lines whose rank column is not an integer (trec_eval does not read it either)."""

    def warning(self) -> str | None:
        """One sentence counting what was passed over, or None when nothing was."""
        parts = [
            f"{count} {what}"
            for count, what in (
                (self.comment_lines, "comment lines (#) skipped"),
                (self.extra_column_lines, "lines with columns after the sixth, ignored"),
                (self.non_integer_ranks, "lines with a non-integer rank (the rank is not read)"),
            )
            if count
        ]
        return "; ".join(parts) + ", as trec_eval reads them" if parts else None


def read_trec_run(path: Path, order: RunOrder = "trec_eval") -> dict[str, list[str]]:
    """Query id -> document ids, best first, from a TREC run file (see the module doc)."""
    return read_trec_run_file(path, order).rankings


def read_trec_run_file(path: Path, order: RunOrder = "trec_eval") -> TrecRun:
    """A TREC run file read as trec_eval reads it; ``order`` says how tied scores are ordered."""
    if order not in RUN_ORDERS:
        raise TrecRunError(f"order {order!r}: expected one of {', '.join(RUN_ORDERS)}")
    text = read_utf8(path, TrecRunError, "TREC run file not found")
    entries: dict[str, dict[str, tuple[float, tuple[int, int], int]]] = {}
    comments = extra = non_integer = 0
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if line.lstrip().startswith("#"):
            comments += 1
            continue
        columns = line.split()
        if len(columns) < 6:
            raise TrecRunError(
                f"{path}: line {lineno}: expected 6 columns (qid Q0 docid rank score tag), found {len(columns)}"
            )
        extra += len(columns) > 6
        query_id, _, doc_id, raw_rank, raw_score = columns[:5]
        try:
            rank = (0, int(raw_rank))
        except ValueError:
            non_integer += 1
            rank = (1, 0)
        try:
            score = float(raw_score)
        except ValueError:
            raise TrecRunError(f"{path}: line {lineno}: score {raw_score!r} is not a number") from None
        if not math.isfinite(score):
            raise TrecRunError(f"{path}: line {lineno}: score {raw_score!r} is not a finite number")
        documents = entries.setdefault(query_id, {})
        if doc_id in documents:
            raise TrecRunError(f"{path}: line {lineno}: query {query_id!r} lists document {doc_id!r} twice")
        documents[doc_id] = (score, rank, lineno)
    rankings: dict[str, list[str]] = {}
    for query_id, documents in entries.items():
        if order == "trec_eval":
            # score descending, then document id descending (trec_eval compares docnos with strcmp;
            # code point order is UTF-8 byte order)
            by_id = sorted(documents, reverse=True)
            rankings[query_id] = sorted(by_id, key=lambda doc: -documents[doc][0])
        else:
            rankings[query_id] = sorted(documents, key=lambda doc: (-documents[doc][0], *documents[doc][1:]))
    return TrecRun(rankings, comments, extra, non_integer)
