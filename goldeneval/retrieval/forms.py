"""The measured question form: MATCH or GAP from a question's vocabulary overlap with its targets.

Sets imported without labelled forms (BEIR folders, TREC qrels) derive each question's form
by one rule, and mark it as derived (``form_derived``)::

    overlap = |T(q) & T(targets)| / |T(q)|

where T is the shared analyser's content terms (lower-case, English stop words removed,
Snowball-stemmed; :mod:`goldeneval.core.text`) and T(targets) the union over the title and
text of every target document.  ``MATCH`` when overlap >= ``FORM_OVERLAP_THRESHOLD`` (0.5: at
least half of the question's content terms appear in a target), else ``GAP``.  A question
without content terms is ``GAP``.  The rule is deterministic: the same files give the same set.
"""

from __future__ import annotations

from collections.abc import Iterable

from goldeneval.core.text import content_terms
from goldeneval.retrieval.golden import QuestionForm

__all__ = ["FORM_OVERLAP_THRESHOLD", "derive_form", "form_of_overlap", "terms_overlap", "vocabulary_overlap"]

FORM_OVERLAP_THRESHOLD = 0.5


def vocabulary_overlap(question: str, target_texts: list[str]) -> float:
    return terms_overlap(content_terms(question), [content_terms(text) for text in target_texts])


def derive_form(question: str, target_texts: list[str]) -> QuestionForm:
    return form_of_overlap(vocabulary_overlap(question, target_texts))


def terms_overlap(terms: set[str], target_terms: Iterable[set[str]]) -> float:
    """The share of ``terms`` found in the union of ``target_terms`` (0 without terms)."""
    if not terms:
        return 0.0
    return len(terms & set().union(*target_terms)) / len(terms)


def form_of_overlap(overlap: float) -> QuestionForm:
    return QuestionForm.MATCH if overlap >= FORM_OVERLAP_THRESHOLD else QuestionForm.GAP
