"""Run files from other tools (issue 22): the cases trec_eval's own test files exercise,
reproduced by hand in tests/fixtures/trec_eval/ and, where it can, checked against pytrec_eval."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any, ClassVar

import pytest
import pytrec_eval
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import RetrieverError
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.measurement import MEAN_OVER
from goldeneval.retrieval.retrievers import RetrieverContext, build_retriever
from goldeneval.retrieval.trec import TrecRunError, read_trec_run, read_trec_run_file

FIXTURES = Path(__file__).parent / "fixtures" / "trec_eval"
COLLECTION = FIXTURES / "collection"
MSMARCO = FIXTURES / "msmarco"
MEASURES = {"ndcg@10": "ndcg_cut_10", "mrr@10": "recip_rank", "recall@10": "recall_10"}


def qrels(folder: Path) -> dict[str, dict[str, int]]:
    """The BEIR qrels as trec_eval reads them: every judgement, grade 0 included."""
    judged: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / "test.tsv").open() as rows:
        for query_id, doc_id, grade in list(csv.reader(rows, delimiter="\t"))[1:]:
            judged.setdefault(query_id, {})[doc_id] = int(grade)
    return judged


def trec_run(path: Path) -> dict[str, dict[str, float]]:
    """The run as pytrec_eval takes it: the file's scores (it orders ties as trec_eval does)."""
    run: dict[str, dict[str, float]] = {}
    for line in path.read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            query_id, _, doc_id, _, score, *_ = line.split()
            run.setdefault(query_id, {})[doc_id] = float(score)
    return run


def pytrec(folder: Path, run_file: Path) -> dict[str, dict[str, float]]:
    evaluator = pytrec_eval.RelevanceEvaluator(qrels(folder), set(MEASURES.values()))
    results: dict[str, dict[str, float]] = evaluator.evaluate(trec_run(run_file))
    return results


def evaluate(tmp_path: Path, folder: Path, run_file: Path, *extra: str) -> Any:
    args = [
        "retrieval", "--set", str(folder), "--retriever", "goldeneval.trec_run",
        "--option", f"run={run_file}", "--store", str(tmp_path / "results.duckdb"),
        "--cache-dir", str(tmp_path / "cache"), "--format", "json", "--no-progress",
        "--metrics", ",".join(MEASURES), *extra,
    ]  # fmt: skip
    return CliRunner().invoke(main, args)


def outcome(tmp_path: Path, folder: Path, run_file: Path, *extra: str) -> dict[str, Any]:
    result = evaluate(tmp_path, folder, run_file, *extra)
    assert result.exit_code == ExitCode.OK, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def per_question(document: dict[str, Any]) -> dict[str, dict[str, float]]:
    return {q["id"]: q["metrics"] for q in document["questions"] if q["metrics"]}


# ---------------------------------------------------------------- 1. ties: docno descending


def test_tied_scores_are_ordered_by_document_id_descending_ignoring_the_rank_column() -> None:
    assert read_trec_run(FIXTURES / "ties.run") == {"q1": ["D3", "D2", "D1", "D4"], "q2": ["D5", "D2"], "q3": ["D4"]}


def test_as_given_orders_tied_scores_by_the_rank_column() -> None:
    rankings = read_trec_run(FIXTURES / "ties.run", "as_given")
    assert rankings == {"q1": ["D1", "D2", "D3", "D4"], "q2": ["D2", "D5"], "q3": ["D4"]}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_tied_scores_give_trec_eval_s_values(tmp_path: Path) -> None:
    measured = per_question(outcome(tmp_path, COLLECTION, FIXTURES / "ties.run"))
    reference = pytrec(COLLECTION, FIXTURES / "ties.run")
    assert set(measured) == {"q1", "q2"}
    for query_id, values in measured.items():
        for name, measure in MEASURES.items():
            assert values[name] == pytest.approx(reference[query_id][measure], abs=1e-9), (query_id, name)
    assert measured["q2"]["mrr@10"] == 0.5  # D5 before D2: trec_eval's order, not the rank column's


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_order_option_selects_as_given_and_changes_the_variant(tmp_path: Path) -> None:
    trec = outcome(tmp_path, COLLECTION, FIXTURES / "ties.run")
    given = outcome(tmp_path, COLLECTION, FIXTURES / "ties.run", "--option", "order=as_given")
    assert per_question(given)["q2"]["mrr@10"] == 1.0
    assert given["run"]["provenance"]["pipeline_identity"].endswith(",order=as_given)")
    assert not trec["run"]["provenance"]["pipeline_identity"].endswith(",order=as_given)")


