"""Hostile YAML (issue 10): alias bombs, recursive aliases and duplicate keys are refused with
one short line naming the file and line, in set files and in the suite file alike."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from goldeneval.core.errors import GoldenSetError, InputError
from goldeneval.core.yaml_errors import MAX_ALIAS_NODES, UnsafeYAMLError, describe_yaml_error, load_yaml
from goldeneval.retrieval.golden import load_golden_set
from goldeneval.sample import SAMPLE_SET_PATH
from goldeneval.suite import load_suite
from tests.conftest import WriteSet

MAX_ERROR_LINE = 500


def alias_bomb(levels: int, indent: str) -> str:
    """The "billion laughs" pattern as a YAML block sequence: level n holds ten aliases of
    level n-1, so ``levels`` levels stand for 10**levels strings in about 60 bytes a level."""
    lines = [f"{indent}- &l0 [" + ", ".join(["lol"] * 10) + "]"]
    lines += [f"{indent}- &l{n} [" + ", ".join([f"*l{n - 1}"] * 10) + "]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


SET_HEAD = "id: bomb\nquestions:\n  - id: q1\n    form: MATCH\n    expected: []\n"
BOMB_ERROR = re.compile(
    r"unsafe YAML at line \d+, column \d+: aliases expand to more than 100000 nodes at alias \*l\d "
    r"\(an alias bomb\?\); write the repeated values out"
)


def test_an_alias_bomb_in_a_question_field_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bomb.yaml"
    path.write_text(SET_HEAD + "    text:\n" + alias_bomb(10, "      "))  # 10**10 strings; refused in ~5 ms
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and BOMB_ERROR.fullmatch(message.removeprefix(f"{path}: "))
    assert len(message) < MAX_ERROR_LINE and "\n" not in message


def test_an_alias_bomb_in_the_suite_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "goldeneval.yaml"
    path.write_text("retrievers:\n  bm25: {id: goldeneval.lexical}\nsets:\n" + alias_bomb(10, "  "))
    with pytest.raises(InputError) as caught:
        load_suite(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ") and BOMB_ERROR.fullmatch(message.removeprefix(f"{path}: "))
    assert len(message) < MAX_ERROR_LINE


def test_the_bomb_is_refused_at_the_alias_that_crosses_the_bound() -> None:
    # Levels 1-3 add 110 + 1,110 + 11,110 nodes; each alias *l3 on line 5 adds 11,111 more,
    # so the eighth (column 43) crosses 100,000.
    with pytest.raises(UnsafeYAMLError) as caught:
        load_yaml(alias_bomb(10, ""))
    assert describe_yaml_error(caught.value) == (
        "unsafe YAML at line 5, column 43: aliases expand to more than 100000 nodes at alias *l3 "
        "(an alias bomb?); write the repeated values out"
    )


def test_aliases_below_the_bound_still_load() -> None:
    shared = "ids: &ids [" + ", ".join(f"d{n}" for n in range(99)) + "]\n"  # 100 nodes per alias
    uses = "".join(f"q{n}: *ids\n" for n in range(MAX_ALIAS_NODES // 100))
    loaded = load_yaml(shared + uses)
    assert len(loaded) == 1 + MAX_ALIAS_NODES // 100 and loaded["q0"] is loaded["ids"]


@pytest.mark.parametrize(
    "document",
    ["a: &a [1, *a]\n", "a: &a {self: *a}\n"],
    ids=["sequence", "mapping"],
)
def test_a_recursive_alias_is_refused(tmp_path: Path, document: str) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(document)
    with pytest.raises(GoldenSetError, match=r": unsafe YAML at line 1, column \d+: recursive alias \*a \("):
        load_golden_set(path)


@pytest.mark.parametrize(
    ("document", "problem"),
    [
        (
            SET_HEAD + "    text: How much is a day ticket?\n    text: What does a day ticket cost?\n",
            "malformed YAML at line 7, column 5: duplicate key 'text' (first at line 6)",
        ),
        (
            "id: first\n" + SET_HEAD + "    text: t\n",
            "malformed YAML at line 2, column 1: duplicate key 'id' (first at line 1)",
        ),
        (
            SET_HEAD + "    text: t\n    'form': GAP\n",
            "malformed YAML at line 7, column 5: duplicate key 'form' (first at line 4)",
        ),
    ],
    ids=["question-field", "set-field", "quoted-and-plain"],
)
def test_a_duplicate_key_in_a_set_file_is_refused_naming_the_key(tmp_path: Path, document: str, problem: str) -> None:
    path = tmp_path / "set.yaml"
    path.write_text(document)
    with pytest.raises(GoldenSetError) as caught:
        load_golden_set(path)
    assert str(caught.value) == f"{path}: {problem}; keys of a mapping must be unique"


def test_a_duplicate_key_in_the_suite_file_is_refused_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "goldeneval.yaml"
    path.write_text("sets: [transit-sample]\nretrievers:\n  bm25: {id: goldeneval.lexical}\n  bm25: {id: x}\n")
    with pytest.raises(InputError) as caught:
        load_suite(path)
    assert str(caught.value) == (
        f"{path}: malformed YAML at line 4, column 3: duplicate key 'bm25' (first at line 3); "
        "keys of a mapping must be unique"
    )


def test_keys_of_different_types_are_not_duplicates() -> None:
    assert load_yaml("1: integer\n'1': string\n") == {1: "integer", "1": "string"}


def test_a_key_may_override_a_merged_key() -> None:
    assert load_yaml("base: &base {form: GAP, text: t}\nq: {<<: *base, form: MATCH}\n")["q"] == {
        "form": "MATCH",
        "text": "t",
    }


def test_the_bundled_sample_still_loads() -> None:
    loaded = load_golden_set(SAMPLE_SET_PATH)
    assert (loaded.id, len(loaded.questions)) == ("transit-sample", 81)


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("s.yaml", 'id: s\nquestions: [{id: q, text: t, form: MATCH, expected: ["\\ud83d"]}]\n'),
        ("s.json", '{"id": "s", "questions": [{"id": "q", "text": "t", "form": "MATCH", "expected": ["\\ud83d"]}]}'),
    ],
    ids=["yaml", "json"],
)
def test_an_escaped_lone_surrogate_is_refused_naming_the_file(write_set: WriteSet, name: str, content: str) -> None:
    path = write_set(name, content)
    with pytest.raises(GoldenSetError) as error:
        load_golden_set(path)
    assert str(error.value) == f"{path}: holds an escaped lone surrogate (such as \\ud83d), which is not text"


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("a:\t1\n", "found character '\\t' that cannot start any token"),
        ("a: [x?y]\n", "expected ',' or ']', but got '?'"),
        ("a: |#c\n x\n", "expected chomping or indentation indicators, but found '#'"),
        ("a: 1\n\ufeff", "could not find expected ':'"),
    ],
)
def test_yaml_libyaml_would_accept_is_refused_as_pyyaml_refuses_it(text: str, problem: str) -> None:
    """What goldeneval refuses is PyYAML's reading, not libyaml's: libyaml takes a tab after a
    colon, a '?' inside a flow scalar, a comment after a block indicator and a stray BOM (a
    faster path through libyaml was tried and dropped for this)."""
    import yaml

    with pytest.raises(yaml.YAMLError) as refused:
        load_yaml(text)
    assert problem in describe_yaml_error(refused.value)


def test_an_empty_tag_reads_as_pyyaml_reads_it() -> None:
    assert load_yaml("a: !\n") == {"a": None}


def test_a_date_the_calendar_refuses_is_invalid_input_naming_the_file_and_line(write_set: WriteSet) -> None:
    """YAML reads ``2001-13-45`` as a date; its month is no month: one line with the file and
    the line, never a traceback (a hostile review found ``internal error (ValueError ...)``)."""
    path = write_set("s.yaml", "id: s\ndescription: 2001-13-45\nquestions: [{id: q, text: t, form: MATCH}]\n")
    with pytest.raises(GoldenSetError) as error:
        load_golden_set(path)
    assert str(error.value).startswith(f"{path}: malformed YAML at line 2, column 14: '2001-13-45' is not a valid date")


def test_a_valid_date_still_reads_as_a_date() -> None:
    import datetime

    assert load_yaml("a: 2001-12-14\n") == {"a": datetime.date(2001, 12, 14)}
