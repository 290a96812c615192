"""The model-call policy holds for ``goldeneval answers`` too (issue 24): a second run over the
transit sample with a warm response cache makes no model request, and the answer run's series
defaults to ``<retriever id>+openai:<served model>``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.store import ResultStore
from tests.chat_server import ChatServer, answer, chat_server


def _answers(tmp_path: Path, server: ChatServer, *extra: str) -> Result:
    args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--model", "goldeneval.openai"]
    args += ["--model-option", f"base_url={server.base_url}", "--model-option", "model=tiny"]
    args += ["--model-option", "revision=r1", "--store", str(tmp_path / "s.duckdb")]
    args += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra]
    return CliRunner().invoke(main, args)


def _reply(body: dict[str, Any]) -> Any:
    return answer("The context does not answer the question.")


@pytest.mark.slow
def test_a_second_answers_run_with_a_warm_cache_makes_no_model_request(tmp_path: Path) -> None:
    with chat_server(default=_reply) as server:
        first = _answers(tmp_path, server)
        assert first.exit_code == 0, first.output
        sent = len(server.requests)
        assert sent == 81
        second = _answers(tmp_path, server)
        assert second.exit_code == 0, second.output
        assert len(server.requests) == sent
        assert _answers(tmp_path, server, "--no-cache").exit_code == 0
        assert len(server.requests) == 2 * sent
    series = {r.model for r in ResultStore(tmp_path / "s.duckdb").list_runs()}
    assert series == {"goldeneval.lexical", "goldeneval.lexical+openai:tiny"}
