"""Regular-expression assertions cannot hang a run (issue 24): they run on the ``regex`` package
under the run's ``--timeout``, which now covers grading as it covers the model call.

Before, ``(a+)+$`` on a 53-character answer hung ``goldeneval prompts`` (Python's ``re``
backtracks 2^53 ways and holds the GIL, so no timeout could fire)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import regex  # type: ignore[import-untyped]  # no stubs pinned, as in safe_regex
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.prompts.bounded import TimeBoundGrader
from goldeneval.prompts.golden import Assertion, AssertionType, PromptSetError, load_prompt_set
from goldeneval.prompts.graders import DeterministicGrader, Grading, GradingItem
from goldeneval.prompts.safe_regex import DEFAULT_BOUND_S, RegexTimeout, search, time_bound
from tests.chat_server import answer, chat_server

ANSWER = "a" * 53 + "!"
NESTED = "(a+)+$"
"""Catastrophic for ``re``; the ``regex`` engine sees through it and fails at once."""
ALTERNATION = "(a|aa)+$"
"""Catastrophic for both engines: only the time bound ends it."""
HANG_GUARD_S = 60
"""How long a test waits for something that should already have happened, so that a broken
bound fails the test instead of hanging it; never a measure of speed (docs/testing.md)."""


@pytest.fixture
def engine_timeouts(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The ``timeout=`` of every call :func:`search` makes to the ``regex`` engine, which still
    runs: the engine's own timeout is the mechanism that ends a match, so what it is given is
    the bound that holds."""
    timeouts: list[float] = []
    engine_search: Callable[..., Any] = regex.search

    def recording(*args: Any, **kwargs: Any) -> Any:
        timeouts.append(kwargs["timeout"])
        return engine_search(*args, **kwargs)

    monkeypatch.setattr(regex, "search", recording)  # the module safe_regex calls
    return timeouts


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
    """Through the CLI, ``(a+)+$`` is graded, ``(a|aa)+$`` (which no engine finishes) becomes that
    prompt's grading error naming the ``--timeout``, and the run goes on to the next prompt: the
    run ending at all proves the bound ended the match."""
    set_path = _set(
        tmp_path,
        [
            {"id": "nested", "prompt": "Say a lot of a", "assertions": [{"type": "regex", "value": NESTED}]},
            {"id": "alternation", "prompt": "Say many a", "assertions": [{"type": "regex", "value": ALTERNATION}]},
            {"id": "after", "prompt": "And once more", "assertions": [{"type": "starts-with", "value": "aaa"}]},
        ],
    )
    with chat_server(default=lambda body: answer(ANSWER)) as server:
        result = _prompts(
            tmp_path, set_path, server.base_url, "--timeout", "1.5", "--format", "json", "--fail-on-regression"
        )
    assert result.exit_code == 4, result.output  # incomplete: one prompt is an error
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


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_search_raises_at_the_bound_and_the_bound_is_the_one_set(engine_timeouts: list[float]) -> None:
    """The engine is given what is left of the bound set (0.3 s), or the default outside one,
    and a pattern no engine finishes ends with :class:`RegexTimeout` naming that bound."""
    with time_bound(0.3), pytest.raises(RegexTimeout, match=r"^timed out after 0.3 s: regular expression"):
        search(ALTERNATION, ANSWER, case_sensitive=True)
    assert len(engine_timeouts) == 1 and 0 < engine_timeouts[0] <= 0.3
    assert search(NESTED, ANSWER, case_sensitive=True) is None
    assert search(NESTED, "a" * 53, case_sensitive=True) is not None
    assert engine_timeouts[1:] == [DEFAULT_BOUND_S, DEFAULT_BOUND_S]


