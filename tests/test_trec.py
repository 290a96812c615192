"""TREC interop: export a stored run and a golden set, read a run file back through
``goldeneval.trec_run``, and get the same hits."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import pytrec_eval
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import RetrieverError, StoreError
from goldeneval.retrieval.details import DocumentColumns
from goldeneval.retrieval.golden import GoldenQuestion, GoldenQuestionSet, QuestionForm
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.trec import TrecRunError, read_trec_run

SET = GoldenQuestionSet(
    id="tiny",
    questions=(
        GoldenQuestion(id="q1", text="alpha", form=QuestionForm.MATCH, expected=frozenset({"a"})),
        GoldenQuestion(id="q2", text="beta", form=QuestionForm.GAP, expected=frozenset({"b", "c"})),
        GoldenQuestion(id="q3", text="gamma", form=QuestionForm.GAP, expected=frozenset()),
    ),
)


def cli(*args: str) -> Any:
    result = CliRunner().invoke(main, list(args))
    return result


def evaluate_json(store: Path, cache: Path, retriever: str, *extra: str) -> dict[str, Any]:
    result = cli(
        "retrieval", "--set", "transit-sample", "--retriever", retriever, "--store", str(store),
        "--cache-dir", str(cache), "--format", "json", "--no-progress", *extra,
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    outcome: dict[str, Any] = json.loads(result.output)
    return outcome


def hits(outcome: dict[str, Any]) -> list[tuple[Any, ...]]:
    return [(q["id"], q["documents"], q["top1_hit"], q["top3_hit"], q["metrics"]) for q in outcome["questions"]]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_stored_run_exported_to_trec_and_replayed_gives_identical_hits(tmp_path: Path) -> None:
    store, cache, run_file = tmp_path / "results.duckdb", tmp_path / "cache", tmp_path / "lexical.run"
    original = evaluate_json(store, cache, "goldeneval.lexical")
    exported = cli("export-run", original["run"]["id"], "--trec", str(run_file), "--store", str(store))
    assert exported.exit_code == 0, exported.output
    replayed = evaluate_json(store, cache, "goldeneval.trec_run", "--option", f"run={run_file}")
    assert hits(replayed) == hits(original)
    assert replayed["aggregates"] == original["aggregates"]
    assert len(hits(original)) == 81


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_exported_run_and_qrels_give_trec_eval_the_stored_ndcg(tmp_path: Path) -> None:
    store, run_file, qrels_file = tmp_path / "results.duckdb", tmp_path / "x.run", tmp_path / "x.qrels"
    original = evaluate_json(store, tmp_path / "cache", "goldeneval.lexical")
    cli("export-run", original["run"]["id"], "--trec", str(run_file), "--store", str(store))
    assert cli("export-qrels", "--set", "transit-sample", "--out", str(qrels_file)).exit_code == 0
    qrels: dict[str, dict[str, int]] = {}
    for line in qrels_file.read_text().splitlines():
        query_id, _, doc_id, relevance = line.split()
        qrels.setdefault(query_id, {})[doc_id] = int(relevance)
    run = {q: {d: float(10 - r) for r, d in enumerate(docs)} for q, docs in read_trec_run(run_file).items()}
    measured = pytrec_eval.RelevanceEvaluator(qrels, {"ndcg_cut.10"}).evaluate(run)
    stored = {q["id"]: q["metrics"]["ndcg@10"] for q in original["questions"] if q["metrics"]}
    assert {q: pytest.approx(stored[q], abs=1e-9) for q in measured} == {
        q: v["ndcg_cut_10"] for q, v in measured.items()
    }
    assert len(measured) > 60


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_run_file_lists_rank_score_and_the_retriever_as_tag(tmp_path: Path) -> None:
    store, run_file = tmp_path / "results.duckdb", tmp_path / "x.run"
    original = evaluate_json(store, tmp_path / "cache", "goldeneval.lexical")
    result = cli("export-run", original["run"]["id"], "--trec", str(run_file), "--store", str(store))
    lines = run_file.read_text().splitlines()
    assert result.output == f"wrote {len(lines)} lines to {run_file}\n"
    first = next(q for q in sorted(original["questions"], key=lambda q: q["id"]) if q["documents"])
    assert lines[0] == f"{first['id']} Q0 {first['documents'][0]} 1 {len(first['documents'])} goldeneval.lexical"


def test_qrels_give_every_expected_document_relevance_one(tmp_path: Path, write_set: Any) -> None:
    path = write_set("tiny.yaml", SET.model_dump(mode="json", exclude_defaults=True))
    out = tmp_path / "tiny.qrels"
    assert cli("export-qrels", "--set", str(path), "--out", str(out)).exit_code == 0
    assert out.read_text() == "q1 0 a 1\nq2 0 b 1\nq2 0 c 1\n"


def test_exporting_from_a_store_that_does_not_exist_fails_with_exit_code_3_and_creates_none(tmp_path: Path) -> None:
    result = cli("export-run", "nope", "--trec", str(tmp_path / "x"), "--store", str(tmp_path / "s.duckdb"))
    assert result.exit_code == ExitCode.INVALID_INPUT
    missing = tmp_path / "s.duckdb"
    assert result.stderr == f"goldeneval: error: run 'nope' not found: the store {missing} does not exist\n"
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_exporting_an_unknown_run_fails_with_exit_code_3(tmp_path: Path) -> None:
    store = tmp_path / "results.duckdb"
    evaluate_json(store, tmp_path / "cache", "goldeneval.lexical")
    result = cli("export-run", "nope", "--trec", str(tmp_path / "x"), "--store", str(store))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == f"goldeneval: error: run 'nope' not found in {store} (list runs with: goldeneval runs)\n"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_is_exported_by_the_short_id_goldeneval_runs_prints(tmp_path: Path) -> None:
    store, run_file = tmp_path / "results.duckdb", tmp_path / "x.run"
    original = evaluate_json(store, tmp_path / "cache", "goldeneval.lexical")
    listing = cli("runs", "--store", str(store))
    short = listing.output.splitlines()[2].split()[0]
    assert original["run"]["id"].startswith(short) and short != original["run"]["id"]
    assert cli("export-run", short, "--trec", str(run_file), "--store", str(store)).exit_code == ExitCode.OK
    assert run_file.read_text().count("\n") > 0


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_metadata_only_run_cannot_be_exported(tmp_path: Path) -> None:
    store = tmp_path / "results.duckdb"
    original = evaluate_json(store, tmp_path / "cache", "goldeneval.lexical", "--privacy", "metadata_only")
    result = cli("export-run", original["run"]["id"], "--trec", str(tmp_path / "x"), "--store", str(store))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "was stored with privacy mode metadata_only: it holds no document ids" in result.output


def test_a_run_file_is_ordered_by_score_not_by_line(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 low 2 0.5 t\nq1 Q0 high 1 2.5 t\nq2 Q0 x 1 1 t\n")
    assert read_trec_run(path) == {"q1": ["high", "low"], "q2": ["x"]}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("q1 Q0 a 1 1\n", "line 1: expected 6 columns (qid Q0 docid rank score tag), found 5"),
        ("q1 Q0 a 1 one t\n", "line 1: score 'one' is not a number"),
        ("q1 Q0 a 1 1 t\nq1 Q0 a 2 0 t\n", "line 2: query 'q1' lists document 'a' twice"),
        ("q1 Q0 a 1 nan t\n", "line 1: score 'nan' is not a finite number"),
    ],
    ids=["columns", "score", "duplicate", "nan"],
)
def test_a_bad_run_file_names_the_file_and_line(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.run"
    path.write_text(content)
    with pytest.raises(TrecRunError) as raised:
        read_trec_run(path)
    assert str(raised.value) == f"{path}: {message}"


def test_a_question_missing_from_the_run_file_gets_an_empty_ranking(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 a 1 1 t\n")
    retriever = build_retriever(
        "goldeneval.trec_run", RetrieverContext(None, tmp_path, {"run": str(path)}, golden_set=SET)
    )
    assert (retriever.retrieve("alpha", 30), retriever.retrieve("beta", 30)) == (["a"], [])


def test_a_question_text_the_set_does_not_hold_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 a 1 1 t\n")
    retriever = build_retriever(
        "goldeneval.trec_run", RetrieverContext(None, tmp_path, {"run": str(path)}, golden_set=SET)
    )
    with pytest.raises(RetrieverError, match="the golden set has no question with this text"):
        retriever.retrieve("delta", 30)


def test_trec_run_needs_the_golden_set(tmp_path: Path) -> None:
    path = tmp_path / "r.run"
    path.write_text("q1 Q0 a 1 1 t\n")
    with pytest.raises(RetrieverError, match="needs the golden set to map question text to query ids"):
        build_retriever("goldeneval.trec_run", RetrieverContext(None, tmp_path, {"run": str(path)}))


def test_trec_run_needs_the_run_option(tmp_path: Path) -> None:
    with pytest.raises(RetrieverError, match="needs option run=PATH"):
        build_retriever("goldeneval.trec_run", RetrieverContext(None, tmp_path, golden_set=SET))


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_run_file_holds_every_stored_document_to_the_measurement_depth(tmp_path: Path) -> None:
    store, run_file = tmp_path / "results.duckdb", tmp_path / "x.run"
    original = evaluate_json(store, tmp_path / "cache", "goldeneval.lexical", "--metrics", "recall@50")
    cli("export-run", original["run"]["id"], "--trec", str(run_file), "--store", str(store))
    per_query: dict[str, int] = {}
    for line in run_file.read_text().splitlines():
        per_query[line.split()[0]] = per_query.get(line.split()[0], 0) + 1
    depths = {q["id"]: q["depth"] for q in original["questions"] if q["depth"]}
    assert per_query == depths
    assert max(depths.values()) == 50


UNSORTED = [
    {"id": "q10", "text": "ten", "form": "MATCH", "expected": ["d3"]},
    {"id": "q2", "text": "two", "form": "GAP", "expected": ["d1"]},
    {"id": "q1", "text": "one", "form": "MATCH", "expected": ["d2"]},
    {"id": "q3", "text": "three", "form": "MATCH", "expected": ["d9"]},
]
RANKINGS: dict[str, list[str]] = {
    "ten": ["d3#0", "d1#0", "d3#1", "d7#0"],
    "two": ["d1#2", "d2#0"],
    "one": ["d2#0", "d9#0", "d1#0"],
    "three": [],
}


class _Fixed:
    def __init__(self, rankings: dict[str, list[str]]) -> None:
        self.rankings = rankings

    def retrieve(self, question: str, limit: int) -> list[str]:
        if question == "boom":
            raise RuntimeError("failed")
        return self.rankings[question][:limit]


RETRIEVED = dict(RANKINGS)


def fixed_factory(context: object) -> _Fixed:
    return _Fixed(RETRIEVED)


def _stored_run(tmp_path: Path, write_set: Any, questions: list[dict[str, Any]]) -> tuple[Path, str]:
    path = write_set("unsorted.yaml", {"id": "unsorted", "questions": questions})
    store = tmp_path / "results.duckdb"
    result = cli(
        "retrieval", "--set", str(path), "--retriever", f"{__name__}:fixed_factory", "--store", str(store),
        "--format", "json", "--no-progress",
    )  # fmt: skip
    assert result.exit_code in (ExitCode.OK, ExitCode.INCOMPLETE), result.output
    run_id: str = json.loads(result.stdout)["run"]["id"]
    return store, run_id


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_questions_stored_out_of_id_order_are_exported_in_it(tmp_path: Path, write_set: Any) -> None:
    """The lines come question by question in id order, each question's distinct documents
    best first, whatever order the set holds them in; an empty ranking has no line."""
    store, run_id = _stored_run(tmp_path, write_set, UNSORTED)
    out = tmp_path / "x.run"
    assert cli("export-run", run_id, "--trec", str(out), "--store", str(store)).output == f"wrote 8 lines to {out}\n"
    tag = f"{__name__}:fixed_factory"
    expected = [
        "q1 Q0 d2 1 3", "q1 Q0 d9 2 2", "q1 Q0 d1 3 1",
        "q10 Q0 d3 1 3", "q10 Q0 d1 2 2", "q10 Q0 d7 3 1",
        "q2 Q0 d1 1 2", "q2 Q0 d2 2 1",
    ]  # fmt: skip
    assert out.read_text() == "".join(f"{line} {tag}\n" for line in expected)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize(
    ("questions", "rankings", "message"),
    [
        (UNSORTED, {"two": ["d1#0", "d 4#0"]}, "question 'q2': document id 'd 4' cannot be written"),
        (
            [*UNSORTED, {"id": "q 0", "text": "zero", "form": "GAP", "expected": []}],
            {"zero": []},
            "question id 'q 0' cannot be written",
        ),
    ],
    ids=["document", "question"],
)
def test_an_id_a_trec_file_cannot_hold_refuses_the_run_and_leaves_the_file_as_it_was(
    tmp_path: Path, write_set: Any, monkeypatch: pytest.MonkeyPatch, questions: Any, rankings: Any, message: str
) -> None:
    """Every id is checked before the first line is written (the first refused one in the
    order the lines would come): the command fails with exit 3 and an existing file keeps
    what it held."""
    monkeypatch.setattr(sys.modules[__name__], "RETRIEVED", {**RANKINGS, **rankings})
    store, run_id = _stored_run(tmp_path, write_set, questions)
    out = tmp_path / "x.run"
    out.write_text("what was there\n")
    result = cli("export-run", run_id, "--trec", str(out), "--store", str(store))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert f"goldeneval: error: {message} to a TREC file: it is empty or holds whitespace" in result.stderr
    assert out.read_text() == "what was there\n"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_that_cannot_be_decoded_part_way_is_refused_before_the_file_is_opened(
    tmp_path: Path, write_set: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored documents are decoded to the last byte before the first line is written:
    codes that fail in a later block are a store error (exit 5) and the file is as it was."""
    store, run_id = _stored_run(tmp_path, write_set, UNSORTED)
    out = tmp_path / "x.run"
    out.write_text("what was there\n")
    code_blocks = DocumentColumns.code_blocks

    def failing(self: DocumentColumns) -> Iterator[Any]:
        yield next(code_blocks(self))
        raise StoreError("run r: details field 'questions.documents.codes': cannot be decoded: broken")

    monkeypatch.setattr(DocumentColumns, "code_blocks", failing)
    result = cli("export-run", run_id, "--trec", str(out), "--store", str(store))
    assert result.exit_code == ExitCode.STORE, result.output
    assert "cannot be decoded: broken" in result.stderr
    assert out.read_text() == "what was there\n"


def test_an_existing_file_is_written_in_place_keeping_its_mode(tmp_path: Path, write_set: Any) -> None:
    path = write_set("tiny.yaml", SET.model_dump(mode="json", exclude_defaults=True))
    out = tmp_path / "private.qrels"
    out.write_text("old\n")
    out.chmod(0o600)
    inode = out.stat().st_ino
    assert cli("export-qrels", "--set", str(path), "--out", str(out)).exit_code == 0
    assert (out.stat().st_mode & 0o777, out.stat().st_ino) == (0o600, inode)
    assert out.read_text() == "q1 0 a 1\nq2 0 b 1\nq2 0 c 1\n"


def test_qrels_written_through_a_link_land_in_the_file_it_names(tmp_path: Path, write_set: Any) -> None:
    path = write_set("tiny.yaml", SET.model_dump(mode="json", exclude_defaults=True))
    real, link = tmp_path / "real.qrels", tmp_path / "link.qrels"
    real.write_text("old\n")
    link.symlink_to(real)
    assert cli("export-qrels", "--set", str(path), "--out", str(link)).exit_code == 0
    assert link.is_symlink() and real.read_text() == "q1 0 a 1\nq2 0 b 1\nq2 0 c 1\n"
