"""The toy kind's command, ``goldeneval toy-rerank`` (declared in ``tests/toy_kind.py``): a
command family module of a kind another package declares, made of the shared parts (the door,
the store, the gate's exit codes)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from goldeneval.cli.app import run_guarded
from goldeneval.cli.options import GATE_EXIT_CODES
from goldeneval.history import door
from goldeneval.store import open_store
from tests.toy_kind import ToySpec


@click.command("toy-rerank")
@click.option("--set", "set_id", default="toy-set", show_default=True, help="The toy set's id.")
@click.option("--name", "series", default="toy", show_default=True, help="The series (the reranker's name).")
@click.option("--firsts", required=True, help="Per question, 1 when the reranker puts a target first.")
@click.option("--store", "store_path", type=click.Path(path_type=Path), required=True, help="The DuckDB store.")
@click.option("--fail-on-regression", is_flag=True, help="Exit non-zero unless the gate passes.")
def toy_rerank(set_id: str, series: str, firsts: str, store_path: Path, fail_on_regression: bool) -> None:
    """Record a toy reranker-only run, judge it and print the verdict."""
    spec = ToySpec(options={"firsts": firsts})
    outcome = run_guarded(lambda: door.record_and_judge(open_store(store_path), spec.run(set_id, series), spec))
    verdict = outcome.verdict
    click.echo(f"{outcome.stored.id} {verdict.state.value}, gate {outcome.gate.value}: {verdict.reason}")
    if fail_on_regression:
        sys.exit(int(GATE_EXIT_CODES[outcome.gate]))
