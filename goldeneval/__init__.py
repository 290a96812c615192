"""goldeneval: measure retrieval quality against labelled golden sets and catch regressions.

The public API is short and made of verbs: load a set, load a corpus, evaluate, store.  A
whole run — evaluate, record, judge, as the CLI and the Dagster assets do it — is a
:class:`RunSpec` handed to :mod:`goldeneval.retrieval.pipeline`.
"""

from goldeneval.core.corpus import Corpus, Document, load_corpus
from goldeneval.core.regression import RegressionThresholds, detect_regression
from goldeneval.retrieval.evaluation import RetrievalRun, evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm, load_golden_set
from goldeneval.retrieval.retrievers import Retriever, RetrieverContext, build_retriever
from goldeneval.retrieval.sets import resolve_golden_set
from goldeneval.retrieval.spec import RunSpec
from goldeneval.store import ResultStore

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