def test_an_unknown_order_is_an_error(tmp_path: Path) -> None:
    context = RetrieverContext(
        None, tmp_path, {"run": str(FIXTURES / "ties.run"), "order": "rank"}, golden_set=load_beir_set(COLLECTION)
    )
    with pytest.raises(RetrieverError, match=r"option 'order': expected one of trec_eval, as_given, got 'rank'"):
        build_retriever("goldeneval.trec_run", context)


# ---------------------------------------------------------------- 2. files trec_eval reads


def test_comments_extra_columns_and_non_integer_ranks_are_read_as_trec_eval_reads_them() -> None:
    run = read_trec_run_file(FIXTURES / "tolerant.run")
    assert run.rankings == {"q1": ["D3", "D1"], "q2": ["D5", "D2"], "q3": ["D4"]}
    assert (run.comment_lines, run.extra_column_lines, run.non_integer_ranks) == (2, 2, 2)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_what_the_reading_passed_over_is_one_warning_with_the_counts(tmp_path: Path) -> None:
    result = evaluate(tmp_path, COLLECTION, FIXTURES / "tolerant.run")
    assert result.exit_code == ExitCode.OK, result.output
    expected = (
        f"{FIXTURES / 'tolerant.run'}: 2 comment lines (#) skipped; 2 lines with columns after the sixth, "
        "ignored; 2 lines with a non-integer rank (the rank is not read), as trec_eval reads them"
    )
    assert json.loads(result.stdout)["warnings"] == [expected]
    assert result.stderr.count("goldeneval: warning:") == 1
    assert f"goldeneval: warning: {expected}\n" in result.stderr
    reference = pytrec(COLLECTION, FIXTURES / "tolerant.run")
    for query_id, values in per_question(json.loads(result.stdout)).items():
        assert values["ndcg@10"] == pytest.approx(reference[query_id]["ndcg_cut_10"], abs=1e-9)


