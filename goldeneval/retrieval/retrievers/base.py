"""The retriever contract (ADR-072, decision 2) and how document ids are read from it.

Deliberately minimal: a question string and a limit in, ranked ids out, so any retrieval
pipeline can be measured.  A retriever that indexes chunks returns chunk ids; the adapter
maps them to document ids by the prefix before a separator (``doc-17#3`` -> ``doc-17``), the
same identity scheme the golden set's labels use.  One rule for the separator, everywhere
(:func:`document_id_mapper`): an id the separator would cut to nothing (``#frag``) is kept
whole, the document trec_eval sees; judged ids (expected or judged not relevant) that
themselves hold the separator (MS MARCO-style ``D1#2``) could never be matched, so
:func:`check_judged_ids` refuses them before a run starts.  No id is silently changed.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib.metadata import version as package_version
from pathlib import Path
from typing import Protocol, TypeVar, runtime_checkable

from goldeneval.core.corpus import Corpus
from goldeneval.core.errors import InputError, RetrieverError
from goldeneval.retrieval.defaults import DEFAULT_CHUNK_SEPARATOR
from goldeneval.retrieval.golden import GoldenQuestionSet

__all__ = [
    "DEFAULT_CHUNK_SEPARATOR",
    "BatchRetriever",
    "Retriever",
    "RetrieverContext",
    "RetrieverFactory",
    "check_judged_ids",
    "document_id_mapper",
    "execution_revision",
    "number_option",
    "option_label",
]

_Number = TypeVar("_Number", int, float)


@runtime_checkable
class Retriever(Protocol):
    """Anything that ranks ids for a question.

    ``--workers N`` asks up to N questions at once, on N threads.  A retriever that must not
    be called concurrently says so with a class attribute ``thread_safe = False``; it is then
    asked one question at a time, with a warning (:func:`goldeneval.core.workers.usable_workers`).
    The attribute is optional (not a member of this protocol): a retriever without it is taken
    as thread-safe."""

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        """Up to ``limit`` ids, best first.  An empty result means "nothing found"."""
        ...


@runtime_checkable
class BatchRetriever(Retriever, Protocol):
    """A retriever that can also rank many questions in one call (optional).

    The evaluator uses ``retrieve_batch`` when it is there (``--batch-size``), and must get
    exactly the rankings ``retrieve`` would give question by question: batching is a speed-up,
    never a different measurement.  A batch that raises, returns the wrong number of rankings
    or takes longer than one question's timeout is not trusted: its questions are asked again
    one by one, so errors and timeouts stay with the question that caused them.
    """

    def retrieve_batch(self, questions: Sequence[str], limit: int) -> Sequence[Sequence[str]]:
        """One ranking per question, in the questions' order, each up to ``limit`` ids."""
        ...


@dataclass(frozen=True)
class RetrieverContext:
    """What a retriever factory may use to build its retriever."""

    corpus: Corpus | None
    cache_dir: Path
    options: Mapping[str, str] = field(default_factory=dict)
    golden_set: GoldenQuestionSet | None = None
    """The set being evaluated, for retrievers that replay rankings keyed by question id."""
    progress: bool = True
    """Whether the retriever may show progress bars on stderr (False when the run shows none:
    ``--no-progress``)."""

    def float_option(
        self,
        name: str,
        default: float,
        *,
        minimum: float | None = None,
        maximum: float | None = None,
        retriever_id: str | None = None,
    ) -> float:
        """Option ``name`` as a finite number within ``[minimum, maximum]``, else ``default``.

        ``nan``, ``inf`` and ``-inf`` are rejected whatever the bounds; ``retriever_id`` names
        the retriever in the error.
        """

        def problem(raw: str, value: float) -> str | None:
            if (
                not math.isfinite(value)
                or (minimum is not None and value < minimum)
                or (maximum is not None and value > maximum)
            ):
                return f"must be a finite number{_range_text(minimum, maximum)}, got {raw.strip()}"
            return None

        value = number_option(self, name, float, "a number", problem, retriever_id=retriever_id)
        return default if value is None else value

    def require_corpus(self, retriever_id: str) -> Corpus:
        if self.corpus is None:
            raise RetrieverError(
                f"retriever {retriever_id!r} needs a corpus: pass --corpus PATH, or give the "
                "golden set a 'corpus' entry"
            )
        return self.corpus


RetrieverFactory = Callable[[RetrieverContext], Retriever]


def option_label(name: str, retriever_id: str | None = None) -> str:
    """How an error names an option: ``retriever 'goldeneval.lexical': option 'k1'``."""
    return f"retriever {retriever_id!r}: option {name!r}" if retriever_id else f"retriever option {name!r}"


def number_option(
    context: RetrieverContext,
    name: str,
    convert: Callable[[str], _Number],
    expected: str,
    problem: Callable[[str, _Number], str | None],
    *,
    retriever_id: str | None = None,
) -> _Number | None:
    """Option ``name`` read by ``convert``, or None when not given: the one place where a
    numeric option is parsed, so that every such option fails the same way.  A value
    ``convert`` refuses is "expected <expected>"; ``problem(raw, value)`` says what is wrong
    with a value out of range (None when it is fine)."""
    raw = context.options.get(name)
    if raw is None:
        return None
    label = option_label(name, retriever_id)
    try:
        value = convert(raw)
    except ValueError:
        raise RetrieverError(f"{label}: expected {expected}, got {raw!r}") from None
    wrong = problem(raw, value)
    if wrong is not None:
        raise RetrieverError(f"{label}: {wrong}")
    return value


def _range_text(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f" in [{minimum:g}, {maximum:g}]"
    if minimum is not None:
        return f" >= {minimum:g}"
    if maximum is not None:
        return f" <= {maximum:g}"
    return ""


def execution_revision(*packages: str) -> str:
    """``goldeneval <version>; <package> <version>; ...`` for provenance."""
    names = ("goldeneval", *packages)
    return "; ".join(f"{name} {package_version(name)}" for name in names)


def document_id_mapper(separator: str | None = DEFAULT_CHUNK_SEPARATOR) -> Callable[[str], str]:
    """Map a returned id to its document id: the prefix before the first ``separator``; an id
    that prefix would leave empty (``#frag``) is its own document, kept whole, as trec_eval
    reads it (cut to ``''``, every such id would become one document)."""
    if not separator:
        return lambda returned_id: returned_id

    def to_document(returned_id: str) -> str:
        return returned_id.split(separator, 1)[0] or returned_id

    return to_document


def check_judged_ids(judged_ids: Iterable[str], separator: str | None, set_id: str) -> None:
    """Refuse judged ids (expected or judged not relevant) that hold the chunk separator:
    every returned id is cut at it, so such an id could never be matched, and each question
    holding one would silently score 0 (an expected id) or count a judged document as
    unjudged (a judged negative)."""
    if not separator:
        return
    to_document = document_id_mapper(separator)
    holding = sorted({doc for doc in judged_ids if to_document(doc) != doc})
    if holding:
        raise InputError(
            f"{len(holding)} judged document ids of set {set_id!r} contain the chunk separator "
            f"{separator!r} (e.g. {holding[0]!r}), so returned ids cut at it can never match them: "
            "pass --chunk-separator '' to keep ids whole, or another separator"
        )
