"""The retrieval kind (ADR-072), declared: (golden set x retriever) partitions, the graph
golden sets -> rankings -> hits -> summary (``assets.evaluation``), the nightly names, and the
commands of its family (:mod:`goldeneval.cli.retrieval`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from goldeneval.kinds import KindCommand, KindDeclaration, KindNames


def _cells(suite: Any) -> tuple[Sequence[str], Sequence[str]]:
    cells: tuple[Sequence[str], Sequence[str]] = suite.retrieval_cells
    return cells


def _spec(suite: Any, where: Mapping[str, str]) -> Any:
    return suite.run_spec(where["set"], where["retriever"])


RETRIEVAL = KindDeclaration(
    name="retrieval",
    cell="golden set x retriever",
    dimensions=("set", "retriever"),
    cells=_cells,
    spec=_spec,
    assets=("golden_question_sets", "retriever_rankings", "question_hits", "evaluation_summary"),
    names=KindNames.prefixed("", cli_sensor="cli_run_series_sensor"),
    stored="evaluation",
    title="goldeneval: nightly evaluation",
    rates=(("top-1", "top1_hit_rate"), ("top-3", "top3_hit_rate")),
    dagster="assets.evaluation:RETRIEVAL_DAGSTER",
    details="goldeneval.retrieval.details:RETRIEVAL_DETAILS",
    commands={
        "export-run": KindCommand(
            "goldeneval.cli.retrieval:export_run",
            "Write a stored run as a TREC run file (qid Q0 docid rank score tag).",
        ),
        "retrieval": KindCommand(
            "goldeneval.cli.retrieval:retrieval",
            "Run a golden set against a retriever, print and store the run, report the verdict.",
        ),
        "schema": KindCommand("goldeneval.cli.retrieval:schema", "Print the JSON Schema of golden set files."),
        "sets": KindCommand(
            "goldeneval.cli.retrieval:sets",
            "List the registered golden question sets and where each comes from.",
        ),
    },
)
