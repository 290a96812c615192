"""A run kind's Dagster part, found from its declaration (:mod:`goldeneval.kinds`).

A kind declares its Dagster part by import path (``KindDeclaration.dagster``): a
:class:`KindAssets` beside its assets (``assets.evaluation:RETRIEVAL_DAGSTER``,
``assets.prompts:PROMPT_DAGSTER``, or a module of the package that declares a third kind).
``pipelines.build`` loads it here and loops over the kinds: their assets, jobs, schedules and
sensors are named by their declaration, built by the shared factories.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import dagster as dg

from assets.series import CliRuns
from goldeneval.kinds import KindDeclaration, load_target

__all__ = ["KindAssets", "kind_assets"]


@dataclass(frozen=True)
class KindAssets:
    """What a kind builds for Dagster over its partitions."""

    build: Callable[[dg.MultiPartitionsDefinition, str], list[Any]]
    """Its assets, checks and observed per-series assets, given its partitions and the kind of
    store the suite writes to (``duckdb``, ``postgres``)."""
    cli_runs: CliRuns | None = None
    """How the runs of its series that the CLI stored join its plots (its CLI-run sensor), if so."""
    nightly_executor: bool = False
    """Whether its nightly job runs on ``$GOLDENEVAL_EXECUTOR`` (``pipelines.executors``)."""


def kind_assets(kind: KindDeclaration) -> KindAssets:
    """The Dagster part ``kind`` declares."""
    found = load_target(kind.dagster)
    if not isinstance(found, KindAssets):
        raise TypeError(f"run kind {kind.name!r}: {kind.dagster} is not an assets.kinds.KindAssets")
    return found
