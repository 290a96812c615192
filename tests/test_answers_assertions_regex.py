"""Regular-expression assertions cannot hang a run (issue 24): they run on the ``regex`` package
under the run's ``--timeout``, which now covers grading as it covers the model call.

Before, ``(a+)+$`` on a 53-character answer hung ``goldeneval prompts`` (Python's ``re``
backtracks 2^53 ways and holds the GIL, so no timeout could fire)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.answers.bounded import TimeBoundGrader
from goldeneval.answers.golden import Assertion, AssertionType, PromptSetError, load_prompt_set
from goldeneval.answers.graders import DeterministicGrader, Grading, GradingItem
from goldeneval.answers.safe_regex import RegexTimeout, search, time_bound
from goldeneval.cli import main
from tests.chat_server import answer, chat_server

ANSWER = "a" * 53 + "!"
NESTED = "(a+)+$"
"""Catastrophic for ``re``; the ``regex`` engine sees through it and fails at once."""
ALTERNATION = "(a|aa)+$"
"""Catastrophic for both engines: only the time bound ends it."""


def _set(tmp_path: Path, prompts: list[dict[str, Any]]) -> Path:
    path = tmp_path / "redos.yaml"
    path.write_text(yaml.safe_dump({"id": "redos", "prompts": prompts}))
    return path


def _prompts(tmp_path: Path, set_path: Path, base_url: str, *extra: str) -> Any:
    args = ["prompts", "--set", str(set_path), "--model", "goldeneval.openai"]
    args += ["--model-option", f"base_url={base_url}", "--model-option", "model=echo-a"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    return CliRunner().invoke(main, [*args, *extra])


@pytest.mark.slow
def test_a_catastrophic_regex_ends_within_the_timeout_as_that_prompts_error_through_the_cli(tmp_path: Path) -> None:
    set_path = _set(
        tmp_path,
        [
            {"id": "nested", "prompt": "Say a lot of a", "assertions": [{"type": "regex", "value": NESTED}]},
            {"id": "alternation", "prompt": "Say many a", "assertions": [{"type": "regex", "value": ALTERNATION}]},
            {"id": "after", "prompt": "And once more", "assertions": [{"type": "starts-with", "value": "aaa"}]},
        ],
    )
    with chat_server(default=lambda body: answer(ANSWER)) as server:
        started = time.monotonic()
        result = _prompts(
            tmp_path, set_path, server.base_url, "--timeout", "1.5", "--format", "json", "--fail-on-regression"
        )
        elapsed = time.monotonic() - started
    assert result.exit_code == 4, result.output  # incomplete: one prompt is an error
    assert elapsed < 15, f"took {elapsed:.1f} s"
    document = json.loads(result.stdout)
    by_id = {p["id"]: p for p in document["prompts"]}
    # (a+)+$ no longer hangs: graded, and it fails (the answer ends with '!')
    assert by_id["nested"]["status"] == "ok"
    assert by_id["nested"]["passed"] is False
    # (a|aa)+$ runs into the bound: that prompt's grading error, naming the cause
    assert by_id["alternation"]["status"] == "error"
    assert by_id["alternation"]["stage"] == "grader"
    assert by_id["alternation"]["error"].startswith("timed out after 1.5 s")
    # and the run went on
    assert by_id["after"]["status"] == "ok" and by_id["after"]["passed"] is True
    assert len(server.requests) == 3


def test_search_raises_at_the_bound_and_the_bound_is_the_one_set() -> None:
    started = time.monotonic()
    with time_bound(0.3), pytest.raises(RegexTimeout, match=r"^timed out after 0.3 s: regular expression"):
        search(ALTERNATION, ANSWER, case_sensitive=True)
    assert time.monotonic() - started < 2.0
    assert search(NESTED, ANSWER, case_sensitive=True) is None
    assert search(NESTED, "a" * 53, case_sensitive=True) is not None


def test_the_bound_covers_the_whole_grading_of_one_prompt() -> None:
    """Two slow patterns share one bound: the second does not get a fresh one."""
    item = GradingItem(
        "p",
        "q",
        (
            Assertion(type=AssertionType.REGEX, value=ALTERNATION),
            Assertion(type=AssertionType.REGEX, value=ALTERNATION),
        ),
    )
    grader = TimeBoundGrader(DeterministicGrader(), 0.5)
    started = time.monotonic()
    with pytest.raises(Exception, match=r"timed out after 0.5 s"):
        grader.grade(item, ANSWER)
    assert time.monotonic() - started < 3.0


class _SlowGrader:
    """A grader that takes longer than the run allows (a plug-in stuck on I/O)."""

    id = "slow"
    identity = "slow/v1"
    pass_threshold = 0.5

    def grade(self, item: GradingItem, answer: str) -> Grading:
        time.sleep(3)
        return Grading(passed=True, score=1.0)


def test_any_grader_is_bounded_by_the_timeout_not_only_regular_expressions() -> None:
    grader = TimeBoundGrader(_SlowGrader(), 0.3)
    started = time.monotonic()
    with pytest.raises(Exception, match=r"^timed out after 0.3 s$"):
        grader.grade(GradingItem("p", "q", reference="r"), "answer")
    assert time.monotonic() - started < 3.0
    assert (grader.id, grader.identity, grader.pass_threshold) == ("slow", "slow/v1", 0.5)


def test_patterns_are_validated_by_the_engine_that_runs_them(tmp_path: Path) -> None:
    unicode_class = [{"id": "p", "prompt": "q", "assertions": [{"type": "regex", "value": r"^\p{Lu}"}]}]
    assert load_prompt_set(_set(tmp_path, unicode_class)).prompts[0].assertions[0].value == r"^\p{Lu}"
    bad = [{"id": "p", "prompt": "q", "assertions": [{"type": "regex", "value": "a{2,1}"}]}]
    with pytest.raises(PromptSetError, match=r"prompt #1 \(id 'p'\): field 'assertions.0': invalid regular expression"):
        load_prompt_set(_set(tmp_path, bad))
