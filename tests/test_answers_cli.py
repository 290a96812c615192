"""`goldeneval answers`: retrieval-augmented answers on the bundled transit sample, graded
against each question's answer_gist, split by retrieval hit and miss, stored beside the
retrieval run; and the extractive model on its own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from click.testing import CliRunner, Result

from goldeneval.answers.extractive import best_passage, passages
from goldeneval.cli import main
from goldeneval.core.corpus import Document
from goldeneval.core.kinds import SlicedDetails
from goldeneval.store import ResultStore
from tests.chat_server import answer, chat_server, last_user_message


def _answers(tmp_path: Path, *extra: str) -> Result:
    args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra]
    return CliRunner().invoke(main, args)


@pytest.fixture(scope="module")
def transit(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    root = tmp_path_factory.mktemp("answers")
    result = _answers(root, "--model", "goldeneval.extractive", "--format", "json")
    assert result.exit_code == 0, result.output
    return root, json.loads(result.stdout)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_answer_quality_is_split_by_retrieval_hit_and_miss(transit: tuple[Path, dict[str, Any]]) -> None:
    _, document = transit
    answers = document["answers"]
    by_retrieval = answers["aggregates"]["by_retrieval"]
    assert set(by_retrieval) == {"hit", "miss"}
    hits = [p for p in answers["prompts"] if p["retrieval_hit"]]
    assert by_retrieval["hit"]["prompts"] == len(hits) == document["retrieval"]["aggregates"]["overall"]["top3_hits"]
    assert by_retrieval["hit"]["prompts"] + by_retrieval["miss"]["prompts"] == 81
    # The extractive baseline can only answer from what retrieval found.
    assert by_retrieval["hit"]["pass_rate"] > by_retrieval["miss"]["pass_rate"]


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_the_answer_run_is_stored_beside_the_retrieval_run(transit: tuple[Path, dict[str, Any]]) -> None:
    root, document = transit
    runs = {run.grader: run for run in ResultStore(root / "s.duckdb").list_runs()}
    assert set(runs) == {"retrieval_hit_rate", "answer_deterministic"}
    assert runs["answer_deterministic"].model == "goldeneval.lexical+goldeneval.extractive"
    assert document["answers"]["run"]["retrieval_run_id"] == runs["retrieval_hit_rate"].id
    assert document["gate"] == "pass"


@pytest.mark.slow  # its module fixture's run is over the limit; whichever test comes first pays it (#44)
def test_the_answer_benchmark_differs_from_the_retrieval_one_but_both_are_known(
    transit: tuple[Path, dict[str, Any]],
) -> None:
    _, document = transit
    retrieval = document["retrieval"]["run"]["benchmark_fingerprint"]
    answers = document["answers"]["run"]["benchmark_fingerprint"]
    assert retrieval and answers and retrieval != answers
    assert document["answers"]["grading"]["protocol"].startswith("retrieval-hit-rate/v1+answer-grading/v1(depth=3)")


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_second_identical_answers_run_passes_the_gate(tmp_path: Path) -> None:
    assert _answers(tmp_path, "--model", "goldeneval.extractive").exit_code == 0
    result = _answers(tmp_path, "--model", "goldeneval.extractive", "--fail-on-regression")
    assert result.exit_code == 0, result.output
    assert "Answer verdict: pass" in result.output
    assert "Answer quality by retrieval (top-3 hit or miss):" in result.output


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_chat_model_answers_from_the_retrieved_documents(tmp_path: Path) -> None:
    def reply(body: dict[str, Any]) -> Any:
        prompt = last_user_message(body)
        if prompt.endswith("day ticket for zones A and B cost?"):
            return answer("Per the context: 7.80 under the 2026 tariff (the archived 2025 page says 7.20).")
        return answer("I do not know.")

    with chat_server(default=reply) as server:
        result = _answers(
            tmp_path,
            "--model", "goldeneval.openai",
            "--model-option", f"base_url={server.base_url}",
            "--model-option", "model=tiny",
            "--format", "json",
        )  # fmt: skip
    assert result.exit_code == 0, result.output
    first = last_user_message(server.requests[0])
    assert first.startswith("Context:\n\n[1] ") and first.endswith(
        "Question: How much does a day ticket for zones A and B cost?"
    )
    assert len(server.requests) == 81
    prompts = json.loads(result.stdout)["answers"]["prompts"]
    assert prompts[0]["answer"].startswith("Per the context: 7.80") and prompts[0]["passed"] is True
    assert prompts[1]["answer"] == "I do not know." and prompts[1]["passed"] is False


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_stores_no_answer_and_no_document(tmp_path: Path) -> None:
    result = _answers(tmp_path, "--model", "goldeneval.extractive", "--privacy", "metadata_only")
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(tmp_path / "s.duckdb"), read_only=True) as con:
        details = [row[0] for row in con.execute("SELECT details FROM runs").fetchall()]
    dumped = "\n".join(details)
    assert "fares/day-ticket" not in dumped
    assert "day ticket" not in dumped.lower()
    assert '"retrieval_hit": true' in dumped.replace('"retrieval_hit":true', '"retrieval_hit": true')


def test_a_set_without_answer_gists_is_invalid_input_and_stores_nothing(tmp_path: Path) -> None:
    path = tmp_path / "nogist.yaml"
    path.write_text("id: nogist\ncorpus: corpus\nquestions:\n  - {id: q, text: hi there, form: MATCH, expected: [a]}\n")
    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "a.md").write_text("# A\nhi there")
    result = CliRunner().invoke(
        main,
        ["answers", "--set", str(path), "--retriever", "goldeneval.lexical", "--model", "goldeneval.extractive",
         "--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache")],
    )  # fmt: skip
    assert result.exit_code == 3
    assert "set 'nogist': no question has an answer_gist" in result.stderr
    assert not (tmp_path / "s.duckdb").exists()


def test_the_extractive_model_picks_the_paragraph_sharing_most_question_terms() -> None:
    document = Document(
        "d", "Fares", "# Fares\n\nBuses run every ten minutes.\n\nA day ticket costs 7.80 in zones A and B."
    )
    assert passages(document) == ["Buses run every ten minutes.", "A day ticket costs 7.80 in zones A and B."]
    assert best_passage("What does a day ticket cost?", [document]) == "A day ticket costs 7.80 in zones A and B."
    assert best_passage("zeppelin", [document]) == ""


def test_the_extractive_model_without_a_corpus_is_invalid_input(tmp_path: Path) -> None:
    set_path = tmp_path / "p.yaml"
    set_path.write_text("id: p\nprompts:\n  - {id: a, prompt: hi, reference: hello}\n")
    result = CliRunner().invoke(
        main, ["prompts", "--set", str(set_path), "--model", "goldeneval.extractive", "--store", str(tmp_path / "s.db")]
    )
    assert result.exit_code == 3
    assert "model 'goldeneval.extractive' needs a corpus" in result.stderr


@pytest.mark.slow  # its module fixture's run is over the limit; whichever test comes first pays it (#44)
def test_each_stored_slice_holds_the_questions_slice_of_names(transit: tuple[Path, dict[str, Any]]) -> None:
    """The gate tests a slice's drop on the questions ``slice_of`` puts in it (``--max-p``): for
    both kinds they must be exactly the questions each stored slice counted."""
    root, document = transit
    store = ResultStore(root / "s.duckdb")
    for kind_run in (document["answers"]["run"], document["retrieval"]["run"]):
        stored = store.get_run(kind_run["id"])
        assert stored is not None
        slices = store.slices(stored.id)
        assert {s.kind for s in slices} >= {"form", "hard_class"}
        details = stored.details
        assert isinstance(details, SlicedDetails)
        for rates in slices:
            labels = details.slice_of(rates.kind)
            assert labels is not None
            assert sum(1 for value in labels.values() if value == rates.value) == rates.questions, rates
        assert details.slice_of("no such kind") is None
