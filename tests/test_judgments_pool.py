"""``goldeneval pool``: TREC pooling of retrievers and stored runs into a judgments file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import ExitCode, main
from goldeneval.core.corpus import load_corpus
from goldeneval.judgments.judgments import (
    JudgmentLine,
    Source,
    append_lines,
    json_string,
    pool_line_json,
    read_judgments,
    source_json,
)
from goldeneval.judgments.pool import RetrieverSource, pool, retriever_rankings
from goldeneval.retrieval.golden import load_draft_set, load_golden_set
from goldeneval.sample import SAMPLE_DIR

SAMPLE_SET = SAMPLE_DIR / "golden.yaml"
LEXICAL = RetrieverSource("goldeneval.lexical")
VARIANT = RetrieverSource("goldeneval.lexical", {"k1": "0.5", "b": "0.3"})


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One index cache for the module: each retriever's index is built once."""
    return tmp_path_factory.mktemp("cache")


def _pool(out: Path, cache: Path, *args: str) -> Result:
    command = ["pool", "--set", str(SAMPLE_SET), "--depth", "10", "--out", str(out), "--cache-dir", str(cache), *args]
    return CliRunner().invoke(main, command)


_TOP: dict[tuple[str, int], dict[str, list[str]]] = {}
"""Rankings already computed in this module (the retrievers are deterministic)."""


def _top(source: RetrieverSource, cache: Path, depth: int = 10) -> dict[str, list[str]]:
    if (source.label, depth) not in _TOP:
        _TOP[(source.label, depth)] = _rankings(source, cache, depth)
    return _TOP[(source.label, depth)]


def _rankings(source: RetrieverSource, cache: Path, depth: int) -> dict[str, list[str]]:
    golden_set = load_golden_set(SAMPLE_SET)
    corpus = load_corpus(SAMPLE_DIR / "corpus")
    rankings, warnings = retriever_rankings(golden_set, source, depth, corpus=corpus, cache_dir=cache, timeout_s=None)
    assert warnings == []
    return rankings


def _pairs_with_sources(path: Path) -> dict[tuple[str, str], dict[str, int]]:
    return {pair: {s.source: s.rank for s in sources} for pair, sources in read_judgments(path).pairs.items()}


def _expected_pool(*rankings: tuple[str, dict[str, list[str]]]) -> dict[tuple[str, str], dict[str, int]]:
    pooled: dict[tuple[str, str], dict[str, int]] = {}
    for label, ranking in rankings:
        for question, documents in ranking.items():
            for rank, document in enumerate(documents, start=1):
                pooled.setdefault((question, document), {})[label] = rank
    return pooled


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_pooling_two_retrievers_gives_the_union_of_their_top_10_with_sources_and_ranks(
    tmp_path: Path, cache: Path
) -> None:
    out = tmp_path / "j.jsonl"
    result = _pool(out, cache, "--retriever", "goldeneval.lexical", "--retriever", "goldeneval.lexical",
                   "--option", "2:k1=0.5", "--option", "2:b=0.3")  # fmt: skip
    assert result.exit_code == 0, result.output
    expected = _expected_pool((LEXICAL.label, _top(LEXICAL, cache)), (VARIANT.label, _top(VARIANT, cache)))
    assert _pairs_with_sources(out) == expected
    assert f"pooled {len(expected)} pairs at depth 10: {len(expected)} new, 0 with a new source" in result.output
    assert VARIANT.label == "goldeneval.lexical?b=0.3&k1=0.5"


