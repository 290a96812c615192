"""Pluggable graders (issue 24): the entry-point group ``goldeneval.graders`` and import paths
``package.module:factory``, driven through ``goldeneval prompts``.  A plug-in grader is found
by id or path, checked when built, its identity is in the benchmark fingerprint (a changed
identity is a ``mismatch``), a factory that fails is one line (exit 3, nothing stored), and a
``grade`` that raises, exits or returns junk is that prompt's grading error; the abstention
rule applies around it; an unknown plain id still falls back with a notice."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.core.errors import InputError
from goldeneval.prompts.graders import GradingItem, GradingService, Judge, LlmJudgeGrader, PluginGrader
from goldeneval.prompts.models import ModelContext, build_model

PLUGIN = textwrap.dedent(
    """
    import json
    import os
    import sys
    from pathlib import Path

    from goldeneval.prompts.graders import Grading


    class Scripted:
        def __init__(self, answers):
            self.answers = answers

        def complete(self, request):
            return self.answers[request.question]


    def model(context):
        return Scripted(json.loads(Path(context.options["answers"]).read_text()))


    class Length:
        id = "length"

        def __init__(self, context, limit):
            self.limit = limit
            self.pass_threshold = 0.5 if context.pass_threshold is None else context.pass_threshold
            self.calls = 0

        @property
        def identity(self):
            return f"length/v1(limit={self.limit})"

        def grade(self, item, answer):
            self.calls += 1
            if answer == "boom":
                raise RuntimeError("grader exploded")
            if answer == "exit":
                sys.exit(2)
            if answer == "junk":
                return {"passed": True}
            if answer == "huge":
                return Grading(passed=True, score=7.0)
            score = 1.0 if len(answer) <= self.limit else 0.0
            return Grading(passed=score >= self.pass_threshold, score=score, reason=f"{len(answer)} characters")


    def build(context):
        return Length(context, int(os.environ.get("LENGTH_LIMIT", "20")))


    def broken(context):
        raise RuntimeError("no config file")


    class Parts:
        def __init__(self, **parts):
            self.__dict__.update(parts)


    def no_identity(context):
        return Parts(id="x", pass_threshold=0.5, grade=lambda item, answer: None)


    def bad_threshold(context):
        return Parts(id="x", identity="x/v1", pass_threshold=2, grade=lambda item, answer: None)


    def claims_builtin(context):
        return Parts(id="deterministic", identity="x/v1", pass_threshold=0.5, grade=lambda item, answer: None)


    def no_grade(context):
        return Parts(id="x", identity="x/v1", pass_threshold=0.5)
    """
)
PROMPTS = [{"id": f"p{n}", "prompt": f"Q{n}?", "reference": "short"} for n in range(1, 6)]


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = root / "results.duckdb"
        self.set_path = root / "tiny.yaml"
        self.set_path.write_text(yaml.safe_dump({"id": "tiny", "prompts": PROMPTS}))
        self.answers = root / "answers.json"

    def run(self, answers: list[str], grader: str, *extra: str) -> Result:
        self.answers.write_text(json.dumps({f"Q{n}?": a for n, a in enumerate(answers, start=1)}))
        args = ["prompts", "--set", str(self.set_path), "--model", "plug:model", "--grader", grader]
        args += ["--model-option", f"answers={self.answers}", "--store", str(self.store), "--no-progress", *extra]
        return CliRunner().invoke(main, args)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    (tmp_path / "plug.py").write_text(PLUGIN)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("LENGTH_LIMIT", raising=False)
    return Workspace(tmp_path)


def _register(root: Path, monkeypatch: pytest.MonkeyPatch, **graders: str) -> None:
    """A real installed distribution (a dist-info folder on sys.path) declaring graders."""
    info = root / "site" / "plug_graders-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: plug-graders\nVersion: 0.1\n")
    lines = "".join(f"{name} = {target}\n" for name, target in graders.items())
    (info / "entry_points.txt").write_text(f"[goldeneval.graders]\n{lines}")
    monkeypatch.syspath_prepend(str(root / "site"))


SHORT = ["tiny", "fine", "ok", "yes", "no"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_import_path_grader_grades_and_its_identity_is_in_the_fingerprint(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = workspace.run([*SHORT[:4], "far too long an answer to pass"], "plug:build", "--format", "json")
    assert first.exit_code == 0, first.output
    document = json.loads(first.stdout)
    assert document["run"]["grader"] == "length"
    assert document["run"]["requested_grader"] is None
    identity = document["grading"]["grader_identity"]
    assert identity == "length/v1(limit=20);abstention/v12(default;max_words=50)"
    assert identity in document["grading"]["protocol"]
    assert [p["passed"] for p in document["prompts"]] == [True, True, True, True, False]
    assert document["prompts"][4]["reason"] == "30 characters"

    same = workspace.run(SHORT, "plug:build", "--fail-on-regression")
    assert same.exit_code == 0, same.output
    monkeypatch.setenv("LENGTH_LIMIT", "3")  # the plug-in's identity changes with its configuration
    changed = workspace.run(SHORT, "plug:build", "--fail-on-regression")
    assert changed.exit_code == 6, changed.output
    assert "scoring protocol changed" in changed.output
    assert "length/v1(limit=3)" in changed.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_registered_grader_is_found_by_its_id_and_listed_among_the_known(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    _register(workspace.root, monkeypatch, length="plug:build")
    result = workspace.run(SHORT, "length", "--format", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["run"]["grader"] == "length"
    assert "length" in GradingService.known()
    fallback = workspace.run(SHORT, "vibes")
    assert fallback.exit_code == 0, fallback.output
    assert "goldeneval: notice: unknown grader 'vibes' (known: deterministic, llm_judge, " in fallback.stderr
    assert "length" in fallback.stderr.partition("(known:")[2].partition(")")[0]
    assert "Grader: deterministic (asked for 'vibes': unknown, fell back)" in fallback.output


@pytest.mark.parametrize(
    ("grader", "message"),
    [
        ("plug:broken", "grader 'plug:broken': its factory raised RuntimeError: no config file"),
        ("plug:no_identity", "grader 'plug:no_identity': its factory returned Parts, which has no 'identity'"),
        (
            "plug:bad_threshold",
            "grader 'plug:bad_threshold': its 'pass_threshold' must be a number from 0 to 1, got 2",
        ),
        ("plug:claims_builtin", "grader 'plug:claims_builtin': its id 'deterministic' is a built-in grader's"),
        (
            "plug:no_grade",
            "grader 'plug:no_grade': its factory returned Parts, which has no grade(item, answer) method",
        ),
        ("plug:missing", "grader 'plug:missing': module 'plug' has no callable 'missing'"),
        ("nowhere.at_all:build", "grader 'nowhere.at_all:build': cannot import 'nowhere.at_all': "),
    ],
    ids=lambda value: value.partition(":")[2] if value.count(":") == 1 and " " not in value else "",
)
def test_a_grader_that_cannot_be_built_is_one_line_exit_3_and_nothing_is_stored(
    workspace: Workspace, grader: str, message: str
) -> None:
    result = workspace.run(SHORT, grader)
    assert result.exit_code == 3, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(f"goldeneval: error: {message}")
    assert "Traceback" not in result.output
    assert not workspace.store.exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_grade_that_raises_exits_or_returns_junk_is_that_prompts_grading_error(workspace: Workspace) -> None:
    result = workspace.run(["boom", "exit", "junk", "huge", "fine"], "plug:build", "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    by_id = {p["id"]: p for p in document["prompts"]}
    errors = {pid: (p["status"], p["stage"], p["error"]) for pid, p in by_id.items() if pid != "p5"}
    assert errors == {
        "p1": ("error", "grader", "grader 'length' raised RuntimeError: grader exploded"),
        "p2": ("error", "grader", "grader 'length' raised SystemExit: 2"),
        "p3": ("error", "grader", "grader 'length' returned dict, not a Grading"),
        "p4": ("error", "grader", "grader 'length' gave a score outside [0, 1]: 7.0"),
    }
    assert by_id["p5"]["status"] == "ok" and by_id["p5"]["passed"] is True
    assert document["run"]["status"] == "incomplete"
    gated = workspace.run(["boom", "exit", "junk", "huge", "fine"], "plug:build", "--fail-on-regression")
    assert gated.exit_code == 4, gated.output


def test_the_abstention_rule_applies_around_a_plugin_grader(workspace: Workspace) -> None:
    grader = GradingService().select("plug:build").grader
    assert isinstance(grader, PluginGrader)
    abstains = "The context does not answer the question."

    def grade(answerable: bool, answer: str) -> tuple[str | None, bool | None]:
        graded = grader.grade(GradingItem("q", "Q?", reference="short", answerable=answerable), answer)
        return graded.outcome, graded.passed

    assert grade(False, abstains) == ("abstained", True)
    assert grade(True, abstains) == ("over_abstention", False)
    assert grade(False, "boom") == ("missed_abstention", False)  # decided without calling the plug-in
    assert grade(True, "fine") == ("pass", True)
    assert grader.inner.calls == 1


def test_the_run_threshold_reaches_a_plugin_only_when_it_is_not_the_default(workspace: Workspace) -> None:
    assert GradingService().select("plug:build").grader.pass_threshold == 0.5
    assert GradingService(pass_threshold=0.9).plugin_context("plug:build").pass_threshold == 0.9
    assert GradingService().plugin_context("plug:build").pass_threshold is None


def test_llm_judge_with_a_rubric_in_its_id_selects_that_rubric(tmp_path: Path) -> None:
    judge = build_model(
        ModelContext(model_id="goldeneval.openai", options={"base_url": "http://127.0.0.1:9/v1", "model": "judge"})
    )
    choice = GradingService(judge=Judge(judge)).select("llm_judge:faithfulness")
    assert isinstance(choice.grader, LlmJudgeGrader)
    assert choice.grader.id == "llm_judge:faithfulness" and choice.notice is None
    with pytest.raises(InputError, match=r"^unknown judge rubric 'vibes'"):
        GradingService(judge=Judge(judge)).select("llm_judge:vibes")
