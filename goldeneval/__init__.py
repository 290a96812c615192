"""goldeneval: measure retrieval quality against labelled golden sets and catch regressions.

The public API is short and made of verbs: load a set, load a corpus, evaluate, store.  A
whole run — evaluate, record, judge, as the CLI and the Dagster assets do it — is a
:class:`RunSpec` handed to :mod:`goldeneval.retrieval.pipeline`.

The names below are imported on first use (PEP 562), so that importing any part of
goldeneval (the ``goldeneval`` command starts with its ``cli``) does not import all of it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from goldeneval.core.corpus import Corpus, Document, load_corpus
    from goldeneval.core.gate import RegressionThresholds
    from goldeneval.core.regression import detect_regression
    from goldeneval.retrieval.evaluation import evaluate_retrieval
    from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm, load_golden_set
    from goldeneval.retrieval.retrievers import Retriever, RetrieverContext, build_retriever
    from goldeneval.retrieval.run import RetrievalRun
    from goldeneval.retrieval.sets import resolve_golden_set
    from goldeneval.retrieval.spec import RunSpec
    from goldeneval.store import ResultStore

_PUBLIC = {
    "Corpus": "goldeneval.core.corpus",
    "Document": "goldeneval.core.corpus",
    "load_corpus": "goldeneval.core.corpus",
    "RegressionThresholds": "goldeneval.core.gate",
    "detect_regression": "goldeneval.core.regression",
    "RetrievalRun": "goldeneval.retrieval.run",
    "evaluate_retrieval": "goldeneval.retrieval.evaluation",
    "GoldenQuestion": "goldeneval.retrieval.golden",
    "GoldenQuestionSet": "goldeneval.retrieval.golden",
    "QuestionForm": "goldeneval.retrieval.golden",
    "load_golden_set": "goldeneval.retrieval.golden",
    "Retriever": "goldeneval.retrieval.retrievers",
    "RetrieverContext": "goldeneval.retrieval.retrievers",
    "build_retriever": "goldeneval.retrieval.retrievers",
    "resolve_golden_set": "goldeneval.retrieval.sets",
    "RunSpec": "goldeneval.retrieval.spec",
    "ResultStore": "goldeneval.store",
}

__all__ = [
    "Corpus",
    "Document",
    "GoldenQuestion",
    "GoldenQuestionSet",
    "QuestionForm",
    "RegressionThresholds",
    "ResultStore",
    "RetrievalRun",
    "Retriever",
    "RetrieverContext",
    "RunSpec",
    "build_retriever",
    "detect_regression",
    "evaluate_retrieval",
    "load_corpus",
    "load_golden_set",
    "resolve_golden_set",
]


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'goldeneval' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
