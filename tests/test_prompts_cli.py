"""`goldeneval prompts`: the smoke set offline with the extractive model, the same store,
states, gate, privacy and retention as retrieval runs, and the judge path over a real
chat-completions server."""

from __future__ import annotations

import json
import textwrap
from datetime import timedelta
from pathlib import Path
from typing import Any

import duckdb
import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.history.retention import purge_runs
from goldeneval.prompts.details import PromptDetails
from goldeneval.store import ResultStore
from tests.chat_server import answer, chat_server, last_user_message, verdict

SCRIPTED_MODEL = textwrap.dedent(
    """
    import json
    from pathlib import Path

    from goldeneval.core.provenance import Provenance


    class Scripted:
        def __init__(self, answers):
            self.answers = answers

        def complete(self, request):
            reply = self.answers[request.question]
            if reply == "raise":
                raise ConnectionError("backend unreachable")
            return reply

        def provenance(self):
            return Provenance(
                corpus_revision="not_applicable",
                model_revision="scripted-1",
                chunking_identity="not_applicable",
                pipeline_identity="scripted",
            )


    def build(context):
        return Scripted(json.loads(Path(context.options["answers"]).read_text()))
    """
)
PROMPTS = [
    {"id": "capital", "prompt": "Capital of France?", "assertions": [{"type": "contains", "value": "Paris"}]},
    {"id": "sum", "prompt": "2+2?", "assertions": [{"type": "regex", "value": "\\b4\\b"}]},
    {"id": "json", "prompt": "A JSON person", "assertions": [{"type": "json_schema", "required": ["name"]}]},
]
GOOD = {"Capital of France?": "Paris.", "2+2?": "It is 4.", "A JSON person": '{"name": "Ada"}'}


class Workspace:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.store = root / "results.duckdb"
        self.set_path = root / "tiny.yaml"
        self.set_path.write_text(yaml.safe_dump({"id": "tiny", "prompts": PROMPTS}))
        self.answers = root / "answers.json"

    def run(self, answers: dict[str, str], *extra: str) -> Result:
        self.answers.write_text(json.dumps(answers))
        args = ["prompts", "--set", str(self.set_path), "--model", "scripted_model:build"]
        args += ["--model-option", f"answers={self.answers}", "--store", str(self.store), "--no-progress", *extra]
        return CliRunner().invoke(main, args)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Workspace:
    (tmp_path / "scripted_model.py").write_text(SCRIPTED_MODEL)
    monkeypatch.syspath_prepend(str(tmp_path))
    return Workspace(tmp_path)


