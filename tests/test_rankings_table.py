"""The ``retriever_rankings`` table built column by column (issue 26) holds exactly the rows the
definition gives: one per returned id, in rank order, with its document and whether it is
expected, for chunked ids, repeated documents, errors, empty rankings and no-answer questions."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any
from unittest import mock

import pytest

from goldeneval.core.forms import QuestionForm
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval import tables
from goldeneval.retrieval.evaluation import RetrievalRun, evaluate_retrieval
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet
from goldeneval.retrieval.retrievers.base import document_id_mapper
from goldeneval.retrieval.tables import rankings_table


def _definition(run: RetrievalRun, privacy: PrivacyMode, separator: str) -> dict[str, list[Any]]:
    """The table row by row, as its docstring defines it."""
    to_document = document_id_mapper(separator)
    rows: dict[str, list[Any]] = {n: [] for n in ("question_id", "rank", "returned_id", "document_id", "is_target")}
    rows["latency_ms"] = []
    for result in run.results:
        for rank, returned_id in enumerate(result.returned_ids, start=1):
            document = to_document(returned_id)
            rows["question_id"].append(result.question_id)
            rows["rank"].append(rank)
            rows["returned_id"].append(returned_id)
            rows["document_id"].append(document)
            rows["is_target"].append(document in result.expected)
            rows["latency_ms"].append(result.latency_ms)
    if privacy is PrivacyMode.METADATA_ONLY:
        del rows["returned_id"], rows["document_id"]
    return rows


class _Scripted:
    def __init__(self, rankings: dict[str, Sequence[str]]) -> None:
        self.rankings = rankings

    def retrieve(self, question: str, limit: int) -> Sequence[str]:
        ranking = self.rankings[question]
        if ranking == ["boom"]:
            raise RuntimeError("retriever failed")
        return list(ranking)[:limit]


def _random_run(seed: int) -> RetrievalRun:
    rng = random.Random(seed)
    documents = [f"doc{j}" for j in range(rng.randint(1, 40))]
    questions: list[GoldenQuestion] = []
    rankings: dict[str, Sequence[str]] = {}
    for i in range(rng.randint(1, 30)):
        expected = frozenset(rng.sample(documents, rng.randint(0, min(3, len(documents)))))
        questions.append(GoldenQuestion(id=f"q{i}", text=f"t{i}", form=QuestionForm.MATCH, expected=expected))
        kind = rng.random()
        if kind < 0.1:
            rankings[f"t{i}"] = ["boom"]
        elif kind < 0.2:
            rankings[f"t{i}"] = []
        else:
            rankings[f"t{i}"] = [f"{rng.choice(documents)}#{rng.randint(0, 3)}" for _ in range(rng.randint(1, 25))]
    golden = GoldenQuestionSet(id="r", questions=tuple(questions))
    return evaluate_retrieval(golden, _Scripted(rankings), "scripted", to_document=document_id_mapper("#"))


@pytest.mark.parametrize("block", [tables._TARGET_BLOCK, 7])  # 7: the targets looked up in many blocks
@pytest.mark.parametrize("privacy", list(PrivacyMode))
@pytest.mark.parametrize("seed", range(25))
def test_the_columnar_table_is_the_row_by_row_definition(seed: int, privacy: PrivacyMode, block: int) -> None:
    run = _random_run(seed)
    with mock.patch.object(tables, "_TARGET_BLOCK", block):
        table = rankings_table(run, privacy, document_id_mapper("#"), "run-1")
    expected = _definition(run, privacy, "#")
    assert {name: table.column(name).to_pylist() for name in expected} == expected
    assert [name for name in table.column_names if name in expected] == list(expected)
