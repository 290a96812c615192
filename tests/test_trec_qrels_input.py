"""TREC qrels and topics as a set input (issue 41): ``--set QRELS --topics TOPICS --corpus``.

The same judgements as a BEIR folder give the same set and the same per-question values; the
judged non-relevant rows are kept as judged negatives; a pair judged twice with two relevances
is exit 3 naming the file and both lines, in either layout."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.corpus import load_corpus
from goldeneval.core.errors import GoldenSetError
from goldeneval.retrieval.beir import load_beir_set
from goldeneval.retrieval.qrels import load_trec_set
from goldeneval.retrieval.topics import read_topics

CORPUS = [
    {"_id": "d1", "title": "Bicycle permits", "text": "Bicycles travel free on trams."},
    {"_id": "d2", "title": "Night buses", "text": "Night buses run every hour after midnight."},
    {"_id": "d3", "title": "Lost property", "text": "Report lost items at the office."},
    {"_id": "d4", "title": "Harbour ferry", "text": "The harbour ferry leaves every morning at eight."},
]
QUERIES = {
    "q1": "Do bicycles travel free on trams?",
    "q2": "when do night buses run",
    "q3": "where do I report lost items",
    "q4": "when does the ferry leave the harbour",
    "q5": "judged only as not relevant",
}
ROWS = [
    ("q1", "d1", 2),
    ("q1", "d3", 0),
    ("q2", "d2", 1),
    ("q2", "d4", 0),
    ("q3", "d3", 1),
    ("q3", "d1", 0),
    ("q4", "d4", 3),
    ("q4", "d2", 1),
    ("q5", "d2", 0),
]


def write_collection(folder: Path, rows: list[tuple[str, str, int]] = ROWS) -> Path:
    """The same judgements twice: a BEIR folder and a TREC qrels file with its topics."""
    (folder / "beir" / "qrels").mkdir(parents=True)
    (folder / "beir" / "corpus.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in CORPUS))
    queries = "".join(json.dumps({"_id": qid, "text": text}) + "\n" for qid, text in QUERIES.items())
    (folder / "beir" / "queries.jsonl").write_text(queries)
    tsv = "".join(f"{qid}\t{doc}\t{grade}\n" for qid, doc, grade in rows)
    (folder / "beir" / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\n" + tsv)
    (folder / "qrels.txt").write_text("".join(f"{qid} 0 {doc} {grade}\n" for qid, doc, grade in rows))
    (folder / "topics.tsv").write_text("".join(f"{qid}\t{text}\n" for qid, text in QUERIES.items()))
    return folder


@pytest.fixture
def collection(tmp_path: Path) -> Path:
    return write_collection(tmp_path / "collection")


def run_json(tmp_path: Path, *args: str) -> dict[str, Any]:
    result = invoke(
        tmp_path, "--format", "json", "--metrics", "mrr@10,recall@10,ndcg@10,precision@5,map@10,rprec", *args
    )
    assert result.exit_code == ExitCode.OK, result.output
    document: dict[str, Any] = json.loads(result.stdout)
    return document


def values(document: dict[str, Any]) -> dict[str, tuple[Any, ...]]:
    return {
        q["id"]: (q["metrics"], q["top1_hit"], q["top3_hit"], q["documents"], q["form"]) for q in document["questions"]
    }


# ---------------------------------------------------------------- the same values as BEIR


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_qrels_file_and_its_topics_give_the_beir_folders_per_question_values(
    collection: Path, tmp_path: Path
) -> None:
    beir = run_json(tmp_path / "a", "--set", str(collection / "beir"))
    trec = run_json(
        tmp_path / "b",
        "--set", str(collection / "qrels.txt"), "--topics", str(collection / "topics.tsv"),
        "--corpus", str(collection / "beir" / "corpus.jsonl"),
    )  # fmt: skip
    assert values(trec) == values(beir)
    assert set(values(trec)) == {"q1", "q2", "q3", "q4"}
    assert trec["aggregates"] == beir["aggregates"]
    # the judged negatives are kept: the TREC run reports judged@k, the BEIR import never kept them
    assert "judged" in trec and "judged" not in beir


def test_the_set_keeps_judged_negatives_and_lists_queries_judged_only_with_zero(collection: Path) -> None:
    corpus = load_corpus(collection / "beir" / "corpus.jsonl")
    golden = load_trec_set(collection / "qrels.txt", collection / "topics.tsv", corpus, corpus_ref=None)
    beir = load_beir_set(collection / "beir")
    by_id = {q.id: q for q in golden.questions}
    assert {q.id: q.judgements for q in golden.questions} == {q.id: q.judgements for q in beir.questions}
    assert {q.id: q.form for q in golden.questions} == {q.id: q.form for q in beir.questions}
    assert by_id["q1"].not_relevant == {"d3"} and by_id["q2"].not_relevant == {"d4"}
    assert by_id["q4"].not_relevant == frozenset()
    assert golden.unjudged == beir.unjudged == ("q5",)
    assert golden.id == "trec-qrels"


@pytest.mark.slow
def test_scifact_as_trec_qrels_gives_the_beir_folders_per_question_values(scifact_dir: Path, tmp_path: Path) -> None:
    qrels = tmp_path / "scifact.qrels"
    with (scifact_dir / "qrels" / "test.tsv").open() as rows:
        lines = [f"{qid} 0 {doc} {grade}\n" for qid, doc, grade in list(csv.reader(rows, delimiter="\t"))[1:]]
    qrels.write_text("".join(lines))
    topics = tmp_path / "topics.tsv"
    with (scifact_dir / "queries.jsonl").open() as queries:
        items = [json.loads(line) for line in queries]
    topics.write_text("".join(f"{item['_id']}\t{item['text']}\n" for item in items))
    beir = run_json(tmp_path / "a", "--set", str(scifact_dir))
    trec = run_json(
        tmp_path / "b", "--set", str(qrels), "--topics", str(topics), "--corpus", str(scifact_dir)
    )  # fmt: skip
    assert len(trec["questions"]) == 300
    assert values(trec) == values(beir)


# ---------------------------------------------------------------- topics files


def test_every_topics_layout_reads_the_same_texts(tmp_path: Path) -> None:
    classic = tmp_path / "topics.301-302"
    classic.write_text(
        "<top>\n<num> Number: 301\n<title> International Organized\nCrime\n\n<desc> Description:\n"
        "Identify organizations.\n\n<narr> Narrative:\nA relevant document names one.\n</top>\n\n"
        "<top>\n<num> Number: 302 \n<title> Poliomyelitis and Post-Polio\n<desc> Description:\nIs it back?\n</top>\n"
    )
    xml = tmp_path / "topics.xml"
    xml.write_text(
        '<?xml version="1.0"?>\n<topics>\n<topic number="301" type="faceted">\n'
        "<query>International Organized Crime</query>\n<description>Identify organizations.</description>\n"
        '</topic>\n<topic number="302"><query>Poliomyelitis and Post-Polio</query></topic>\n</topics>\n'
    )
    jsonl = tmp_path / "topics.jsonl"
    jsonl.write_text(
        '{"_id": "301", "text": "International Organized Crime", "desc": "Identify organizations."}\n'
        '{"_id": 302, "text": "Poliomyelitis and Post-Polio", "desc": "Is it back?"}\n'
    )
    tsv = tmp_path / "queries.tsv"
    tsv.write_text("301\tInternational Organized Crime\n302\tPoliomyelitis and Post-Polio\n")
    expected = {"301": "International Organized Crime", "302": "Poliomyelitis and Post-Polio"}
    for path in (classic, xml, jsonl, tsv):
        assert read_topics(path) == expected, path
    assert read_topics(classic, "desc") == {"301": "Identify organizations.", "302": "Is it back?"}
    assert read_topics(jsonl, "desc") == {"301": "Identify organizations.", "302": "Is it back?"}
    with pytest.raises(GoldenSetError, match=r"topic #2 \('302'\): no <description> element"):
        read_topics(xml, "description")
    header = tmp_path / "header.tsv"
    header.write_text("qid\ttitle\tdesc\n301\tCrime\tIdentify organizations.\n")
    assert read_topics(header) == {"301": "Crime"}
    assert read_topics(header, "desc") == {"301": "Identify organizations."}


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("1\tfirst\n1\tagain\n", "line 2: topic '1' is listed twice"),
        ("1\t   \n", "line 1: topic '1' has no text"),
        ("1\n", "line 1: expected <id> TAB <text>, found 1 column(s)"),
        ("", "no topics in this file"),
    ],
)
def test_a_bad_topics_file_names_the_file_and_line(tmp_path: Path, content: str, problem: str) -> None:
    path = tmp_path / "topics.tsv"
    path.write_text(content)
    with pytest.raises(GoldenSetError) as raised:
        read_topics(path)
    assert str(raised.value) == f"{path}: {problem}"


# ---------------------------------------------------------------- the one rule for rows


def invoke(tmp_path: Path, *args: str) -> Any:
    common = [
        "retrieval", "--retriever", "goldeneval.lexical", "--store", str(tmp_path / "results.duckdb"),
        "--cache-dir", str(tmp_path / "cache"), "--no-progress",
    ]  # fmt: skip
    return CliRunner().invoke(main, [*common, *args])


def trec_args(folder: Path) -> list[str]:
    return [
        "--set", str(folder / "qrels.txt"), "--topics", str(folder / "topics.tsv"),
        "--corpus", str(folder / "beir" / "corpus.jsonl"),
    ]  # fmt: skip


def test_contradictory_duplicate_rows_are_exit_3_naming_the_file_and_both_lines(tmp_path: Path) -> None:
    folder = write_collection(tmp_path / "c", [*ROWS, ("q1", "d1", 0)])
    result = invoke(tmp_path, *trec_args(folder))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert result.stderr == (
        f"goldeneval: error: {folder / 'qrels.txt'}: lines 1 and 10: query 'q1' judges document 'd1' "
        "twice, with relevance 2 and 0; keep one\n"
    )
    beir = invoke(tmp_path, "--set", str(folder / "beir"))
    assert beir.exit_code == ExitCode.INVALID_INPUT
    assert beir.stderr == (
        f"goldeneval: error: {folder / 'beir' / 'qrels' / 'test.tsv'}: lines 2 and 11: query 'q1' judges "
        "document 'd1' twice, with score 2 and 0; keep one\n"
    )
    assert not (tmp_path / "results.duckdb").exists()


def test_duplicate_rows_that_agree_are_one_judgement(tmp_path: Path) -> None:
    folder = write_collection(tmp_path / "c", [*ROWS, ("q1", "d1", 2), ("q1", "d3", 0)])
    corpus = load_corpus(folder / "beir" / "corpus.jsonl")
    golden = load_trec_set(folder / "qrels.txt", folder / "topics.tsv", corpus, corpus_ref=None)
    q1 = next(q for q in golden.questions if q.id == "q1")
    assert q1.judgements == {"d1": 2} and q1.not_relevant == {"d3"}


@pytest.mark.parametrize(
    ("rows", "problem"),
    [
        ("q1 0 d1\n", "line 1: expected 4 columns (query-id iteration document-id relevance), found 3"),
        ("q1 0 d1 high\n", "line 1: relevance 'high' is not an integer"),
        (
            "q1 0 d1 1\nq1 0 d2 -1\n",
            "line 2: relevance -1 of document 'd2' for query 'q1' is negative; "
            "goldeneval reads relevance 0 (judged not relevant) and above",
        ),
        ("q1 0 d1 1\nq9 0 d2 1\n", "question #2 (id 'q9'): query id not found in the topics file {topics}"),
        ("q1 0 d1 1\nq1 0 d9 0\n", "question #1 (id 'q1'): field 'not_relevant': document ids not in the corpus: d9"),
        ("q1 0 d9 1\n", "question #1 (id 'q1'): field 'expected': document ids not in the corpus: d9"),
        ("q1 0 d1 0\n", "no relevant judgements (relevance > 0)"),
    ],
)
def test_a_bad_qrels_file_is_exit_3_naming_file_line_and_field(tmp_path: Path, rows: str, problem: str) -> None:
    folder = write_collection(tmp_path / "c")
    (folder / "qrels.txt").write_text(rows)
    result = invoke(tmp_path, *trec_args(folder))
    assert result.exit_code == ExitCode.INVALID_INPUT, result.output
    message = problem.format(topics=folder / "topics.tsv")
    assert result.stderr == f"goldeneval: error: {folder / 'qrels.txt'}: {message}\n"


def test_qrels_without_topics_or_corpus_say_what_is_missing(collection: Path, tmp_path: Path) -> None:
    qrels = collection / "qrels.txt"
    alone = invoke(tmp_path, "--set", str(qrels))
    assert alone.exit_code == ExitCode.INVALID_INPUT
    assert alone.stderr == (
        f"goldeneval: error: {qrels}: a TREC qrels file: give its topics file with --topics "
        "(and the corpus with --corpus)\n"
    )
    no_corpus = invoke(tmp_path, "--set", str(qrels), "--topics", str(collection / "topics.tsv"))
    assert no_corpus.exit_code == ExitCode.INVALID_INPUT
    assert no_corpus.stderr == (
        f"goldeneval: error: {qrels}: TREC qrels with --topics need --corpus: the corpus their document ids name\n"
    )


# ---------------------------------------------------------------- all-judged: a row per query


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_under_all_judged_a_query_judged_only_with_zero_has_its_row_scoring_zero(
    collection: Path, tmp_path: Path
) -> None:
    document = run_json(tmp_path, *trec_args(collection), "--average-over", "all-judged")
    rows = {q["id"]: q for q in document["questions"]}
    assert rows["q5"]["status"] == "unjudged"
    assert rows["q5"]["metrics"] == dict.fromkeys(document["aggregates"]["metrics"], 0.0)
    # the rows' mean of each metric is the run's, as trec_eval's mean over every query of the qrels
    for name, mean in document["aggregates"]["metrics"].items():
        values = [q["metrics"][name] for q in document["questions"] if name in q["metrics"]]
        assert len(values) == 5
        assert sum(values) / len(values) == pytest.approx(mean), name
    default = run_json(tmp_path / "default", *trec_args(collection))
    assert "q5" not in {q["id"] for q in default["questions"]}


def test_topics_with_a_set_that_is_not_a_qrels_file_says_so(collection: Path, tmp_path: Path) -> None:
    topics = str(collection / "topics.tsv")
    beir = invoke(tmp_path, "--set", str(collection / "beir"), "--topics", topics)
    assert beir.exit_code == ExitCode.INVALID_INPUT
    assert beir.stderr == (
        f"goldeneval: error: {collection / 'beir'}: --topics goes with a TREC qrels file as --set; "
        "this is a BEIR folder\n"
    )
    registered = invoke(tmp_path, "--set", "transit-sample", "--topics", topics)
    assert registered.exit_code == ExitCode.INVALID_INPUT
    assert "transit-sample: --topics goes with a TREC qrels file as --set; this is no file" in registered.stderr


def test_classic_topics_with_closing_tags_or_without_an_end_read_each_topic_apart(tmp_path: Path) -> None:
    closed = tmp_path / "closed.txt"
    closed.write_text("<top>\n<num>301</num>\n<title> oil spills </title>\n</top>\n")
    assert read_topics(closed) == {"301": "oil spills"}
    unended = tmp_path / "unended.txt"
    unended.write_text(
        "<top>\n<num> Number: 301\n<title> oil spills\n<narr> Narrative: first\n\n"
        "<top>\n<num> Number: 302\n<title> ferry fares\n</top>\n"
    )
    assert read_topics(unended) == {"301": "oil spills", "302": "ferry fares"}
    with pytest.raises(GoldenSetError, match=r"topic #2 \('302'\): no <narr> field"):
        read_topics(unended, "narr")
    microblog = tmp_path / "mb.txt"
    microblog.write_text("<top>\n<num> Number: MB01 </num>\n<title> Wiki Leaks </title>\n</top>\n")
    assert read_topics(microblog) == {"MB01": "Wiki Leaks"}


def test_byte_order_marks_and_xml_namespaces_are_read(tmp_path: Path) -> None:
    jsonl = tmp_path / "topics.jsonl"
    jsonl.write_bytes(b"\xef\xbb\xbf" + b'{"_id": "1", "text": "night buses"}\n')
    assert read_topics(jsonl) == {"1": "night buses"}
    tsv = tmp_path / "topics.tsv"
    tsv.write_bytes(b"\xef\xbb\xbfqid\ttext\n1\tnight buses\n")
    assert read_topics(tsv) == {"1": "night buses"}
    xml = tmp_path / "topics.xml"
    xml.write_text('<topics xmlns="http://trec.nist.gov/x"><topic number="7"><query>ferries</query></topic></topics>')
    assert read_topics(xml) == {"7": "ferries"}


def test_qrels_with_a_byte_order_mark_and_set_ids_from_the_whole_name(collection: Path, tmp_path: Path) -> None:
    qrels = tmp_path / "qrels.dl19-passage.txt"
    qrels.write_bytes(b"\xef\xbb\xbf" + (collection / "qrels.txt").read_bytes())
    corpus = load_corpus(collection / "beir" / "corpus.jsonl")
    golden = load_trec_set(qrels, collection / "topics.tsv", corpus, corpus_ref=None)
    assert {q.id for q in golden.questions} == {"q1", "q2", "q3", "q4"}
    assert golden.id == "trec-qrels.dl19-passage"


def test_a_beir_folder_reads_a_negative_score_as_not_relevant_as_it_did(tmp_path: Path) -> None:
    folder = write_collection(tmp_path / "c", [*ROWS, ("q1", "d4", -2)])
    beir = load_beir_set(folder / "beir")
    assert {q.id: q.judgements for q in beir.questions}["q1"] == {"d1": 2}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_compare_reads_a_qrels_sets_text_with_topics(collection: Path, tmp_path: Path) -> None:
    document = run_json(tmp_path, *trec_args(collection))
    store = str(tmp_path / "results.duckdb")
    args = ["compare", document["run"]["id"], document["run"]["id"], "--store", store, "--format", "json"]
    sources = [*trec_args(collection)]
    result = CliRunner().invoke(main, [*args, *sources])
    # the same run twice is refused whatever the sources: two runs of the set make the comparison
    assert result.exit_code == ExitCode.INVALID_INPUT
    second = run_json(tmp_path, *trec_args(collection))
    compared = CliRunner().invoke(
        main, ["compare", second["run"]["id"], "--store", store, "--format", "json", *sources]
    )
    assert compared.exit_code == ExitCode.OK, compared.output
    questions = json.loads(compared.stdout)["questions"]
    assert {q["id"]: q["text"] for q in questions}["q2"] == QUERIES["q2"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_bpref_on_a_set_without_judged_negatives_warns(collection: Path, tmp_path: Path) -> None:
    document = run_json(tmp_path, "--set", str(collection / "beir"), "--metrics", "bpref", "--judged-only")
    assert any(
        "bpref, --judged-only: set 'beir-beir-test' records no judged negatives" in warning
        for warning in document["warnings"]
    )
    with_negatives = run_json(tmp_path / "t", *trec_args(collection), "--metrics", "bpref")
    assert not any("records no judged negatives" in warning for warning in with_negatives["warnings"])
