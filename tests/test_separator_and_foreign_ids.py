"""One rule for the chunk separator, and run files that name none of the set's queries (issue 41).

An id the separator would cut to nothing (``#frag``) is its own document, as trec_eval reads
it; a judged id holding the separator (expected or judged not relevant) is refused with one
line; a run file with no query of the set is exit 3 naming the file, as trec_eval refuses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
import yaml
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.retrieval.retrievers.base import document_id_mapper

CORPUS = [
    {"_id": "A", "title": "Harbour ferry", "text": "The harbour ferry leaves every twenty minutes."},
    {"_id": "B", "title": "Night bus", "text": "Night buses run hourly after midnight."},
    {"_id": "C", "title": "Lost property", "text": "Report lost items at the office."},
]


def write_set(folder: Path, not_relevant: list[str] | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in CORPUS))
    question: dict[str, Any] = {"id": "q1", "text": "when does the ferry leave", "form": "MATCH", "expected": ["A"]}
    if not_relevant:
        question["not_relevant"] = not_relevant
    other = {"id": "q2", "text": "night buses", "form": "MATCH", "expected": ["B"]}
    path = folder / "set.yaml"
    path.write_text(yaml.safe_dump({"id": "sep", "corpus": "corpus.jsonl", "questions": [question, other]}))
    return path


def replay(tmp_path: Path, set_path: Path, run: str, *extra: str) -> Any:
    run_file = tmp_path / "run.txt"
    run_file.write_text(run)
    args = [
        "retrieval", "--set", str(set_path), "--retriever", "goldeneval.trec_run", "--option", f"run={run_file}",
        "--store", str(tmp_path / "results.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
        "--format", "json", "--metrics", "mrr@10,ndcg@10", *extra,
    ]  # fmt: skip
    return CliRunner().invoke(main, args)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_id_cut_to_nothing_is_its_own_document_as_trec_eval_reads_it(tmp_path: Path) -> None:
    assert document_id_mapper("#")("#frag") == "#frag"
    assert document_id_mapper("#")("A#3") == "A"
    set_path = write_set(tmp_path / "set")
    run = "q1 Q0 #frag 1 3 t\nq1 Q0 #other 2 2 t\nq1 Q0 A 3 1 t\nq2 Q0 B 1 1 t\n"
    result = replay(tmp_path, set_path, run)
    assert result.exit_code == ExitCode.OK, result.output
    questions = {q["id"]: q for q in json.loads(result.stdout)["questions"]}
    assert questions["q1"]["documents"] == ["#frag", "#other", "A"]
    evaluator = pytrec_eval.RelevanceEvaluator({"q1": {"A": 1}}, {"recip_rank", "ndcg_cut_10"})
    expected = evaluator.evaluate({"q1": {"#frag": 3.0, "#other": 2.0, "A": 1.0}})["q1"]
    assert questions["q1"]["metrics"]["mrr@10"] == expected["recip_rank"] == 1 / 3
    assert questions["q1"]["metrics"]["ndcg@10"] == expected["ndcg_cut_10"]


def test_a_judged_negative_holding_the_separator_is_refused_with_one_line(tmp_path: Path) -> None:
    set_path = write_set(tmp_path / "set", not_relevant=["C#1"])
    result = replay(tmp_path, set_path, "q1 Q0 C#1 1 2 t\nq1 Q0 A 2 1 t\n")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == (
        "goldeneval: error: 1 judged document ids of set 'sep' contain the chunk separator '#' (e.g. 'C#1'), "
        "so returned ids cut at it can never match them: pass --chunk-separator '' to keep ids whole, "
        "or another separator\n"
    )
    assert not (tmp_path / "results.duckdb").exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_kept_whole_a_judged_negative_with_the_separator_counts_as_judged(tmp_path: Path) -> None:
    set_path = write_set(tmp_path / "set", not_relevant=["C#1"])
    result = replay(tmp_path, set_path, "q1 Q0 C#1 1 2 t\nq1 Q0 A 2 1 t\nq2 Q0 B 1 1 t\n", "--chunk-separator", "")
    assert result.exit_code == ExitCode.OK, result.output
    q1 = next(q for q in json.loads(result.stdout)["questions"] if q["id"] == "q1")
    assert q1["judged_at"]["judged@1"] == 1.0  # ir_measures' Judged@1: C#1 carries a judgment


def test_a_run_file_of_foreign_query_ids_is_exit_3_naming_the_file(tmp_path: Path) -> None:
    set_path = write_set(tmp_path / "set")
    result = replay(tmp_path, set_path, "301 Q0 A 1 2 t\n302 Q0 B 1 1 t\n")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == (
        f"goldeneval: error: {tmp_path / 'run.txt'}: none of its 2 query ids (e.g. '301', '302') is a query "
        "of set 'sep'; a run file measures a set only through the set's query ids\n"
    )
    assert not (tmp_path / "results.duckdb").exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_foreign_query_ids_beside_known_ones_are_left_out_with_a_warning(tmp_path: Path) -> None:
    set_path = write_set(tmp_path / "set")
    result = replay(tmp_path, set_path, "q1 Q0 A 1 2 t\n301 Q0 B 1 1 t\n")
    assert result.exit_code == ExitCode.OK, result.output
    assert (
        f"{tmp_path / 'run.txt'}: 1 of its 2 query ids are not queries of set 'sep' (e.g. '301'): "
        "left out, as trec_eval leaves them out"
    ) in json.loads(result.stdout)["warnings"]


def test_an_empty_run_file_is_exit_3(tmp_path: Path) -> None:
    set_path = write_set(tmp_path / "set")
    result = replay(tmp_path, set_path, "# nothing\n")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "holds no ranking lines" in result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_corpus_ids_holding_the_separator_are_warned_about(tmp_path: Path) -> None:
    set_path = write_set(tmp_path / "set")
    corpus = tmp_path / "set" / "corpus.jsonl"
    corpus.write_text(corpus.read_text() + json.dumps({"_id": "C#1", "title": "c one", "text": "chunk"}) + "\n")
    result = replay(tmp_path, set_path, "q1 Q0 C#1 1 2 t\nq1 Q0 A 2 1 t\n")
    assert result.exit_code == ExitCode.OK, result.output
    assert (
        "1 document ids of the corpus contain the chunk separator '#': a returned id is cut at it, so each is "
        "read as the id before it; pass --chunk-separator '' to keep ids whole (e.g. 'C#1')"
    ) in json.loads(result.stdout)["warnings"]
