"""The measured question form: vocabulary overlap with the target documents (ADR-072's MATCH / GAP).

ADR-072 defines a ``MATCH`` question as one that shares vocabulary with its target document and
a ``GAP`` question as an everyday rewording with little vocabulary overlap.  This module is the
one place that measures it; the BEIR import derives forms with it and ``goldeneval lint`` checks
hand-written forms against it.  The rule, :data:`OVERLAP_RULE` (``vocabulary-overlap/v1``):

    overlap = |T(q) & T(targets)| / |T(q)|

where T is the shared analyser's content terms (lower-case tokens of two or more word
characters, its English stop words removed, Snowball-stemmed: :func:`goldeneval.core.text.content_terms`)
and T(targets) the union over the title and text of every target document.  ``MATCH`` when
overlap >= :data:`FORM_OVERLAP_THRESHOLD` (0.5: at least half of the question's content terms
appear in a target), else ``GAP``.  A question without content terms is ``GAP``; a question
without targets (a no-answer question) has no measured form.  The rule is deterministic, and
any change to it (the analyser, the threshold) is a new version of :data:`OVERLAP_RULE`.
"""

from __future__ import annotations

from collections.abc import Iterable

from goldeneval.core.text import content_terms
from goldeneval.retrieval.golden import QuestionForm

__all__ = [
    "FORM_OVERLAP_THRESHOLD",
    "OVERLAP_RULE",
    "form_of_overlap",
    "measured_form",
    "overlap_of",
    "vocabulary_overlap",
]

OVERLAP_RULE = "vocabulary-overlap/v1"
"""The name and version of the rule this module applies."""
FORM_OVERLAP_THRESHOLD = 0.5
"""The least overlap of a ``MATCH`` question."""


def overlap_of(terms: set[str], target_terms: Iterable[set[str]]) -> float:
    """The share of ``terms`` found in the union of ``target_terms`` (0 without terms)."""
    if not terms:
        return 0.0
    return len(terms & set().union(*target_terms)) / len(terms)


def form_of_overlap(overlap: float) -> QuestionForm:
    return QuestionForm.MATCH if overlap >= FORM_OVERLAP_THRESHOLD else QuestionForm.GAP


def vocabulary_overlap(question: str, target_texts: list[str]) -> float:
    """The overlap of ``question`` with the targets' texts (each a title and text together)."""
    return overlap_of(content_terms(question), [content_terms(text) for text in target_texts])


def measured_form(question: str, target_texts: list[str]) -> QuestionForm:
    """The form :data:`OVERLAP_RULE` gives ``question`` against its targets' texts."""
    return form_of_overlap(vocabulary_overlap(question, target_texts))