def _smoke(tmp_path: Path, *extra: str) -> Result:
    args = ["prompts", "--set", "goldeneval.smoke", "--model", "goldeneval.extractive"]
    args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress", *extra]
    return CliRunner().invoke(main, args)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_smoke_set_runs_offline_with_the_extractive_model_and_is_stored(tmp_path: Path) -> None:
    result = _smoke(tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert document["run"]["set_id"] == "goldeneval.smoke"
    assert document["run"]["grader"] == "deterministic"
    assert document["run"]["status"] == "complete"
    assert document["verdict"]["status"] == "baseline"
    assert {p["id"] for p in document["prompts"]} >= {"default-grader", "alert-payload"}
    stored = ResultStore(tmp_path / "s.duckdb").list_runs()
    assert [(r.set_id, r.model, r.grader) for r in stored] == [
        ("goldeneval.smoke", "goldeneval.extractive", "deterministic")
    ]


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_a_second_identical_smoke_run_passes_the_gate(tmp_path: Path) -> None:
    assert _smoke(tmp_path).exit_code == 0
    result = _smoke(tmp_path, "--fail-on-regression")
    assert result.exit_code == 0, result.output
    assert "Regression verdict: pass: within thresholds: pass rate held" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_table_shows_each_prompt_the_aggregate_and_the_verdict(workspace: Workspace) -> None:
    result = workspace.run({**GOOD, "2+2?": "five"})
    assert result.exit_code == 0, result.output
    assert "goldeneval prompts: set 'tiny', series 'scripted_model:build'" not in result.output
    assert "goldeneval prompts: set 'tiny', model 'scripted_model:build'" in result.output
    assert "regex '\\\\b4\\\\b': no match" in result.output
    assert "all  3        3       0       2       0.667      0.667" in result.output
    assert "Regression verdict: baseline" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_worse_answer_set_is_a_regression_exit_1(workspace: Workspace) -> None:
    assert workspace.run(GOOD).exit_code == 0
    result = workspace.run({**GOOD, "2+2?": "five", "A JSON person": "Ada"}, "--fail-on-regression")
    assert result.exit_code == 1, result.output
    assert "Regression verdict: regression: pass rate fell 1.000 -> 0.333 (-0.667, allowed -0.100)" in result.output
    assert "newly failing: json, sum" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_failing_model_makes_the_run_incomplete_exit_4(workspace: Workspace) -> None:
    result = workspace.run({**GOOD, "2+2?": "raise"}, "--fail-on-regression")
    assert result.exit_code == 4, result.output
    assert "model: ConnectionError: backend unreachable" in result.output
    assert "this run is incomplete (1 of 3 prompts errored)" in result.output  # a prompt run asks prompts
    assert ResultStore(workspace.store).list_runs()[0].status == "incomplete"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_changed_prompt_set_is_a_mismatch_exit_6(workspace: Workspace) -> None:
    assert workspace.run(GOOD).exit_code == 0
    changed = [*PROMPTS[:2], {**PROMPTS[2], "prompt": "A JSON person, please"}]
    workspace.set_path.write_text(yaml.safe_dump({"id": "tiny", "prompts": changed}))
    result = workspace.run({**GOOD, "A JSON person, please": '{"name": "Ada"}'}, "--fail-on-regression")
    assert result.exit_code == 6, result.output
    assert "labels changed" in result.output
    # prompt runs keep no benchmark manifest: the digests say what changed, as before
    assert "labels changed (digest " in result.output and "manifest" not in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_unknown_grader_falls_back_with_a_notice(workspace: Workspace) -> None:
    result = workspace.run(GOOD, "--grader", "vibes")
    assert result.exit_code == 0, result.output
    # registered plug-in graders (semantic) follow the built-in ones in the list
    assert "goldeneval: notice: unknown grader 'vibes' (known: deterministic, llm_judge" in result.stderr
    assert "Grader: deterministic (asked for 'vibes': unknown, fell back)" in result.output


def test_an_invalid_regex_is_exit_3_naming_file_prompt_and_field(workspace: Workspace) -> None:
    bad = [{"id": "p", "prompt": "x", "assertions": [{"type": "regex", "value": "(unclosed"}]}]
    workspace.set_path.write_text(yaml.safe_dump({"id": "tiny", "prompts": bad}))
    result = workspace.run(GOOD)
    assert result.exit_code == 3
    assert f"goldeneval: error: {workspace.set_path}: prompt #1 (id 'p'): field 'assertions.0': " in result.stderr
    assert "invalid regular expression '(unclosed'" in result.stderr
    assert not workspace.store.exists()


def test_llm_judge_without_a_judge_model_is_exit_3_and_stores_nothing(workspace: Workspace) -> None:
    result = workspace.run(GOOD, "--grader", "llm_judge")
    assert result.exit_code == 3
    assert "grader 'llm_judge' needs a judge model" in result.stderr
    assert not workspace.store.exists()


def _judge_args(base_url: str, *extra: str) -> list[str]:
    return [
        "--grader", "llm_judge", "--judge-model", "goldeneval.openai",
        "--judge-option", f"base_url={base_url}", "--judge-option", "model=judge",
        "--judge-option", "max_retries=0", *extra,
    ]  # fmt: skip


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
def test_the_judge_grades_over_http_and_a_malformed_verdict_is_a_recorded_failure(workspace: Workspace) -> None:
    def reply(body: dict[str, Any]) -> Any:
        prompt = last_user_message(body)
        if "2+2?" in prompt:
            return answer("looks right to me")
        return verdict(0.9, "correct")

    with chat_server(default=reply) as server:
        result = workspace.run(GOOD, *_judge_args(server.base_url), "--format", "json", "--fail-on-regression")
    assert result.exit_code == 4, result.output
    document = json.loads(result.stdout)  # stderr has the judge-calls notice
    by_id = {p["id"]: p for p in document["prompts"]}
    assert by_id["capital"]["status"] == "ok" and by_id["capital"]["score"] == 0.9
    assert by_id["sum"]["status"] == "error" and by_id["sum"]["passed"] is None
    assert by_id["sum"]["stage"] == "grader"
    assert "no JSON object in the judge's answer" in by_id["sum"]["error"]
    assert document["run"]["grader"] == "llm_judge"
    assert len(server.requests) == 3


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_judge_samples_are_stored_with_their_spread(workspace: Workspace) -> None:
    scores = iter([0.9, 0.2, 0.9, 0.9, 0.9, 0.9])
    with chat_server(default=lambda body: verdict(next(scores))) as server:
        result = workspace.run(GOOD, *_judge_args(server.base_url, "--judge-samples", "2"), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)  # stderr has the judge-calls notice
    first = document["prompts"][0]
    assert first["samples"] == [0.9, 0.2] and first["unstable"] is True
    assert first["spread"] == pytest.approx(0.7)
    assert document["aggregates"]["unstable"] == 1
    assert document["grading"]["judge_samples"] == 2


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_persists_no_prompt_or_answer_text(workspace: Workspace) -> None:
    secret_answer = '{"name": "Ada Lovelace-Byron"}'
    result = workspace.run({**GOOD, "A JSON person": secret_answer}, "--privacy", "metadata_only")
    assert result.exit_code == 0, result.output
    with duckdb.connect(str(workspace.store), read_only=True) as con:
        rows = con.execute("SELECT * FROM runs").fetchall()
    dumped = json.dumps(rows, default=str)
    for text in ("Ada Lovelace", "Paris", "Capital of France", "It is 4"):
        assert text not in dumped
    assert "(withheld: metadata_only)" in result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_full_privacy_keeps_the_answers(workspace: Workspace) -> None:
    assert workspace.run(GOOD).exit_code == 0
    details = ResultStore(workspace.store).list_runs(with_details=True)[0].details
    assert isinstance(details, PromptDetails)
    assert [p.answer for p in details.prompts] == ["Paris.", "It is 4.", '{"name": "Ada"}']


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_retention_deletes_prompt_runs_whole(workspace: Workspace) -> None:
    assert workspace.run(GOOD).exit_code == 0
    store = ResultStore(workspace.store)
    kept = purge_runs(store, timedelta(0))  # the series' only run is its accepted level: kept
    assert (kept.runs, [r.grader for r in kept.kept]) == ((), ["deterministic"])
    report = purge_runs(store, timedelta(0), including_levels=True)
    assert [r.grader for r in report.runs] == ["deterministic"]
    assert store.list_runs() == []


def test_prompt_sets_lists_the_shipped_smoke_set() -> None:
    result = CliRunner().invoke(main, ["prompt-sets"])
    assert result.exit_code == 0
    assert "goldeneval.smoke\t6 prompts\tentry point 'goldeneval.smoke'" in result.output


def test_models_lists_the_built_in_models() -> None:
    result = CliRunner().invoke(main, ["models"])
    assert result.output.splitlines() == ["goldeneval.extractive", "goldeneval.openai"]


@pytest.mark.slow  # two prompt runs through the command: over 3 s on a loaded 2-core machine
def test_accepting_a_prompt_run_names_its_model_and_its_own_rates(workspace: Workspace) -> None:
    assert workspace.run(GOOD).exit_code == 0
    assert workspace.run({**GOOD, "2+2?": "five"}).exit_code == 0  # a regression, reported
    worse = ResultStore(workspace.store).list_runs()[0]
    args = ["accept", worse.id[:10], "--reason", "the new model is cheaper", "--by", "alice"]
    result = CliRunner().invoke(main, [*args, "--store", str(workspace.store)])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(
        f"accepted run {worse.id} (set tiny, series {worse.model}, pass rate 0.667, mean score 0.667) "
        "accepted by alice: the new model is cheaper; from now on"
    ), result.output
    assert "top-1" not in result.output and "top-3" not in result.output
