"""Two served models behind ``goldeneval.openai`` are two series with two quality scores (issue 24).

Before, the series defaulted to the factory id, so every served model landed in the series
``goldeneval.openai`` and ``goldeneval quality`` scored whichever ran last."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.prompts.openai_chat import MUTABLE_ALIAS
from goldeneval.store import ResultStore
from tests.chat_server import answer, chat_server

PROMPTS = [
    {"id": "capital", "prompt": "Capital of France?", "assertions": [{"type": "contains", "value": "Paris"}]},
    {"id": "river", "prompt": "River of Paris?", "assertions": [{"type": "contains-any", "values": ["Seine"]}]},
]


def _reply(body: dict[str, Any]) -> Any:
    """``good`` knows; ``bad`` does not; ``half`` knows the capital only."""
    model = body["model"]
    if model == "good":
        return answer("Paris, on the Seine.")
    return answer("Paris." if model == "half" else "London.")


def _prompts(tmp_path: Path, base_url: str, served: str, *extra: str) -> Result:
    set_path = tmp_path / "capitals.yaml"
    set_path.write_text(yaml.safe_dump({"id": "capitals", "prompts": PROMPTS}))
    args = ["prompts", "--set", str(set_path), "--model", "goldeneval.openai"]
    args += ["--model-option", f"base_url={base_url}", "--model-option", f"model={served}"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    return CliRunner().invoke(main, [*args, *extra])


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_two_served_models_get_two_series_and_two_quality_scores(tmp_path: Path) -> None:
    with chat_server(default=_reply) as server:
        assert _prompts(tmp_path, server.base_url, "good").exit_code == 0
        assert _prompts(tmp_path, server.base_url, "bad").exit_code == 0
    runs = ResultStore(tmp_path / "s.duckdb").list_runs()
    assert sorted(r.model for r in runs) == ["openai:bad", "openai:good"]
    # the series is a name; the provenance still records the served name as a mutable alias
    assert {r.provenance["model_revision"] for r in runs} == {f"good{MUTABLE_ALIAS}", f"bad{MUTABLE_ALIAS}"}
    quality = CliRunner().invoke(
        main, ["quality", "openai:bad", "openai:good", "--store", str(tmp_path / "s.duckdb"), "--format", "json"]
    )
    assert quality.exit_code == 0, quality.output
    assert json.loads(quality.output) == [
        {"model": "openai:good", "quality_score": 1.0},
        {"model": "openai:bad", "quality_score": 0.0},
    ]


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_second_served_model_is_a_baseline_of_its_own_not_a_regression_of_the_first(tmp_path: Path) -> None:
    with chat_server(default=_reply) as server:
        assert _prompts(tmp_path, server.base_url, "good").exit_code == 0
        result = _prompts(tmp_path, server.base_url, "half", "--fail-on-regression")
    assert result.exit_code == 0, result.output
    assert "Regression verdict: baseline" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_name_still_overrides_the_default_series(tmp_path: Path) -> None:
    with chat_server(default=_reply) as server:
        assert _prompts(tmp_path, server.base_url, "good", "--name", "prod-assistant").exit_code == 0
    assert [r.model for r in ResultStore(tmp_path / "s.duckdb").list_runs()] == ["prod-assistant"]
