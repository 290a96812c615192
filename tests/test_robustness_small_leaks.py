"""Defect 9, four small leaks: duplicate keys in a JSON set file, a short bearer token,
control characters in the short-rankings line, a corpus symlink pointing outside the folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldeneval.cli import ExitCode
from goldeneval.core.corpus import load_corpus
from goldeneval.core.errors import CorpusError, GoldenSetError, InputError
from goldeneval.core.provenance import parse_provenance
from goldeneval.core.secret_scan import looks_like_secret
from goldeneval.retrieval.golden import load_golden_set
from tests.conftest import CliWorkspace, WriteSet

QUESTION = '{"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"]}'

# --------------------------------------------------------------------------- duplicate JSON keys


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        (
            "set.json",
            '{"id": "s", "id": "t", "questions": [' + QUESTION + "]}",
            "duplicate key 'id'; the keys of a JSON object must be unique",
        ),
        (
            "set.json",
            '{"id": "s", "questions": [{"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"], '
            '"expected": []}]}',
            "duplicate key 'expected'; the keys of a JSON object must be unique",
        ),
        (
            "set.json",
            '{"id": "s", "questions": [{"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a"], '
            '"grades": {"a": 2, "a": 3}}]}',
            "duplicate key 'a'; the keys of a JSON object must be unique",
        ),
        (
            "set.jsonl",
            QUESTION + '\n{"id": "q2", "text": "beta", "form": "GAP", "expected": [], "text": "gamma"}\n',
            "line 2: duplicate key 'text'; the keys of a JSON object must be unique",
        ),
        (
            "set.jsonl",
            '{"id": "q1", "text": "alpha", "form": "MATCH", "expected": ["a", "b"], '
            '"grades": {"a": 2, "b": 1, "a": 3}}\n',
            "line 1: duplicate key 'a'; the keys of a JSON object must be unique",
        ),
        (
            "set.jsonl",
            '{"set": {"id": "s", "id": "t"}}\n' + QUESTION + "\n",
            "line 1: duplicate key 'id'; the keys of a JSON object must be unique",
        ),
    ],
    ids=["json-set", "json-question", "json-grades", "jsonl-question", "jsonl-grades", "jsonl-header"],
)
def test_a_duplicate_key_in_a_json_set_file_is_refused_naming_file_and_key(
    write_set: WriteSet, name: str, text: str, message: str
) -> None:
    path = write_set(name, text)
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)
    assert str(caught.value) == f"{path}: {message}"


def test_a_jsonl_line_with_colons_in_its_text_still_loads(write_set: WriteSet) -> None:
    question = {"id": "q:1", "text": "at 10:30?", "form": "MATCH", "expected": ["a:b"], "grades": {"a:b": 1}}
    path = write_set("set.jsonl", json.dumps(question) + "\n")
    [loaded] = load_golden_set(path).questions
    assert (loaded.id, loaded.text, loaded.expected) == ("q:1", "at 10:30?", frozenset({"a:b"}))


# --------------------------------------------------------------------------- bearer tokens


@pytest.mark.parametrize("value", ["Bearer abcdef", "bearer abc123", "auth: Bearer a.b-c~", "Bearer 4f8a9b2c"])
def test_a_bearer_token_of_six_or_more_characters_is_a_secret(value: str) -> None:
    assert looks_like_secret(value) == "a bearer token"
    with pytest.raises(InputError, match=r"looks like a secret \(a bearer token\)"):
        parse_provenance({"pipeline_identity": value}, "goldeneval.yaml")


@pytest.mark.parametrize("value", ["Bearer abcde", "bearer-token-free", "bearer"])
def test_shorter_or_joined_bearer_words_are_not(value: str) -> None:
    assert looks_like_secret(value) is None


# --------------------------------------------------------------------------- control characters


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_control_characters_in_the_short_rankings_line_are_escaped(cli_workspace: CliWorkspace) -> None:
    cli_workspace.write_set([{"id": "q\x1b[2J1", "text": "alpha", "form": "MATCH", "expected": ["a"]}])
    result = cli_workspace.evaluate({"alpha": ["a"]}, "--metrics", "ndcg@10")
    assert result.exit_code == ExitCode.OK, result.output
    [line] = [line for line in result.stdout.splitlines() if "Shorter than the depth" in line]
    assert line.endswith(": q\\x1b[2J1")
    assert "\x1b" not in result.output


# --------------------------------------------------------------------------- corpus symlinks


def test_a_file_symlink_in_a_corpus_folder_pointing_outside_it_is_refused(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    (corpus / "sub").mkdir(parents=True)
    (corpus / "a.md").write_text("# A\nalpha")
    secret = tmp_path / "outside.txt"
    secret.write_text("not part of the corpus")
    (corpus / "sub" / "leak.txt").symlink_to(secret)
    with pytest.raises(CorpusError) as caught:
        load_corpus(corpus)
    assert str(caught.value) == (
        f"{corpus / 'sub' / 'leak.txt'}: a symbolic link to a file outside the corpus folder {corpus}; "
        "copy the file into the folder or remove the link"
    )


def test_a_symlink_inside_the_corpus_folder_is_a_document(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "a.md").write_text("# A\nalpha")
    (corpus / "alias.md").symlink_to(corpus / "a.md")
    linked = tmp_path / "linked"
    linked.symlink_to(corpus)  # the folder itself may be reached through a link
    assert [doc.id for doc in load_corpus(linked)] == ["a", "alias"]
