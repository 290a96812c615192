"""``Store.find_run`` resolves an id (or a unique prefix) and reads its run over one connection
(issue 26: the regression check finds its stored run this way on every nightly partition).
Counted, on both backends; the answers and the messages are those of ``resolve_run_id``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager

import pytest

from goldeneval.core.errors import InputError
from goldeneval.store import Store, StoreLocation, open_store
from goldeneval.store.sql import Sql
from tests.test_store import record


@pytest.fixture
def store(store_location: StoreLocation) -> Store:
    return open_store(store_location)


def _count_reads(store: Store, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    reads: list[int] = []
    original = store._read

    @contextmanager
    def counting() -> Iterator[Sql]:
        reads.append(1)
        with original() as sql:
            yield sql

    def read() -> AbstractContextManager[Sql]:
        return counting()

    monkeypatch.setattr(store, "_read", read)
    return reads


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize("text", ["abc123", "abd"])
def test_find_run_reads_the_id_and_its_run_over_one_connection(
    store: Store, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    for run_id in ("abc123", "abc", "abd999"):
        store.save_run(record(), run_id=run_id)
    expected = store.get_run(store.resolve_run_id(text))
    reads = _count_reads(store, monkeypatch)
    found = store.find_run(text)
    assert reads == [1]
    assert found == expected


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_find_run_says_what_resolve_run_id_says(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    for run_id in ("abc123", "abc456"):
        store.save_run(record(), run_id=run_id)
    for text in ("ab", "zz", "_bc"):
        with pytest.raises(InputError) as resolved:
            store.resolve_run_id(text)
        with pytest.raises(InputError) as found:
            store.find_run(text)
        assert str(found.value) == str(resolved.value)
    assert store.find_run("abc456", excluding="abc123").id == "abc456"
    reads = _count_reads(store, monkeypatch)
    with pytest.raises(InputError, match="run id: empty"):
        store.find_run("")
    assert reads == []  # refused before any connection, as before
