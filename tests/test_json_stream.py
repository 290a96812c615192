"""``--format json`` is written as it is produced (issue 26): the document is the same JSON,
the questions are written a chunk at a time from the run's columns, never held as one string."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from goldeneval.cli import main
from goldeneval.core.json_stream import write_json
from goldeneval.retrieval.details import retrieval_details
from goldeneval.store import open_store
from goldeneval.store.location import StoreLocation

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4)
)


def _written(document: dict[str, Any]) -> str:
    chunks: list[str] = []
    write_json(document, chunks.append)
    return "".join(chunks)


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
@settings(max_examples=60, deadline=None)
@given(st.dictionaries(st.text(max_size=6), _VALUES, max_size=6))
def test_a_document_without_iterators_is_written_byte_for_byte_as_json_dumps_indent_2(document: dict[str, Any]) -> None:
    assert _written(document) == json.dumps(document, indent=2) + "\n"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@settings(max_examples=30, deadline=None)
@given(st.lists(_VALUES, max_size=600), st.dictionaries(st.text(max_size=6), _VALUES, max_size=3))
def test_an_iterator_value_is_written_as_the_array_of_its_elements(items: list[Any], rest: dict[str, Any]) -> None:
    document = {"questions": iter(items), **{k: v for k, v in rest.items() if k != "questions"}}
    expected = {"questions": items, **{k: v for k, v in rest.items() if k != "questions"}}
    assert json.loads(_written(document)) == expected


def test_the_elements_are_written_while_the_iterator_is_still_producing() -> None:
    produced = 0
    seen_at_write: list[int] = []

    def questions() -> Iterator[dict[str, int]]:
        nonlocal produced
        for i in range(2_000):
            produced += 1
            yield {"id": i}

    write_json({"questions": questions()}, lambda chunk: seen_at_write.append(produced))
    assert produced == 2_000
    assert min(count for count in seen_at_write if count) <= 256  # the first chunk, not the whole array
    assert len(seen_at_write) > 2_000 // 256


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("privacy", ["full", "metadata_only"])
def test_the_cli_document_lists_the_questions_as_the_stored_records_say(tmp_path: Path, privacy: str) -> None:
    store = tmp_path / "s.duckdb"
    args = ["retrieval", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--store", str(store)]
    args += ["--cache-dir", str(tmp_path / "c"), "--no-progress", "--privacy", privacy, "--format", "json"]
    args += ["--metrics", "ndcg@10,recall@100,mrr@10"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    opened = open_store(StoreLocation.parse(store))
    (listed,) = opened.list_runs()
    stored = opened.get_run(listed.id)
    assert stored is not None
    details = retrieval_details(stored)
    assert document["questions"] == [row.to_json() for row in details.question_rows()]
    assert len(document["questions"]) == 81
    assert document["aggregates"] == details.to_json()["aggregates"]
    assert ("documents" in document["questions"][0]) == (privacy == "full")


class _Chatty:
    def retrieve(self, question: str, limit: int) -> list[str]:
        print("chatty plug-in: asked", question[:10])
        return []


def chatty_factory(context: object) -> _Chatty:
    print("chatty plug-in: built")
    return _Chatty()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_what_a_plugin_prints_goes_to_stderr_so_stdout_is_one_json_document(tmp_path: Path) -> None:
    args = ["retrieval", "--set", "transit-sample", "--retriever", f"{__name__}:chatty_factory", "--format", "json"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert len(json.loads(result.stdout)["questions"]) == 81
    assert "chatty plug-in: built" in result.stderr and "chatty plug-in: asked" in result.stderr