class _TwoSearches:
    """A plug-in grader that searches twice with trivial patterns and keeps what the engine got."""

    id = "two-searches"
    identity = "two-searches/v1"
    pass_threshold = 0.5

    def __init__(self, engine_timeouts: list[float]) -> None:
        self.engine_timeouts = engine_timeouts
        self.seen: list[list[float]] = []

    def grade(self, item: GradingItem, answer: str) -> Grading:
        before = len(self.engine_timeouts)
        search("a", answer, case_sensitive=True)
        search("!", answer, case_sensitive=True)
        self.seen.append(self.engine_timeouts[before:])
        return Grading(passed=True, score=1.0)


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_the_bound_covers_the_whole_grading_of_one_prompt(engine_timeouts: list[float]) -> None:
    """One bound for the whole grading of a prompt: within one :func:`time_bound`, once a
    catastrophic pattern has spent it, the next search (a trivial pattern) times out without
    reaching the engine rather than getting a fresh bound; :class:`TimeBoundGrader` opens one
    such bound of ``timeout_s`` per grading (every search in it gets what is left of 0.5 s, and
    the next grading a new one); and a prompt's catastrophic assertion ends as its timeout."""
    with time_bound(0.3):
        with pytest.raises(RegexTimeout, match=r"^timed out after 0.3 s: regular expression '\(a"):
            search(ALTERNATION, ANSWER, case_sensitive=True)
        with pytest.raises(RegexTimeout, match=r"^timed out after 0.3 s: regular expression 'a' "):
            search("a", ANSWER, case_sensitive=True)
    assert len(engine_timeouts) == 1  # the second search never reached the engine

    inner = _TwoSearches(engine_timeouts)
    grader = TimeBoundGrader(inner, 0.5)
    for _ in range(2):
        assert grader.grade(GradingItem("p", "q", reference="r"), ANSWER).passed
    assert [len(seen) for seen in inner.seen] == [2, 2]
    assert all(0.5 >= first >= second > 0 for first, second in inner.seen)

    item = GradingItem("p", "q", (Assertion(type=AssertionType.REGEX, value=ALTERNATION),))
    with pytest.raises(Exception, match=r"timed out after 0.5 s"):  # the pattern's bound, or the thread's
        TimeBoundGrader(DeterministicGrader(), 0.5).grade(item, ANSWER)


class _StuckGrader:
    """A grader stuck until the test releases it (a plug-in stuck on I/O)."""

    id = "slow"
    identity = "slow/v1"
    pass_threshold = 0.5

    def __init__(self) -> None:
        self.release = threading.Event()
        self.finished = threading.Event()

    def grade(self, item: GradingItem, answer: str) -> Grading:
        self.release.wait(HANG_GUARD_S)
        self.finished.set()
        return Grading(passed=True, score=1.0)


def test_any_grader_is_bounded_by_the_timeout_not_only_regular_expressions() -> None:
    """A grader that never returns by itself is abandoned at the bound: the grading raises while
    the grader is still stuck (it is not waited for), naming the bound."""
    stuck = _StuckGrader()
    grader = TimeBoundGrader(stuck, 0.3)
    try:
        with pytest.raises(Exception, match=r"^timed out after 0.3 s$"):
            grader.grade(GradingItem("p", "q", reference="r"), "answer")
        assert not stuck.finished.is_set()
    finally:
        stuck.release.set()
    assert (grader.id, grader.identity, grader.pass_threshold) == ("slow", "slow/v1", 0.5)


def test_patterns_are_validated_by_the_engine_that_runs_them(tmp_path: Path) -> None:
    unicode_class = [{"id": "p", "prompt": "q", "assertions": [{"type": "regex", "value": r"^\p{Lu}"}]}]
    assert load_prompt_set(_set(tmp_path, unicode_class)).prompts[0].assertions[0].value == r"^\p{Lu}"
    bad = [{"id": "p", "prompt": "q", "assertions": [{"type": "regex", "value": "a{2,1}"}]}]
    with pytest.raises(PromptSetError, match=r"prompt #1 \(id 'p'\): field 'assertions.0': invalid regular expression"):
        load_prompt_set(_set(tmp_path, bad))
