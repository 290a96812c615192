"""The details record the evaluator writes: valid as stored, and one JSON text."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from goldeneval.details import RetrievalDetails, parse_details
from goldeneval.evaluation import evaluate_retrieval
from goldeneval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.privacy import PrivacyMode


class _Mixed:
    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        if question.endswith("2"):
            raise KeyError("doc-secret")
        return ["a#0", "a#1", "b", "c"]


GOLDEN = GoldenQuestionSet(
    id="details",
    questions=tuple(
        GoldenQuestion(
            id=f"q{i}",
            text=f"question {i}",
            form=QuestionForm.GAP if i % 2 else QuestionForm.MATCH,
            expected=frozenset() if i == 3 else frozenset({"b"}),
            hard_class="prose-free" if i == 1 else None,
        )
        for i in range(4)
    ),
)


@pytest.mark.parametrize("privacy", list(PrivacyMode))
def test_the_details_the_evaluator_builds_validate_and_serialise_as_one_text(privacy: PrivacyMode) -> None:
    """The evaluator builds its per-question records without re-validating them; whatever it
    builds must pass the validation a stored run is read back with, and the one-string JSON the
    store writes must be exactly the dict form."""
    details = evaluate_retrieval(GOLDEN, _Mixed(), "mixed").details(privacy)
    text = details.to_json_text()
    assert json.loads(text) == details.to_json()
    again = parse_details(json.loads(text), "test")
    assert isinstance(again, RetrievalDetails)
    assert again == RetrievalDetails.model_validate(details.to_json())
    assert [q.status for q in again.questions] == ["ok", "ok", "error", "ok"]
    withheld = privacy is PrivacyMode.METADATA_ONLY
    assert ("documents" in json.loads(text)["questions"][0]) is not withheld
    assert ("doc-secret" in text) is not withheld
