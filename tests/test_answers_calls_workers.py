"""``--workers`` (issue 24): prompts asked and graded at once against a served model, results in
set order whatever the number of workers; a model that declares ``thread_safe = False`` is
asked one prompt at a time, with a notice."""

from __future__ import annotations

import json
import textwrap
import time
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
DELAY_S = 0.6


def _reply(body: dict[str, Any]) -> Any:
    number = last_user_message(body).removeprefix("Number ").removesuffix("?")
    return answer(f"It is {number}." if number != "5" else "No idea.", delay_s=DELAY_S)


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
    with chat_server(default=_reply) as server:
        started = time.monotonic()
        result = _run(tmp_path, *_served(server.base_url), "--workers", "8")
        elapsed = time.monotonic() - started
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 8
    assert elapsed < 8 * DELAY_S / 2, f"{elapsed:.2f} s: not concurrent"
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
