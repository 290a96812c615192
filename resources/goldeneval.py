"""The suite file and the result store, as one Dagster resource."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import dagster as dg
from pydantic import PrivateAttr

from goldeneval.kinds import KindDeclaration
from goldeneval.prompts.spec import PromptRunSpec
from goldeneval.retrieval.spec import RunSpec
from goldeneval.store import Store, open_store
from goldeneval.suite import Suite, load_suite


class RunSuites:
    """The suite file loaded once per Dagster run in this process: by run id and file, the
    latest few runs only."""

    def __init__(self, kept: int = 4) -> None:
        self._kept = kept
        self._suites: OrderedDict[tuple[str, str], Suite] = OrderedDict()
        self._lock = threading.Lock()  # steps of a run may execute in threads of one process

    def suite(self, config_path: str, run_id: str | None) -> Suite:
        """The suite file of ``config_path`` as the run ``run_id`` first read it (read now when
        the run has not, or when there is no run)."""
        if run_id is None:
            return load_suite(config_path)
        with self._lock:
            key = (run_id, config_path)
            if key not in self._suites:
                self._suites[key] = load_suite(config_path)
                while len(self._suites) > self._kept:
                    self._suites.popitem(last=False)
            return self._suites[key]


RUN_SUITES = RunSuites()


class GoldenEvalResource(dg.ConfigurableResource):  # type: ignore[type-arg]
    """Where the suite file is; everything else is read from it.  The store, the tables and the
    cache are resolved as the CLI resolves them (``goldeneval.core.storage``): ``$GOLDENEVAL_STORE``,
    ``$GOLDENEVAL_TABLES``, ``$GOLDENEVAL_CACHE`` of the process running the step, else the
    file's ``storage:`` section, else ``.goldeneval/`` beside the file.

    The suite file is read once per Dagster run in a process (:data:`RUN_SUITES`), not once
    per call nor once per instance: loading it loads every set to learn its id, and a run in
    process makes two instances (the assets' and the Parquet IO manager's own).  Outside a
    run (an asset called directly) it is read once per instance.
    """

    config_path: str
    _suite: Suite | None = PrivateAttr(default=None)
    _run_id: str | None = PrivateAttr(default=None)

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        self._run_id = context.run.run_id if context.run is not None else None

    def suite(self) -> Suite:
        if self._suite is None:
            self._suite = RUN_SUITES.suite(self.config_path, self._run_id)
        return self._suite

    def run_spec(self, where: Mapping[str, str]) -> RunSpec:
        """The run specification of one (set x retriever) partition, ``assets.partitions.cell``."""
        return self.suite().run_spec(where["set"], where["retriever"])

    def prompt_run_spec(self, where: Mapping[str, str]) -> PromptRunSpec:
        """The run specification of one (prompt set x model) partition, ``assets.partitions.prompt_cell``."""
        return self.suite().prompt_run_spec(where["prompt_set"], where["model"])

    def kind_spec(self, kind: KindDeclaration, where: Mapping[str, str]) -> Any:
        """The run specification of one partition of a declared kind (``assets.partitions.kind_cell``)."""
        return kind.spec(self.suite(), where)

    def open_store(self) -> Store:
        """The result store (``$GOLDENEVAL_STORE``, else ``storage.store``): the DuckDB file, or
        the PostgreSQL database its URL names."""
        return open_store(self.suite().store_location)
