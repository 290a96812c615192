"""``--workers`` (issue 24): prompts asked and graded at once against a served model, results in
set order whatever the number of workers; a model that declares ``thread_safe = False`` is
asked one prompt at a time, with a notice."""

from __future__ import annotations

import json
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from tests.chat_server import answer, chat_server, last_user_message

PROMPTS = [
    {"id": f"p{n}", "prompt": f"Number {n}?", "assertions": [{"type": "contains", "value": str(n)}]} for n in range(8)
]
HANG_GUARD_S = 60
"""How long a request waits for its peers at most, so that a run that asks one prompt at a time
fails instead of hanging; never a measure of speed (docs/testing.md)."""


def _reply(body: dict[str, Any], wait: Callable[[], object] | None = None) -> Any:
    number = last_user_message(body).removeprefix("Number ").removesuffix("?")
    return answer(f"It is {number}." if number != "5" else "No idea.", wait=wait)


def _all_at_once(parties: int) -> Any:
    """A reply that is sent only once ``parties`` requests are being served at the same time (a
    barrier): a run that asks fewer at once gets no answer and fails."""
    barrier = threading.Barrier(parties)

    def reply(body: dict[str, Any]) -> Any:
        return _reply(body, wait=lambda: barrier.wait(HANG_GUARD_S))

    return reply


def _run(tmp_path: Path, *args: str) -> Result:
    set_path = tmp_path / "numbers.yaml"
    set_path.write_text(yaml.safe_dump({"id": "numbers", "prompts": PROMPTS}))
    common = ["prompts", "--set", str(set_path), "--store", str(tmp_path / "s.duckdb")]
    common += ["--cache-dir", str(tmp_path / "cache"), "--no-progress", "--format", "json"]
    return CliRunner().invoke(main, [*common, *args])


def _served(base_url: str) -> list[str]:
    return ["--model", "goldeneval.openai", "--model-option", f"base_url={base_url}", "--model-option", "model=tiny"]


@pytest.mark.slow
def test_workers_ask_at_once_and_keep_the_set_order(tmp_path: Path) -> None:
    """With ``--workers 8`` the eight prompts are asked at once (the server answers only when all
    eight requests are in flight together), and the results keep the set's order."""
    with chat_server(default=_all_at_once(8)) as server:
        result = _run(tmp_path, *_served(server.base_url), "--workers", "8", "--timeout", str(HANG_GUARD_S * 2))
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 8
    prompts = json.loads(result.stdout)["prompts"]
    assert [p["id"] for p in prompts] == [f"p{n}" for n in range(8)]
    assert [p["answer"] for p in prompts] == [f"It is {n}." if n != 5 else "No idea." for n in range(8)]
    assert [p["passed"] for p in prompts] == [n != 5 for n in range(8)]


UNSAFE_MODEL = textwrap.dedent(
    """
    import threading
    import time


    class OneAtATime:
        thread_safe = False

        def __init__(self):
            self.busy = threading.Lock()

        def complete(self, request):
            if not self.busy.acquire(blocking=False):
                raise RuntimeError("called concurrently")
            try:
                time.sleep(0.05)
                return request.question.removeprefix("Number ").removesuffix("?")
            finally:
                self.busy.release()


    def build(context):
        return OneAtATime()
    """
)


def test_a_model_that_is_not_thread_safe_is_asked_one_prompt_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "unsafe_model.py").write_text(UNSAFE_MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    result = _run(tmp_path, "--model", "unsafe_model:build", "--workers", "4")
    assert result.exit_code == 0, result.output
    assert (
        "goldeneval: notice: --workers 4 ignored: the model declares thread_safe = False, so the prompts are "
        "asked one at a time" in result.stderr
    )
    assert all(p["status"] == "ok" and p["passed"] for p in json.loads(result.stdout)["prompts"])
