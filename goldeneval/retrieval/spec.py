"""The run specification: everything one evaluation needs, frozen and validated.

Both front doors build one — the CLI from its flags (:mod:`goldeneval.cli`), Dagster from one
suite cell (:meth:`goldeneval.suite.Suite.run_spec`) — and hand it to the verbs of
:mod:`goldeneval.retrieval.pipeline`.  Nothing else decides how a run is evaluated, stored or judged.
How a run is asked and scored is declared once, in :class:`~goldeneval.retrieval.settings.RetrievalSettings`,
which the suite file and the ``goldeneval retrieval`` flags share.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from goldeneval.core.spec import SpecBase
from goldeneval.retrieval.metrics import Metric, parse_metrics
from goldeneval.retrieval.settings import RetrievalSettings

__all__ = ["RunSpec"]


class RunSpec(SpecBase, RetrievalSettings):
    """One evaluation of a golden set against a retriever, and how its verdict is decided.

    The series name is what a run is stored under and compared within: a CLI run with
    ``--name lexical`` and a nightly run of the suite's retriever ``lexical`` are one series.
    """

    set_ref: str = Field(min_length=1, description="Registered set id, set file or BEIR folder.")
    expected_set_id: str | None = Field(
        default=None, description="The id the set must have (a suite cell's set): a changed id fails."
    )
    sets_dirs: tuple[Path, ...] = ()
    beir_split: str = "test"
    topics: Path | None = Field(default=None, description="Topics file when set_ref is TREC qrels.")
    topic_field: str | None = Field(default=None, description="The topics file's field to ask (default: title/text).")
    retriever_id: str = Field(min_length=1, description="Registered retriever id or package.module:factory.")
    options: dict[str, str] = Field(default_factory=dict)
    corpus: Path | None = Field(default=None, description="Corpus path; None: the set's own.")

    @property
    def parsed_metrics(self) -> tuple[Metric, ...]:
        return parse_metrics(self.metrics)
