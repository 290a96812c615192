"""The ``goldeneval`` command: the same runs the Dagster assets make, for CI and terminals.

The group and its shared options live in :mod:`goldeneval.cli.app`; each command family in a
module of its own registers its commands on it: :mod:`~goldeneval.cli.retrieval`,
:mod:`~goldeneval.cli.store` and :mod:`~goldeneval.cli.answers`.
"""

from goldeneval.cli import answers, judgments, retrieval, store
from goldeneval.cli.app import ExitCode, main

__all__ = ["ExitCode", "answers", "judgments", "main", "retrieval", "store"]