def test_a_well_formed_run_file_gives_no_warning() -> None:
    assert read_trec_run_file(FIXTURES / "ties.run").warning() is None


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("q1 Q0 D1 1 1\n", "line 1: expected 6 columns (qid Q0 docid rank score tag), found 5"),
        ("# note\nq1 Q0 D1 1 high t extra\n", "line 2: score 'high' is not a number"),
    ],
    ids=["five-columns", "non-numeric-score"],
)
def test_what_is_really_malformed_is_still_refused(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.run"
    path.write_text(content)
    with pytest.raises(TrecRunError) as raised:
        read_trec_run(path)
    assert str(raised.value) == f"{path}: {message}"


# ---------------------------------------------------------------- 3. ids holding the separator


def test_expected_ids_holding_the_chunk_separator_fail_with_one_line(tmp_path: Path) -> None:
    result = evaluate(tmp_path, MSMARCO, FIXTURES / "msmarco.run")
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == (
        f"goldeneval: error: 2 judged document ids of set {load_beir_set(MSMARCO).id!r} contain the chunk "
        "separator '#' (e.g. 'D100#1'), so returned ids cut at it can never match them: pass "
        "--chunk-separator '' to keep ids whole, or another separator\n"
    )
    assert not (tmp_path / "results.duckdb").exists()


def test_the_check_holds_for_every_retriever(tmp_path: Path) -> None:
    args = [
        "retrieval", "--set", str(MSMARCO), "--retriever", "goldeneval.lexical",
        "--store", str(tmp_path / "results.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "contain the chunk separator '#'" in result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_empty_separator_keeps_the_ids_whole_and_scores_as_trec_eval(tmp_path: Path) -> None:
    measured = per_question(outcome(tmp_path, MSMARCO, FIXTURES / "msmarco.run", "--chunk-separator", ""))
    reference = pytrec(MSMARCO, FIXTURES / "msmarco.run")
    assert measured["m1"]["mrr@10"] == 1.0 and measured["m2"]["mrr@10"] == 0.5
    for query_id, values in measured.items():
        for name, measure in MEASURES.items():
            assert values[name] == pytest.approx(reference[query_id][measure], abs=1e-9), (query_id, name)


# ---------------------------------------------------------------- 4. a query judged only with grade 0


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_query_judged_only_with_grade_0_is_left_out_of_the_means_and_the_json_says_so(tmp_path: Path) -> None:
    document = outcome(tmp_path, COLLECTION, FIXTURES / "ties.run")
    reference = pytrec(COLLECTION, FIXTURES / "ties.run")
    assert set(reference) == {"q1", "q2", "q3"}  # trec_eval averages over q3 as well
    measurement = document["measurement"]
    assert measurement["unjudged"] == {"count": 1, "ids": ["q3"]}
    assert measurement["questions"] == 2
    for metric in measurement["metrics"]:
        assert metric["mean_over"] == MEAN_OVER
        if metric["name"] not in MEASURES:
            continue  # hit@k, added by the hit cutoffs
        judged = [reference[q][MEASURES[metric["name"]]] for q in ("q1", "q2")]
        every = [reference[q][MEASURES[metric["name"]]] for q in reference]
        assert metric["value"] == pytest.approx(sum(judged) / len(judged), abs=1e-9)
        assert sum(every) / len(every) == pytest.approx(metric["value"] * 2 / 3, abs=1e-9)
    assert "trec_eval averages over every query of its qrels" in MEAN_OVER


# ---------------------------------------------------------------- 5. export


def test_export_qrels_help_says_it_writes_the_grades() -> None:
    result = CliRunner().invoke(main, ["export-qrels", "--help"])
    assert "qid 0 docid grade per expected document" in result.output
    assert "docid 1 per" not in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_exported_run_s_tag_is_the_retriever_id_not_the_series_name(tmp_path: Path) -> None:
    store, run_file = tmp_path / "results.duckdb", tmp_path / "x.run"
    args = [
        "retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--name", "my-series",
        "--store", str(store), "--cache-dir", str(tmp_path / "cache"), "--format", "json", "--no-progress",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.OK, result.output
    run_id = json.loads(result.stdout)["run"]["id"]
    exported = CliRunner().invoke(main, ["export-run", run_id, "--trec", str(run_file), "--store", str(store)])
    assert exported.exit_code == ExitCode.OK, exported.output
    assert {line.split()[5] for line in run_file.read_text().splitlines()} == {"goldeneval.lexical"}


class _NoEncoding:
    """Stands in for the dense retriever: records whether it was allowed a progress bar."""

    built: ClassVar[list[bool]] = []

    def __init__(self, corpus: object, cache_dir: object, **settings: Any) -> None:
        self.built.append(settings["progress"])

    def retrieve(self, question: str, limit: int) -> list[str]:
        return []


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize(("flag", "bar"), [("--no-progress", False), ("--progress", True)])
def test_no_progress_reaches_the_dense_encoding_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, flag: str, bar: bool
) -> None:
    from goldeneval.retrieval.retrievers import dense

    monkeypatch.setattr(dense, "DenseRetriever", _NoEncoding)
    monkeypatch.setattr(dense, "require_dense_extra", lambda retriever_id: None)
    monkeypatch.setattr(_NoEncoding, "built", [])
    args = [
        "retrieval", "--set", "transit-sample", "--retriever", "goldeneval.dense", flag,
        "--store", str(tmp_path / "results.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--format", "json",
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (ExitCode.OK, ExitCode.REGRESSION), result.output
    assert _NoEncoding.built == [bar]
