"""``goldeneval runs`` and ``goldeneval accept`` name the stored rates by what each kind calls
them, not by retrieval's words alone: the runs table heads its rate columns with every
declared kind's title for them, and the accept line names an accepted toy run's own rates."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.cli.store import rate_headers
from goldeneval.core.kinds import register_details_kind
from goldeneval.history import door
from goldeneval.kinds import built_in_kinds
from goldeneval.store import open_store
from tests.toy_kind import TOY_DECLARATION, TOY_KIND, ToySpec


@pytest.fixture(autouse=True)
def toy_details() -> None:
    """The toy's details reader, as the lookup registers it from an installed declaration."""
    register_details_kind(TOY_KIND)


def test_the_rate_columns_are_headed_by_each_declared_kinds_title() -> None:
    assert rate_headers(built_in_kinds()) == ("top-1/pass", "top-3/mean")
    assert rate_headers([*built_in_kinds(), TOY_DECLARATION]) == ("top-1/pass/first", "top-3/mean/mrr")


def test_a_toy_run_is_listed_and_accepted_in_its_own_words(tmp_path: Path) -> None:
    store = tmp_path / "results.duckdb"
    spec = ToySpec(options={"firsts": "1101"})
    stored = door.record_and_judge(open_store(store), spec.run("toy-set", "toy"), spec).stored

    listed = CliRunner().invoke(main, ["runs", "--store", str(store)])
    assert listed.exit_code == 0, listed.output
    header, _, row = listed.output.splitlines()[:3]
    assert header.split() == [
        *("run", "created", "(UTC)", "set", "model", "grader", "status", "scored"),
        *("top-1/pass", "top-3/mean", "accepted"),
    ]
    assert row.startswith(stored.id[:12]) and row.split()[-2:] == ["0.750", "0.750"]

    args = ["accept", stored.id, "--reason", "the toy is fine", "--by", "bob", "--store", str(store)]
    accepted = CliRunner().invoke(main, args)
    assert accepted.exit_code == 0, accepted.output
    assert accepted.output.startswith(
        f"accepted run {stored.id} (set toy-set, series toy, reranked first 0.750, mean reciprocal rank 0.750) "
        "accepted by bob: the toy is fine;"
    )
