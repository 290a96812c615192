"""The ``goldeneval`` command: the same runs the Dagster assets make, for CI and terminals.

The group, its exit codes and its list of commands live in :mod:`goldeneval.cli.app`; each
command family in a module of its own (:mod:`~goldeneval.cli.retrieval`,
:mod:`~goldeneval.cli.store`, :mod:`~goldeneval.cli.prompts`, :mod:`~goldeneval.cli.answers`,
:mod:`~goldeneval.cli.judgments`),
imported only when one of its commands runs.
"""

from goldeneval.cli.app import ExitCode, main

__all__ = ["ExitCode", "main"]
