"""The suite file and the result store, as one Dagster resource."""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg
from pydantic import PrivateAttr

from goldeneval.answers.spec import PromptRunSpec
from goldeneval.retrieval.spec import RunSpec
from goldeneval.store import Store, open_store
from goldeneval.suite import Suite, load_suite


class GoldenEvalResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """Where the suite file is; everything else is read from it.  The store, the tables and the
    cache are resolved as the CLI resolves them (``goldeneval.core.storage``): ``$GOLDENEVAL_STORE``,
    ``$GOLDENEVAL_TABLES``, ``$GOLDENEVAL_CACHE`` of the process running the step, else the
    file's ``storage:`` section, else ``.goldeneval/`` beside the file.

    The suite file is read once per resource instance (Dagster makes one per step, or per
    run in process), not once per call: loading it loads every set to learn its id.
    """

    config_path: str
    _suite: Suite | None = PrivateAttr(default=None)

    def suite(self) -> Suite:
        if self._suite is None:
            self._suite = load_suite(self.config_path)
        return self._suite

    def run_spec(self, where: Mapping[str, str]) -> RunSpec:
        """The run specification of one (set x retriever) partition, ``assets.partitions.cell``."""
        return self.suite().run_spec(where["set"], where["retriever"])

    def prompt_run_spec(self, where: Mapping[str, str]) -> PromptRunSpec:
        """The run specification of one (prompt set x model) partition, ``assets.partitions.prompt_cell``."""
        return self.suite().prompt_run_spec(where["prompt_set"], where["model"])

    def open_store(self) -> Store:
        """The result store (``$GOLDENEVAL_STORE``, else ``storage.store``): the DuckDB file, or
        the PostgreSQL database its URL names."""
        return open_store(self.suite().store_location)
