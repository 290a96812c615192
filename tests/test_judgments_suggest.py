"""``goldeneval pool --suggest-with``: a model's suggested grades, through a real chat server."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.judgments.judgments import JudgmentLine, append_lines, read_judgments
from goldeneval.judgments.suggest import DOCUMENT_RELEVANCE, Suggester, grade_of_score, suggestion_assessor
from goldeneval.judgments.to_set import merged_grades
from goldeneval.sample import SAMPLE_DIR
from tests.chat_server import ChatServer, Reply, answer, chat_server, error, last_user_message, verdict

ASSESSOR = "model:goldeneval.openai/judge"
SCORES = {"Bikes on ferries": [1.0, 0.67]}
"""A document's title -> the judge's scores, sample by sample; any other document: 0.0 then 0.4."""
OTHER = [0.0, 0.4]


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def draft(tmp_path: Path) -> Path:
    path = tmp_path / "draft.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "id": "draft",
                "corpus": str(SAMPLE_DIR / "corpus"),
                "questions": [
                    {"id": "d1", "text": "How much does a day ticket for zones A and B cost?", "form": "MATCH"},
                    {"id": "d2", "text": "Can I take my bike on the ferry?", "form": "GAP"},
                ],
            }
        )
    )
    return path


def _title(body: dict[str, Any]) -> str:
    return last_user_message(body).split("Answer to grade:\n", 1)[1].split("\n", 1)[0]


@pytest.fixture
def server() -> Iterator[ChatServer]:
    asked: dict[str, int] = defaultdict(int)

    def reply(body: dict[str, Any]) -> Reply:
        title = _title(body)
        scores = SCORES.get(title, OTHER)
        asked[title] += 1
        return verdict(scores[(asked[title] - 1) % len(scores)], "scripted")

    with chat_server(default=reply) as running:
        yield running


def _pool(draft: Path, out: Path, cache: Path, base_url: str, *args: str) -> Result:
    command = ["pool", "--set", str(draft), "--retriever", "goldeneval.lexical", "--depth", "2",
               "--out", str(out), "--cache-dir", str(cache), "--suggest-with", "goldeneval.openai",
               "--suggest-option", f"base_url={base_url}", "--suggest-option", "model=judge",
               "--suggest-option", "max_retries=0", *args]  # fmt: skip
    return CliRunner().invoke(main, command)


def _lines(path: Path) -> list[JudgmentLine]:
    return [JudgmentLine.model_validate_json(line) for line in path.read_text().splitlines()]


def test_a_score_maps_to_the_nearest_grade_halves_up() -> None:
    assert [grade_of_score(s) for s in (0.0, 0.16, 1 / 6, 0.33, 0.5, 0.67, 0.84, 1.0)] == [0, 0, 1, 1, 2, 2, 3, 3]


def test_the_assessor_names_the_model_and_the_served_model_only() -> None:
    assert suggestion_assessor("goldeneval.openai", {"model": "judge", "api_key_env": "K", "base_url": "u"}) == (
        ASSESSOR
    )
    assert suggestion_assessor("pkg.mod:factory", {}) == "model:pkg.mod:factory"


def test_every_pooled_pair_gets_a_suggestion_line_of_its_own_assessor_with_its_samples_spread(
    draft: Path, tmp_path: Path, cache: Path, server: ChatServer
) -> None:
    out = tmp_path / "j.jsonl"
    result = _pool(draft, out, cache, server.base_url, "--suggest-samples", "2")
    assert result.exit_code == 0, result.output
    read = read_judgments(out)
    assert len(read.pairs) == 4
    assert f"suggested 4 of 4 pairs not yet suggested as {ASSESSOR}" in result.output
    suggestions = [line for line in _lines(out) if line.assessor is not None]
    assert [line.pair for line in suggestions] == list(read.pairs)  # in pool order, one each
    assert len(server.requests) == 8  # two samples a pair
    for line in suggestions:
        assert line.assessor == ASSESSOR and line.judged_at and line.suggestion is not None
    by_title: dict[str, JudgmentLine] = {}
    for body, line in zip(server.requests[::2], suggestions, strict=True):
        by_title[_title(body)] = line
    for title, line in by_title.items():
        scores = SCORES.get(title, OTHER)
        assert line.suggestion is not None
        assert line.suggestion.scores == tuple(scores)
        assert line.grade == grade_of_score(sum(scores) / len(scores))
        grades = [grade_of_score(s) for s in scores]
        assert line.suggestion.spread == max(grades) - min(grades)
        assert line.suggestion.unstable == (min(grades) == 0 < max(grades))  # relevant against not relevant
        assert line.suggestion.rubric == DOCUMENT_RELEVANCE.identity
    assert by_title["Bikes on ferries"].grade == 3
    # the judge was asked with the question and the document, in the judge's JSON contract
    first = server.requests[0]["messages"]
    assert "search assessor" in first[0]["content"] and '"score"' in first[0]["content"]
    assert "Question:\nHow much does a day ticket" in first[1]["content"]
    # the file holds no text but the question's: no reason, no document text
    assert "scripted" not in out.read_text() and "unlimited travel" not in out.read_text()
    assert read.people == [] and read.assessors == [ASSESSOR]
    assert set(read.suggestions) == {(*pair, ASSESSOR) for pair in read.pairs}
    stats = CliRunner().invoke(main, ["judgments", "stats", str(out), "--format", "json"])
    assert stats.exit_code == 0, stats.output
    assert ASSESSOR in stats.output


def test_pooling_again_asks_only_pairs_not_yet_suggested(
    draft: Path, tmp_path: Path, cache: Path, server: ChatServer
) -> None:
    out = tmp_path / "j.jsonl"
    assert _pool(draft, out, cache, server.base_url).exit_code == 0
    before, asked = out.read_bytes(), len(server.requests)
    again = _pool(draft, out, cache, server.base_url)
    assert again.exit_code == 0, again.output
    assert out.read_bytes() == before and len(server.requests) == asked
    assert f"suggested 0 of 0 pairs not yet suggested as {ASSESSOR}" in again.output
    # a person's grade is their own line, and does not stop the model being asked
    append_lines(out, [JudgmentLine(question="d1", document=next(iter(read_judgments(out).pairs))[1], grade=0,
                                    assessor="ann")])  # fmt: skip
    other = CliRunner().invoke(
        main,
        ["pool", "--set", str(draft), "--retriever", "goldeneval.lexical", "--depth", "2", "--out", str(out),
         "--cache-dir", str(cache), "--suggest-with", "goldeneval.openai", "--suggest-option",
         f"base_url={server.base_url}", "--suggest-option", "model=other", "--suggest-option", "max_retries=0"],
    )  # fmt: skip
    assert other.exit_code == 0, other.output
    assert "suggested 4 of 4 pairs not yet suggested as model:goldeneval.openai/other" in other.output


def test_a_pair_whose_verdict_fails_is_one_warning_naming_it_and_is_asked_again_next_time(
    draft: Path, tmp_path: Path, cache: Path
) -> None:
    out = tmp_path / "j.jsonl"
    with chat_server(answer("no idea"), error(500), default=lambda _: verdict(0.7)) as server:
        result = _pool(draft, out, cache, server.base_url)
        assert result.exit_code == 0, result.output
        read = read_judgments(out)
        first, second = list(read.pairs)[:2]
        assert (
            f"goldeneval: warning: suggestion for question {first[0]!r}, document {first[1]!r}: "
            "no JSON object in the judge's answer 'no idea'"
        ) in result.output
        assert f"suggestion for question {second[0]!r}, document {second[1]!r}: judge call failed" in result.output
        assert "suggested 2 of 4 pairs not yet suggested" in result.output and "2 failed" in result.output
        assert {(q, d) for q, d, _ in read.grades} == set(list(read.pairs)[2:])
        again = _pool(draft, out, cache, server.base_url)
        assert again.exit_code == 0, again.output
        assert "suggested 2 of 2 pairs" in again.output
        assert read_judgments(out).by_assessor(ASSESSOR) == dict.fromkeys(read.pairs, 2)


def test_an_endpoint_that_keeps_failing_is_a_warning_per_pair_never_a_crash(
    draft: Path, tmp_path: Path, cache: Path
) -> None:
    out = tmp_path / "j.jsonl"
    with chat_server(default=lambda _: error(500)) as server:
        result = _pool(draft, out, cache, server.base_url)
    assert result.exit_code == 0, result.output
    assert result.output.count("goldeneval: warning: suggestion for question") == 4
    assert "suggested 0 of 4 pairs" in result.output
    assert len(read_judgments(out).pairs) == 4 and read_judgments(out).grades == {}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["--suggest-option", "model=x"], 2, "--suggest-option"),
        (["--suggest-samples", "3"], 2, "needs --suggest-with"),
        (["--suggest-with", "no.such:model"], 3, "no.such:model"),
        (["--suggest-with", "goldeneval.openai", "--suggest-option", "model=x"], 3, "'base_url'"),
        (["--suggest-with", "goldeneval.openai", "--suggest-option", "colour=red"], 3, "unknown option(s) 'colour'"),
        (["--suggest-with", "goldeneval.openai", "--suggest-option", "nokey"], 2, "expected KEY=VALUE"),
    ],
    ids=["option-alone", "samples-alone", "unknown-model", "missing-option", "unknown-option", "option-no-value"],
)
def test_a_bad_suggestion_model_fails_before_anything_is_written(
    draft: Path, tmp_path: Path, cache: Path, args: list[str], code: int, message: str
) -> None:
    out = tmp_path / "j.jsonl"
    command = ["pool", "--set", str(draft), "--retriever", "goldeneval.lexical", "--depth", "2", "--out", str(out),
               "--cache-dir", str(cache), *args]  # fmt: skip
    result = CliRunner().invoke(main, command)
    assert result.exit_code == code, result.output
    assert message in result.output
    if code == 3:  # invalid input: one line naming the model or its option
        assert len(result.output.strip().splitlines()) == 1
    assert not out.exists()


def test_a_set_without_a_corpus_needs_one_for_suggestions(tmp_path: Path, cache: Path) -> None:
    bare = tmp_path / "bare.yaml"
    bare.write_text(yaml.safe_dump({"id": "bare", "questions": [{"id": "d1", "text": "Day ticket?", "form": "MATCH"}]}))
    out = tmp_path / "j.jsonl"
    result = CliRunner().invoke(
        main,
        ["pool", "--set", str(bare), "--retriever", "goldeneval.lexical", "--depth", "2", "--out", str(out),
         "--cache-dir", str(cache), "--corpus", str(SAMPLE_DIR / "corpus"), "--suggest-with", "goldeneval.openai",
         "--suggest-option", "base_url=http://127.0.0.1:9/v1", "--suggest-option", "model=judge",
         "--suggest-option", "max_retries=0", "--timeout", "5"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output  # --corpus given: the pairs are asked (and fail: nothing listens)
    assert "suggested 0 of 2 pairs" in result.output
    no_corpus = CliRunner().invoke(
        main,
        ["pool", "--set", str(bare), "--run", "x", "--depth", "2", "--out", str(tmp_path / "k.jsonl"),
         "--store", str(tmp_path / "s.duckdb"), "--suggest-with", "goldeneval.openai"],
    )  # fmt: skip
    assert no_corpus.exit_code == 3, no_corpus.output
    assert f"{bare}: --suggest-with needs the documents' text" in no_corpus.output


def test_a_models_suggestions_are_no_persons_grade_in_to_set_and_merge(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    append_lines(out, [JudgmentLine(question="q", document=d, question_text="Q?") for d in ("a", "b")])
    append_lines(out, [JudgmentLine(question="q", document="a", grade=2, assessor="ann")])
    append_lines(out, [JudgmentLine(question="q", document="a", grade=0, assessor="bob")])
    suggestion = {"question": "q", "document": "a", "grade": 3, "assessor": ASSESSOR,
                  "suggestion": {"scores": [1.0], "spread": 0}}  # fmt: skip
    out.open("a").write(json.dumps(suggestion) + "\n" + json.dumps({**suggestion, "document": "b"}) + "\n")
    read = read_judgments(out)
    assert read.people == ["ann", "bob"]
    assert merged_grades(read, merge="majority") == {("q", "a"): 0}  # ann 2, bob 0: a tie to the lower
    assert merged_grades(read, assessor=ASSESSOR) == {("q", "a"): 3, ("q", "b"): 3}  # only when named
    only_ann = tmp_path / "k.jsonl"
    only_ann.write_text("".join(line for line in out.read_text().splitlines(keepends=True) if '"bob"' not in line))
    assert merged_grades(read_judgments(only_ann)) == {("q", "a"): 2}


def test_a_suggestion_line_round_trips_and_a_plain_line_has_no_suggestion_key() -> None:
    plain = JudgmentLine(question="q", document="a", grade=1, assessor="ann")
    assert "suggestion" not in json.loads(plain.to_json_line())
    line = JudgmentLine.model_validate_json(
        '{"question":"q","document":"a","grade":2,"assessor":"model:m","suggestion":{"scores":[0.6,0.7],"spread":0}}'
    )
    assert JudgmentLine.model_validate_json(line.to_json_line()) == line


def test_a_person_cannot_judge_as_a_model(tmp_path: Path) -> None:
    out = tmp_path / "j.jsonl"
    append_lines(out, [JudgmentLine(question="q", document="a")])
    result = CliRunner().invoke(
        main, ["judge", str(out), "--corpus", str(SAMPLE_DIR / "corpus"), "--assessor", "model:me"]
    )
    assert result.exit_code == 2
    assert "names a model's suggestions, not a person" in result.output


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_workers_ask_pairs_at_once_and_write_the_same_lines_in_pool_order(
    draft: Path, tmp_path: Path, cache: Path
) -> None:
    files = []
    for workers in ("1", "3"):
        out = tmp_path / f"j{workers}.jsonl"
        with chat_server(default=lambda body: verdict(0.9 if "Bikes" in _title(body) else 0.1)) as server:
            result = _pool(draft, out, cache, server.base_url, "--workers", workers)
        assert result.exit_code == 0, result.output
        files.append([(line.pair, line.grade, line.suggestion) for line in _lines(out) if line.assessor])
    assert files[0] == files[1] and len(files[0]) == 4


def test_a_document_not_in_the_corpus_is_that_pairs_error_and_asks_nothing() -> None:
    with chat_server(default=lambda _: verdict(1.0)) as server:
        suggester = Suggester("goldeneval.openai", {"base_url": server.base_url, "model": "judge", "max_retries": "0"})
        grading = suggester.grade("q", "Day ticket?", None, "gone/doc")
        assert grading.error == "the document is not in the corpus"
        assert server.requests == []