def test_every_pool_line_is_unjudged_and_carries_the_question_text(tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "j.jsonl"
    assert _pool(out, cache, "--retriever", "goldeneval.lexical").exit_code == 0
    lines = [JudgmentLine.model_validate_json(line) for line in out.read_text().splitlines()]
    texts = {q.id: q.text for q in load_golden_set(SAMPLE_SET).questions}
    assert all(line.grade is None and line.assessor is None and line.judged_at is None for line in lines)
    assert all(line.question_text == texts[line.question] for line in lines)


def test_pooling_again_with_the_same_retriever_appends_nothing(tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "j.jsonl"
    assert _pool(out, cache, "--retriever", "goldeneval.lexical").exit_code == 0
    before = out.read_bytes()
    result = _pool(out, cache, "--retriever", "goldeneval.lexical")
    assert result.exit_code == 0, result.output
    assert out.read_bytes() == before
    assert ": 0 new, 0 with a new source" in result.output


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_pooling_a_new_retriever_appends_only_new_pairs_and_new_sources_and_keeps_grades(
    tmp_path: Path, cache: Path
) -> None:
    out = tmp_path / "j.jsonl"
    assert _pool(out, cache, "--retriever", "goldeneval.lexical").exit_code == 0
    first = read_judgments(out)
    judged = next(iter(first.pairs))
    append_lines(out, [JudgmentLine(question=judged[0], document=judged[1], grade=2, assessor="ann")])
    before = out.read_bytes()
    result = _pool(out, cache, "--retriever", "goldeneval.lexical", "--option", "k1=0.5", "--option", "b=0.3")
    assert result.exit_code == 0, result.output
    assert out.read_bytes().startswith(before)
    added = [JudgmentLine.model_validate_json(line) for line in out.read_bytes()[len(before) :].decode().splitlines()]
    variant = _top(VARIANT, cache)
    new = {(q, d) for q, docs in variant.items() for d in docs} - set(first.pairs)
    assert {line.pair for line in added if line.pair not in first.pairs} == new
    for line in added:  # every line adds the variant to what the pair had
        assert [s.source for s in line.sources] == [s.source for s in first.pairs.get(line.pair, ())] + [VARIANT.label]
    assert read_judgments(out).grades == {(*judged, "ann"): 2}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_stored_run_is_pooled_from_its_kept_documents(tmp_path: Path, cache: Path) -> None:
    out, store = tmp_path / "j.jsonl", tmp_path / "results.duckdb"
    args = ["--set", str(SAMPLE_SET), "--retriever", "goldeneval.lexical", "--store", str(store)]
    ran = CliRunner().invoke(main, ["retrieval", *args, "--cache-dir", str(cache), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    run_id = json.loads(CliRunner().invoke(main, ["runs", "--store", str(store), "--format", "json"]).output)[0]["id"]
    result = _pool(out, cache, "--run", run_id[:8], "--store", str(store))
    assert result.exit_code == 0, result.output
    assert _pairs_with_sources(out) == _expected_pool((f"run:{run_id}", _top(LEXICAL, cache)))


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_metadata_only_run_cannot_be_pooled(tmp_path: Path, cache: Path) -> None:
    out, store = tmp_path / "j.jsonl", tmp_path / "results.duckdb"
    args = ["--set", str(SAMPLE_SET), "--retriever", "goldeneval.lexical", "--store", str(store)]
    ran = CliRunner().invoke(
        main, ["retrieval", *args, "--cache-dir", str(cache), "--no-progress", "--privacy", "metadata_only"]
    )
    assert ran.exit_code == 0, ran.output
    run_id = json.loads(CliRunner().invoke(main, ["runs", "--store", str(store), "--format", "json"]).output)[0]["id"]
    result = _pool(out, cache, "--run", run_id, "--store", str(store))
    assert result.exit_code == 3
    assert f"run {run_id} was stored with privacy mode metadata_only: it holds no document ids to pool" in result.stderr
    assert not out.exists()


def test_a_set_whose_questions_have_no_expected_yet_can_be_pooled(tmp_path: Path, cache: Path) -> None:
    unlabelled = tmp_path / "draft.yaml"
    unlabelled.write_text(
        yaml.safe_dump(
            {
                "id": "draft",
                "corpus": str(SAMPLE_DIR / "corpus"),
                "questions": [
                    {"id": "d1", "text": "How much is a day ticket?", "form": "MATCH"},
                    {"id": "d2", "text": "Can I take my bike on the ferry?", "form": "GAP", "expected": []},
                ],
            }
        )
    )
    assert [q.expected for q in load_draft_set(unlabelled).questions] == [frozenset(), frozenset()]
    out = tmp_path / "j.jsonl"
    result = CliRunner().invoke(
        main, ["pool", "--set", str(unlabelled), "--retriever", "goldeneval.lexical", "--depth", "3",
               "--out", str(out), "--cache-dir", str(cache)],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert [len(read_judgments(out).documents(q)) for q in ("d1", "d2")] == [3, 3]


def test_a_set_with_every_expected_is_read_by_goldenevals_own_loader() -> None:
    assert load_draft_set(SAMPLE_SET) == load_golden_set(SAMPLE_SET)


@pytest.mark.parametrize("suffix", [".yaml", ".jsonl"])
@pytest.mark.parametrize("command", ["pool", "to-set"])
def test_a_bad_draft_set_is_one_line_naming_the_file_the_question_and_the_field(
    tmp_path: Path, suffix: str, command: str
) -> None:
    """docs/guide/golden-sets.md: a bad file names the file, the question (position and id) and
    the field, a set being labelled as well as a labelled one."""
    questions = [
        {"id": "d1", "text": "How much is a day ticket?", "form": "MATCH"},
        {"id": "d2", "text": "Can I take my bike?", "form": "MAYBE"},
    ]
    draft = tmp_path / f"draft{suffix}"
    if suffix == ".jsonl":
        draft.write_text("".join(json.dumps(q) + "\n" for q in questions))
    else:
        draft.write_text(yaml.safe_dump({"id": "draft", "questions": questions}))
    judgments = tmp_path / "j.jsonl"
    judgments.write_text("")
    args = {
        "pool": ["pool", "--set", str(draft), "--retriever", "goldeneval.lexical", "--depth", "3",
                 "--out", str(judgments)],
        "to-set": ["judgments", "to-set", str(judgments), "--set", str(draft), "--out", str(tmp_path / "out.yaml")],
    }[command]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.INVALID_INPUT, result.output
    assert result.stderr == (
        f"goldeneval: error: {draft}: question #2 (id 'd2'): field 'form': Input should be 'MATCH' or 'GAP' "
        "(got 'MAYBE')\n"
    )
    assert judgments.read_text() == ""


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give at least one --retriever or --run"),
        (["--retriever", "goldeneval.lexical", "--option", "2:k1=1"], "2 names no --retriever (there are 1)"),
        (["--retriever", "goldeneval.lexical", "--option", "k1"], "expected [N:]KEY=VALUE, got 'k1'"),
        (["--retriever", "goldeneval.lexical", "--timeout", "nan"], "nan is not a finite number"),
    ],
    ids=["no-source", "option-of-no-retriever", "option-without-value", "timeout-nan"],
)
def test_bad_sources_are_usage_errors(tmp_path: Path, cache: Path, args: list[str], message: str) -> None:
    result = _pool(tmp_path / "j.jsonl", cache, *args)
    assert result.exit_code == 2
    assert message in result.output
    assert not (tmp_path / "j.jsonl").exists()


def test_an_unknown_retriever_is_invalid_input_and_writes_nothing(tmp_path: Path, cache: Path) -> None:
    result = _pool(tmp_path / "j.jsonl", cache, "--retriever", "no.such:retriever")
    assert result.exit_code == 3, result.output
    assert not (tmp_path / "j.jsonl").exists()


@pytest.mark.slow
def test_pooling_lexical_and_dense_gives_the_union_of_their_top_10(tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "j.jsonl"
    result = _pool(out, cache, "--retriever", "goldeneval.lexical", "--retriever", "goldeneval.dense")
    assert result.exit_code == 0, result.output
    dense = RetrieverSource("goldeneval.dense")
    expected = _expected_pool((LEXICAL.label, _top(LEXICAL, cache)), (dense.label, _top(dense, cache)))
    assert _pairs_with_sources(out) == expected
    assert len(expected) > len(_top(LEXICAL, cache)) * 10  # dense adds pairs lexical missed


def test_a_source_given_twice_is_pooled_once_with_a_warning(tmp_path: Path, cache: Path) -> None:
    out = tmp_path / "j.jsonl"
    result = _pool(out, cache, "--retriever", "goldeneval.lexical", "--retriever", "goldeneval.lexical")
    assert result.exit_code == 0, result.output
    assert "goldeneval: warning: goldeneval.lexical: given twice; pooled once" in result.output
    assert all(len(sources) == 1 for sources in read_judgments(out).pairs.values())


@pytest.mark.parametrize(
    ("question", "document", "text"),
    [
        ("q-001", "fares/day-ticket", "How much does a day ticket cost?"),
        ('q "quoted" \\ back', "doc/\u00e9t\u00e9 \u2028 \U0001f68c", "Tabs\tnew\nlines \x01 and \x7f, caf\u00e9?"),
        ("q", "d", None),
    ],
)
def test_a_pool_line_written_as_text_is_the_bytes_of_the_judgment_line(
    question: str, document: str, text: str | None
) -> None:
    sources = (Source(source="goldeneval.lexical?b=0.3&k1=0.5", rank=1), Source(source='run:"x"', rank=12))
    line = JudgmentLine(question=question, document=document, sources=sources, question_text=text)
    listed = ",".join(source_json(s.source, s.rank) for s in sources)
    encoded = None if text is None else json_string(text)
    assert pool_line_json(json_string(question), json_string(document), listed, encoded) == line.to_json_line()
    assert JudgmentLine.model_validate_json(line.to_json_line()) == line


def test_pooling_streams_lines_with_no_judgment_line_object_per_pair(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []
    original = JudgmentLine.__init__

    def counting(self: JudgmentLine, **data: object) -> None:
        built.append(data)
        original(self, **data)

    golden_set = load_draft_set(SAMPLE_SET)
    rankings = {q.id: [f"doc-{i}" for i in range(20)] for q in golden_set.questions}
    monkeypatch.setattr(JudgmentLine, "__init__", counting)
    result = pool(tmp_path / "j.jsonl", golden_set, [("a", lambda: (rankings, [])), ("b", lambda: (rankings, []))])
    assert built == []
    assert result.pairs == result.new_pairs == 20 * len(golden_set.questions)
    monkeypatch.undo()
    read = read_judgments(tmp_path / "j.jsonl")
    assert len(read.pairs) == result.pairs
    assert {s.source: s.rank for s in read.pairs[(golden_set.questions[0].id, "doc-3")]} == {"a": 4, "b": 4}
