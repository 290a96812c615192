"""A third kind of run goes through the shared machinery without a shared module being edited.

The toy kind (``tests/toy_kind.py``) is everything a kind supplies (its details, its evaluated
run, its specification) and nothing else: the door, the store, the comparison states and the
gate take it as they take retrieval and answer runs.  It is not installed here, so its details
reader is registered in-process (:func:`toy_details`); installed, its declaration names it
(``tests/test_run_kinds_declared.py`` reads its stored runs back in fresh processes).
``tests/test_run_kinds_dagster.py`` puts it through the shared Dagster factories.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from goldeneval.core.errors import StoreError
from goldeneval.core.gate import ComparisonState, GateDecision
from goldeneval.core.kinds import DetailsKind, read_details, register_details_kind
from goldeneval.core.privacy import PrivacyMode
from goldeneval.history import door
from goldeneval.store import open_store
from tests.toy_kind import ALL_FIRST, HALF_FIRST, TOY_KIND, ToyDetails, ToyRun, ToySpec, _read_toy


@pytest.fixture(autouse=True)
def toy_details() -> None:
    """The toy's details reader, as the lookup registers it from an installed declaration."""
    register_details_kind(TOY_KIND)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_toy_kind_is_recorded_judged_and_gated_by_the_shared_door(tmp_path: Path) -> None:
    store = open_store(tmp_path / "results.duckdb")
    first = door.record_and_judge(store, ToyRun(ALL_FIRST), ToySpec())
    again = door.record_and_judge(store, ToyRun(ALL_FIRST), ToySpec())
    worse = door.record_and_judge(store, ToyRun(HALF_FIRST), ToySpec())

    assert (first.verdict.state, first.gate) == (ComparisonState.BASELINE, GateDecision.PASS)
    assert (again.verdict.state, again.gate) == (ComparisonState.COMPARABLE, GateDecision.PASS)
    assert (worse.verdict.state, worse.gate) == (ComparisonState.COMPARABLE, GateDecision.REGRESSION)
    assert worse.verdict.reason.startswith("reranked first fell 1.000 -> 0.500 (-0.500, allowed -0.100)")
    paired = {p.rate: p for p in worse.verdict.paired}
    assert list(paired) == ["reranked first"]  # the mean has no paired outcome
    assert sorted(paired["reranked first"].newly_failing) == sorted(f"q{i}" for i in range(1, 20, 2))


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_stored_toy_run_reads_back_as_its_own_details(tmp_path: Path) -> None:
    store = open_store(tmp_path / "results.duckdb")
    stored = door.record(store, ToyRun(HALF_FIRST), PrivacyMode.FULL)
    again = store.get_run(stored.id)
    assert again is not None
    assert again.details_as(ToyDetails).firsts == HALF_FIRST
    outcomes = again.paired_outcomes("pass_rate")
    assert outcomes is not None and dict(zip(outcomes.ids, outcomes.hits.tolist(), strict=True)) == HALF_FIRST


def test_details_of_a_kind_nobody_registered_are_one_line_naming_the_run() -> None:
    with pytest.raises(StoreError, match=r"^run r9: details of kind 'nobody', which no installed run kind reads"):
        read_details('{"kind": "nobody"}', "run r9")


def test_a_kind_name_cannot_be_taken_twice() -> None:
    with pytest.raises(ValueError, match="registered twice"):
        register_details_kind(DetailsKind(names=("toy-rerank",), read=_read_toy))
    assert register_details_kind(TOY_KIND) is TOY_KIND
