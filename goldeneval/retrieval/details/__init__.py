"""The typed, versioned record of a retrieval run's details: what the store's ``details`` column holds.

Split by idea, each module below the one that reads it:

* :mod:`~goldeneval.retrieval.details.base` -- what every model shares (frozen, no unknown key);
* :mod:`~goldeneval.retrieval.details.documents` -- :class:`DocumentColumns`, the run's documents
  dictionary-coded and packed;
* :mod:`~goldeneval.retrieval.details.questions` -- :class:`QuestionDetail` (one question) and
  :class:`QuestionColumns` (every question, as columns);
* :mod:`~goldeneval.retrieval.details.record` -- :class:`RetrievalDetails`, the whole record, its
  format versions, and how stored details are read.

Callers import the names from here (the run kind's entry point ``retrieval`` names
``RETRIEVAL_DETAILS`` here too); the modules are where each is defined and explained.
"""

from __future__ import annotations

from goldeneval.retrieval.details.documents import DocumentColumns, code_width
from goldeneval.retrieval.details.questions import QuestionColumns, QuestionDetail
from goldeneval.retrieval.details.record import (
    COLUMNAR_FORMAT_VERSION,
    COVERAGE_FORMAT_VERSION,
    DETAILS_FORMAT_VERSION,
    JUDGED_CUTOFF,
    QUESTIONS_COMPLETION,
    RATE_NAMES,
    RETRIEVAL_DETAILS,
    AggregatesDetail,
    JudgedDetail,
    RateDetail,
    RetrievalDetails,
    parse_details,
    parse_details_json,
    read_verdicts,
    retrieval_details,
)

__all__ = [
    "COLUMNAR_FORMAT_VERSION",
    "COVERAGE_FORMAT_VERSION",
    "DETAILS_FORMAT_VERSION",
    "JUDGED_CUTOFF",
    "QUESTIONS_COMPLETION",
    "RATE_NAMES",
    "RETRIEVAL_DETAILS",
    "AggregatesDetail",
    "DocumentColumns",
    "JudgedDetail",
    "QuestionColumns",
    "QuestionDetail",
    "RateDetail",
    "RetrievalDetails",
    "code_width",
    "parse_details",
    "parse_details_json",
    "read_verdicts",
    "retrieval_details",
]
