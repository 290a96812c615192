"""`goldeneval purge`: whole runs go, rows and Parquet partitions together (on both store backends)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.errors import InputError
from goldeneval.history.retention import parse_duration
from goldeneval.store import RunRecord, SliceRates, StoreLocation, open_store
from tests.records import details

NOW = datetime.now(UTC)


def record(set_id: str, age: timedelta, tables_run: str, model: str = "m") -> RunRecord:
    return RunRecord(
        set_id=set_id,
        model=model,
        grader="retrieval_hit_rate",
        pass_rate=0.5,
        mean_score=0.5,
        question_count=2,
        scored_count=2,
        error_count=0,
        details=details(tables_run_id=tables_run),
        slices=[SliceRates("form", "GAP", 2, 2, 0.5, 0.5)],
        created_at=NOW - age,
    )


@pytest.fixture
def populated(tmp_path: Path, store_location: StoreLocation) -> tuple[str, Path, dict[str, str]]:
    """Five runs in a DuckDB or PostgreSQL store (``store_location``), their Parquet files beside."""
    store = open_store(store_location)
    ids = {
        "old-a": store.save_run(record("a", timedelta(days=40), "dg-old-a")).id,
        "old-b": store.save_run(record("b", timedelta(days=40), "dg-old-b")).id,
        "new-a": store.save_run(record("a", timedelta(days=1), "dg-new-a")).id,
        # A newer run built from the same files (a copy stored before summaries were idempotent,
        # here under another series) keeps them alive:
        "old-c": store.save_run(record("c", timedelta(days=40), "dg-shared")).id,
        "new-c": store.save_run(record("c", timedelta(days=1), "dg-shared", model="m-copy")).id,
    }
    parquet = tmp_path / "tables"
    for set_id, writer in (("a", "dg-old-a"), ("b", "dg-old-b"), ("a", "dg-new-a"), ("c", "dg-shared")):
        for table in ("retriever_rankings", "question_hits"):
            folder = parquet / table / f"set={set_id}" / "retriever=m"
            folder.mkdir(parents=True, exist_ok=True)
            (folder / f"20261001T020000000000Z_{writer}.parquet").write_bytes(b"PAR1")
    return str(store_location.path or store_location.url), parquet, ids


def purge(store: str, parquet: Path, *extra: str) -> str:
    result = CliRunner().invoke(
        main, ["purge", "--store", store, "--tables-root", str(parquet), "--older-than", "30d", *extra]
    )
    assert result.exit_code == ExitCode.OK, result.output
    return result.output


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90m", timedelta(minutes=90)),
        ("12h", timedelta(hours=12)),
        ("30d", timedelta(days=30)),
        ("8w", timedelta(weeks=8)),
    ],
)
def test_durations_parse(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


def test_a_malformed_duration_is_invalid_input() -> None:
    with pytest.raises(InputError, match="duration '30 days': expected a whole number and a unit"):
        parse_duration("30 days")


def remaining_writers(parquet: Path) -> list[str]:
    return sorted({p.stem.partition("_")[2] for p in parquet.rglob("*.parquet")})


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_purge_deletes_old_runs_with_their_slices_and_table_files(
    populated: tuple[str, Path, dict[str, str]],
) -> None:
    store_path, parquet, ids = populated
    output = purge(store_path, parquet)
    assert output.splitlines()[0] == "Deleted 3 run(s) and 4 Parquet table file(s)."
    store = open_store(store_path)
    assert {r.id for r in store.list_runs()} == {ids["new-a"], ids["new-c"]}
    assert store.slices(ids["old-a"]) == []
    assert remaining_writers(parquet) == ["dg-new-a", "dg-shared"]


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_purge_can_be_limited_to_one_set(populated: tuple[str, Path, dict[str, str]]) -> None:
    store_path, parquet, ids = populated
    purge(store_path, parquet, "--set", "b")
    assert ids["old-b"] not in {r.id for r in open_store(store_path).list_runs()}
    assert len(open_store(store_path).list_runs()) == 4
    assert remaining_writers(parquet) == ["dg-new-a", "dg-old-a", "dg-shared"]


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_dry_run_reports_and_deletes_nothing(populated: tuple[str, Path, dict[str, str]]) -> None:
    store_path, parquet, _ = populated
    output = purge(store_path, parquet, "--dry-run")
    assert output.splitlines()[0] == "Would delete 3 run(s) and 4 Parquet table file(s)."
    assert len(open_store(store_path).list_runs()) == 5
    assert len(list(parquet.rglob("*.parquet"))) == 8


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_purge_deletes_the_html_reports_of_the_runs_it_deletes(
    populated: tuple[str, Path, dict[str, str]],
) -> None:
    """A run's HTML report shows its questions and documents: it goes with the run."""
    from goldeneval.store.parquet import report_file

    store_path, parquet, ids = populated
    reports = {name: report_file(parquet, run_id) for name, run_id in ids.items()}
    for path in reports.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("<html></html>")
    assert purge(store_path, parquet, "--dry-run").splitlines()[0] == (
        "Would delete 3 run(s) and 4 Parquet table file(s) and 3 HTML report(s)."
    )
    assert all(path.is_file() for path in reports.values())
    assert purge(store_path, parquet).splitlines()[0] == (
        "Deleted 3 run(s) and 4 Parquet table file(s) and 3 HTML report(s)."
    )
    assert sorted(name for name, path in reports.items() if path.is_file()) == ["new-a", "new-c"]
