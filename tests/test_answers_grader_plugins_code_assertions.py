"""Code assertions (issue 24): ``type: code`` in a prompt set names a Python check (a
``goldeneval.assertions`` id or ``package.module:function``); the rule for finding and calling
it, and the check through the CLI.  Real modules on sys.path."""

from __future__ import annotations

import importlib
import json
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.prompts import code_assertions
from goldeneval.prompts.code_assertions import CodeAssertionError, check_identity, resolve_check, run_check
from tests.chat_server import answer, chat_server

CHECKS = textwrap.dedent(
    """
    import sys


    def short(answer):
        return len(answer) <= 10


    def polite(answer):
        ok = "please" in answer.lower()
        return ok, "says please" if ok else f"no 'please' in {len(answer)} characters"


    def boom(answer):
        raise KeyError("price")


    def leaves(answer):
        sys.exit(1)


    def vague(answer):
        return "maybe"


    def versioned(answer):
        return True


    versioned.version = "v3"
    not_callable = 42
    """
)


@pytest.fixture(autouse=True)
def checks_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    module = tmp_path / "answer_checks.py"
    module.write_text(CHECKS)
    monkeypatch.syspath_prepend(str(tmp_path))
    return module


def test_a_check_returns_its_verdict_and_message() -> None:
    assert run_check("answer_checks:short", "Paris.") == (True, "held")
    assert run_check("answer_checks:short", "It is Paris, of course.") == (False, "did not hold")
    assert run_check("answer_checks:polite", "Please hold.") == (True, "says please")
    assert run_check("answer_checks:polite", "Hold.") == (False, "no 'please' in 5 characters")


@pytest.mark.parametrize(
    ("path", "message"),
    [
        ("answer_checks:boom", "code assertion 'answer_checks:boom' raised KeyError: 'price'"),
        ("answer_checks:leaves", "code assertion 'answer_checks:leaves' raised SystemExit: 1"),
        ("answer_checks:vague", "code assertion 'answer_checks:vague' returned str, not a bool or (bool, message)"),
        ("answer_checks:not_callable", "module 'answer_checks' has no callable 'not_callable'"),
    ],
)
def test_a_check_that_fails_to_run_is_one_line_never_a_traceback(path: str, message: str) -> None:
    with pytest.raises(CodeAssertionError) as raised:
        run_check(path, "answer")
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (
            "answer_checks.short",
            "is neither a registered id .goldeneval.assertions. nor of the form package.module:function",
        ),
        ("no_such_checks:short", "cannot import 'no_such_checks': ModuleNotFoundError"),
    ],
)
def test_a_bad_path_is_a_value_error_for_the_set_validator(path: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        resolve_check(path)


def test_the_identity_follows_the_source_or_the_declared_version(checks_module: Path) -> None:
    assert check_identity("answer_checks:versioned") == "answer_checks:versioned@v3"
    identity = check_identity("answer_checks:short")
    assert identity.startswith("answer_checks:short@sha256:") and len(identity.rpartition(":")[2]) == 16
    assert check_identity("answer_checks:polite") != identity


def _prompt_set(tmp_path: Path, value: str) -> Path:
    path = tmp_path / "prompts.yaml"
    prompt = {"id": "p1", "prompt": "Capital of France?", "assertions": [{"type": "code", "value": value}]}
    path.write_text(yaml.safe_dump({"id": "code-checks", "prompts": [prompt]}), encoding="utf-8")
    return path


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_a_code_assertion_in_a_prompt_set_grades_answers_through_the_cli(tmp_path: Path) -> None:
    with chat_server(default=lambda body: answer("Paris.")) as server:
        args = ["prompts", "--set", str(_prompt_set(tmp_path, "answer_checks:short")), "--model", "goldeneval.openai"]
        args += ["--model-option", f"base_url={server.base_url}", "--model-option", "model=m", "--format", "json"]
        args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
        result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    (prompt,) = json.loads(result.stdout)["prompts"]
    assert prompt["passed"] is True
    assert prompt["assertions"][0]["message"].endswith("held")


def test_a_code_assertion_that_cannot_be_found_is_the_sets_error_naming_the_field(tmp_path: Path) -> None:
    path = _prompt_set(tmp_path, "answer_checks:missing")
    with chat_server(default=lambda body: answer("Paris.")) as server:
        args = ["prompts", "--set", str(path), "--model", "goldeneval.openai", "--model-option", "model=m"]
        args += ["--model-option", f"base_url={server.base_url}", "--store", str(tmp_path / "s.duckdb")]
        result = CliRunner().invoke(main, args)
    assert server.requests == []  # refused before any model call
    assert result.exit_code == 3
    assert "prompts[0]" in result.output or "p1" in result.output
    assert "module 'answer_checks' has no callable 'missing'" in result.output
    assert len(result.stderr.strip().splitlines()) == 1


def test_editing_a_check_changes_the_prompt_set_digest(tmp_path: Path, checks_module: Path) -> None:
    from goldeneval.prompts.golden import load_prompt_set, prompt_set_digest

    before = prompt_set_digest(load_prompt_set(_prompt_set(tmp_path, "answer_checks:short")))
    code_assertions._resolved.clear()
    checks_module.write_text(CHECKS.replace("<= 10", "<= 12"))
    importlib.reload(importlib.import_module("answer_checks"))
    after = prompt_set_digest(load_prompt_set(_prompt_set(tmp_path, "answer_checks:short")))
    assert before != after


def test_listing_or_registering_sets_imports_no_check(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder of sets is validated whenever it is listed or an unrelated set is run: naming a
    module there must not run it (the hostile review's ``evilmod`` wrote a file on import)."""
    marker = tmp_path / "IMPORTED"
    (tmp_path / "evilmod.py").write_text(f"open({str(marker)!r}, 'w').close()\n\ndef ok(answer):\n    return True\n")
    folder = tmp_path / "sets"
    folder.mkdir()
    _prompt_set(folder, "evilmod:ok")
    missing = {"id": "p", "prompt": "?", "assertions": [{"type": "code", "value": "nosuchmod:ok"}]}
    (folder / "other.yaml").write_text(yaml.safe_dump({"id": "missing-module", "prompts": [missing]}), encoding="utf-8")
    result = CliRunner().invoke(main, ["prompt-sets", "--prompt-sets-dir", str(folder)])
    assert result.exit_code == 0, result.output
    assert "code-checks" in result.output and "missing-module" in result.output
    assert not marker.exists()


def test_a_reference_of_the_wrong_form_is_the_sets_error_at_load(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["prompts", "--set", str(_prompt_set(tmp_path, "not a check")), "--model", "x"])
    assert result.exit_code == 3
    assert "field 'assertions.0'" in result.output
    assert "is neither a registered id (goldeneval.assertions: none registered)" in result.output
