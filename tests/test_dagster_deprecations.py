"""Deprecated Dagster APIs are errors in the test suite when our code calls them (issue 43):
pyproject.toml's filterwarnings turns a DeprecationWarning attributed to goldeneval's own
modules into an error, so that the next Dagster release cannot break the nightly unannounced."""

from __future__ import annotations

import dagster as dg
import pytest

from resources.goldeneval import GoldenEvalResource


class _OldStyle(dg.ConfigurableResource):  # type: ignore[type-arg]
    """A resource that reads the run id the way resources/goldeneval.py did before."""

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        _ = context.run_id  # deprecated: context.run.run_id is the supported way


@dg.asset
def _needs_old_style(old: _OldStyle) -> int:
    return 1


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_deprecated_dagster_api_called_from_our_code_fails_the_run() -> None:
    with pytest.raises(dg.DagsterResourceFunctionError) as raised:
        dg.materialize([_needs_old_style], resources={"old": _OldStyle()})
    cause = raised.value.__cause__
    assert isinstance(cause, DeprecationWarning)
    assert "InitResourceContext.run_id is deprecated" in str(cause)


@dg.asset
def _run_id_seen(goldeneval: GoldenEvalResource) -> str | None:
    return goldeneval._run_id


def test_the_goldeneval_resource_reads_the_run_through_the_supported_api() -> None:
    result = dg.materialize([_run_id_seen], resources={"goldeneval": GoldenEvalResource(config_path="goldeneval.yaml")})
    assert result.success
    assert result.output_for_node("_run_id_seen") == result.run_id
