"""`goldeneval compare`: the gate's comparison between any two stored runs, as a table and JSON,
with the question text and both rankings; mismatches compared for information; the
``series:<name>`` baseline a pull request compares with; answer runs with both answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import ExitCode, main
from goldeneval.store import ResultStore
from tests.conftest import CliWorkspace

ALL_HIT = {"alpha": ["a"], "beta": ["b", "x"], "gamma": []}
ONE_MISS = {"alpha": ["a"], "beta": ["c", "x"], "gamma": []}
TWO_MISS = {"alpha": ["c"], "beta": ["c"], "gamma": []}


def _compare(workspace: CliWorkspace, *args: str) -> Result:
    return CliRunner().invoke(main, ["compare", *args, "--store", str(workspace.store)])


def _run_id(result: Result) -> str:
    assert result.exit_code == 0, result.output
    run_id: str = json.loads(result.stdout)["run"]["id"]
    return run_id


def _two_runs(workspace: CliWorkspace, second: dict[str, Any] = ONE_MISS, **kwargs: Any) -> tuple[str, str, Result]:
    first = _run_id(workspace.evaluate(ALL_HIT, "--format", "json"))
    result = workspace.evaluate(second, "--format", "json", **kwargs)
    return first, _run_id(result), result


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_compare_lists_the_flipped_question_with_its_text_and_both_rankings(cli_workspace: CliWorkspace) -> None:
    first, second, _ = _two_runs(cli_workspace)
    result = _compare(cli_workspace, first[:8], second[:8], "--set", str(cli_workspace.set_path))
    assert result.exit_code == ExitCode.OK, result.output
    text = result.stdout
    assert "Newly failing: 1" in text
    block = text[text.index("Newly failing: 1") : text.index("Newly passing")]
    assert "q2 [GAP, prose-free] (top-1 hit rate, top-3 hit rate)" in block
    assert "    beta" in block  # the question's text, from the set
    assert "before: top-1 hit rate hit, top-3 hit rate hit; first relevant at rank 1" in block
    assert "top: b [relevant] | x" in block and "top: c | x" in block  # what came back instead
    assert "now: top-1 hit rate miss, top-3 hit rate miss" in block


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_json_holds_every_question_and_the_verdict_the_gate_made(cli_workspace: CliWorkspace) -> None:
    first, second, run = _two_runs(cli_workspace)
    result = _compare(cli_workspace, first, second, "--set", str(cli_workspace.set_path), "--format", "json")
    document = json.loads(result.stdout)
    gate_verdict = json.loads(run.stdout)["verdict"]
    assert document["verdict"] == gate_verdict  # the same decision, not a second one
    assert (document["earlier"]["id"], document["current"]["id"]) == (first, second)
    rows = {row["id"]: row for row in document["questions"]}
    assert set(rows) == {"q1", "q2", "q3"}
    q2 = rows["q2"]
    assert (q2["text"], q2["form"], q2["hard_class"], q2["flip"]) == ("beta", "GAP", "prose-free", "newly_failing")
    assert q2["earlier"]["documents"] == ["b", "x"] and q2["current"]["documents"] == ["c", "x"]
    assert q2["earlier"]["outcomes"] == {"top-1 hit rate": True, "top-3 hit rate": True}
    assert (q2["earlier"]["first_relevant_rank"], q2["current"]["first_relevant_rank"]) == (1, None)
    assert (q2["earlier"]["relevant_ranks"], q2["current"]["relevant_ranks"]) == ([1], [])
    assert rows["q1"]["flip"] == "unchanged" and not q2["informational"]
    paired = {p["rate"]: p for p in document["paired"]}
    assert paired["top-1 hit rate"]["newly_failing"] == ["q2"]
    assert {m["name"] for m in document["measures"] if m["gated"]} == {"top-1 hit rate", "top-3 hit rate"}
    assert {(s["kind"], s["value"]) for s in document["slices"]} >= {("form", "GAP"), ("form", "MATCH")}
    assert [p["run_id"] for p in document["trend"]] == [first, second]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_one_run_against_its_baseline_is_what_the_run_itself_was_judged_against(cli_workspace: CliWorkspace) -> None:
    first, second, run = _two_runs(cli_workspace)
    result = _compare(cli_workspace, second, "--format", "json")
    document = json.loads(result.stdout)
    assert document["earlier"]["id"] == first
    assert document["verdict"] == json.loads(run.stdout)["verdict"]
    pinned = json.loads(_compare(cli_workspace, second, "--against", f"run:{first[:10]}", "--format", "json").stdout)
    assert pinned["earlier"]["id"] == first and pinned["verdict"]["state"] == "comparable"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_regression_fails_the_gate_of_compare_as_it_fails_the_run(cli_workspace: CliWorkspace) -> None:
    first, second, run = _two_runs(cli_workspace, TWO_MISS)
    assert json.loads(run.stdout)["verdict"]["status"] == "regression"
    assert _compare(cli_workspace, first, second, "--fail-on-regression").exit_code == ExitCode.REGRESSION
    assert _compare(cli_workspace, first, second).exit_code == ExitCode.OK
    assert _compare(cli_workspace, first, second, "--max-drop", "1", "--fail-on-regression").exit_code == ExitCode.OK


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_mismatch_has_no_numeric_verdict_but_compares_the_questions_for_information(
    cli_workspace: CliWorkspace,
) -> None:
    first, second, _ = _two_runs(cli_workspace, corpus="rev-2")
    result = _compare(cli_workspace, first, second, "--format", "json", "--set", str(cli_workspace.set_path))
    document = json.loads(result.stdout)
    assert document["verdict"]["state"] == "mismatch"
    assert document["verdict"]["changes"] == [] and document["verdict"]["paired"] == []
    assert document["informational"] is True
    rows = {row["id"]: row for row in document["questions"]}
    assert rows["q2"]["flip"] == "newly_failing" and rows["q2"]["informational"] is True
    text = _compare(cli_workspace, first, second, "--set", str(cli_workspace.set_path)).stdout
    assert "Newly failing (informational): 1" in text
    assert "no numeric verdict (mismatch): the questions are compared for information only" in text
    gated = _compare(cli_workspace, first, second, "--fail-on-regression")
    assert gated.exit_code == ExitCode.NOT_COMPARABLE


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_without_its_set_at_hand_compare_shows_ids_and_says_why(cli_workspace: CliWorkspace) -> None:
    first, second, _ = _two_runs(cli_workspace)
    document = json.loads(_compare(cli_workspace, first, second, "--format", "json").stdout)
    assert all(row["text"] is None for row in document["questions"])
    assert any("question text not shown: set 'tiny' could not be read here" in note for note in document["notes"])
    assert document["questions"][1]["current"]["documents"] == ["c", "x"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_shows_no_text_and_no_document(cli_workspace: CliWorkspace) -> None:
    first, second, _ = _two_runs(cli_workspace)
    args = (first, second, "--set", str(cli_workspace.set_path), "--privacy", "metadata_only")
    table, document = _compare(cli_workspace, *args), _compare(cli_workspace, *args, "--format", "json")
    for text in (table.stdout, document.stdout):
        assert "beta" not in text and '"c"' not in text and "top: " not in text
    parsed = json.loads(document.stdout)
    assert parsed["privacy"] == "metadata_only"
    assert {row["id"] for row in parsed["questions"] if row["flip"] == "newly_failing"} == {"q2"}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_run_stored_as_metadata_only_is_never_shown_with_content(cli_workspace: CliWorkspace) -> None:
    first = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json", "--privacy", "metadata_only"))
    second = _run_id(cli_workspace.evaluate(ONE_MISS, "--format", "json"))
    result = _compare(cli_workspace, first, second, "--set", str(cli_workspace.set_path), "--format", "json")
    document = json.loads(result.stdout)
    assert document["privacy"] == "metadata_only" and "beta" not in result.stdout
    assert all(row["current"]["documents"] is None for row in document["questions"])


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("nope",), ExitCode.INVALID_INPUT, "run 'nope' not found"),
        (("RUN", "--against", "series:main"), ExitCode.INVALID_INPUT, "baseline series 'main': it has no complete run"),
        (("RUN", "RUN", "--against", "best"), ExitCode.USAGE, "give RUN_B or --against, not both"),
    ],
)
def test_what_cannot_be_compared_says_why(
    cli_workspace: CliWorkspace, args: tuple[str, ...], code: int, message: str
) -> None:
    run = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json"))
    result = _compare(cli_workspace, *(run if a == "RUN" else a for a in args))
    assert result.exit_code == code
    assert message in result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_pull_request_run_compares_with_mains_latest_without_joining_its_series(cli_workspace: CliWorkspace) -> None:
    main_run = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json", "--name", "main"))
    result = cli_workspace.evaluate(
        ONE_MISS, "--format", "json", "--name", "pr-7", "--baseline", "series:main", "--max-top1-drop", "0.5"
    )
    verdict = json.loads(result.stdout)["verdict"]
    assert (verdict["state"], verdict["previous_run_id"]) == ("comparable", main_run)
    assert "than run" not in verdict["reason"]
    store = ResultStore(cli_workspace.store)
    assert [r.id for r in store.list_runs(model="main")] == [main_run]  # main's history is untouched
    # a second pull-request run is compared with main again, not with the first pull-request run
    again = cli_workspace.evaluate(ONE_MISS, "--format", "json", "--name", "pr-7", "--baseline", "series:main")
    assert json.loads(again.stdout)["verdict"]["previous_run_id"] == main_run


@pytest.fixture(scope="module")
def answer_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    root = tmp_path_factory.mktemp("answers")
    ids = []
    for depth in ("3", "1"):
        args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical"]
        args += ["--model", "goldeneval.extractive", "--context-depth", depth, "--name", "extractive"]
        args += ["--store", str(root / "s.duckdb"), "--cache-dir", str(root / "cache"), "--no-progress"]
        result = CliRunner().invoke(main, [*args, "--format", "json"])
        assert result.exit_code == 0, result.output
        ids.append(json.loads(result.stdout)["answers"]["run"]["id"])
    return root, ids


@pytest.mark.slow  # two answer runs of the bundled set: over 3 s
def test_answer_runs_show_both_answers_their_grades_and_reasons(answer_runs: tuple[Path, list[str]]) -> None:
    root, (first, second) = answer_runs
    result = CliRunner().invoke(main, ["compare", first, second, "--store", str(root / "s.duckdb"), "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["kind"] == "answers" and document["rates"] == ["pass rate"]
    rows = document["questions"]
    assert len(rows) == 81 and all(row["text"] for row in rows)  # the bundled set is registered
    answered = [row for row in rows if row["earlier"]["answer"] and row["current"]["answer"]]
    assert answered
    assert all(isinstance(row["current"]["score"], float) for row in answered)
    table = CliRunner().invoke(main, ["compare", first, second, "--store", str(root / "s.duckdb")]).stdout
    if any(row["flip"] != "unchanged" for row in rows):
        assert "answer: " in table


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_label_change_says_the_questions_are_compared_as_they_are(cli_workspace: CliWorkspace) -> None:
    from tests.conftest import FIXED_QUESTIONS

    first = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json"))
    cli_workspace.write_set([{**FIXED_QUESTIONS[0], "expected": ["a", "c"]}, *FIXED_QUESTIONS[1:]])
    second = _run_id(cli_workspace.evaluate(ONE_MISS, "--format", "json"))
    document = json.loads(_compare(cli_workspace, first, second, "--format", "json").stdout)
    assert document["verdict"]["state"] == "mismatch" and "labels changed" in document["verdict"]["reason"]
    assert document["notes"][1].startswith("the verdict's informational comparison covers the 2 questions whose labels")
    assert {row["id"] for row in document["questions"] if row["flip"] == "newly_failing"} == {"q2"}
    # q2's labels held: the informational comparison of the unchanged questions shows it failing
    informational = document["verdict"]["informational"]
    assert informational["note"] == "informational, no numeric verdict"
    assert [rate["newly_failing"] for rate in informational["rates"]] == [["q2"], ["q2"]]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_same_run_twice_says_so(cli_workspace: CliWorkspace) -> None:
    run = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json"))
    result = _compare(cli_workspace, run[:6], run)
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert f"name the same run, {run}: nothing to compare" in result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_runs_of_different_sets_are_not_compared(cli_workspace: CliWorkspace) -> None:
    from tests.conftest import FIXED_QUESTIONS

    first = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json"))
    cli_workspace.write_set(FIXED_QUESTIONS, set_id="other")
    second = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json"))
    result = _compare(cli_workspace, first, second)
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "measured set 'tiny'" in result.stderr and "runs of different sets are not compared" in result.stderr


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_incomplete_run_is_compared_with_the_last_complete_one_for_information(
    cli_workspace: CliWorkspace,
) -> None:
    first = _run_id(cli_workspace.evaluate(ALL_HIT, "--format", "json"))
    broken = cli_workspace.evaluate({**ONE_MISS, "alpha": "raise"}, "--format", "json")
    second = json.loads(broken.stdout)["run"]["id"]
    document = json.loads(_compare(cli_workspace, second, "--format", "json").stdout)
    assert document["verdict"]["state"] == "unknown" and document["earlier"]["id"] == first
    rows = {row["id"]: row for row in document["questions"]}
    assert rows["q1"]["flip"] == "only_in_earlier" and rows["q1"]["current"]["status"] == "error"
    assert rows["q2"]["flip"] == "newly_failing" and rows["q2"]["informational"]


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_slices_carry_their_own_paired_test(cli_workspace: CliWorkspace) -> None:
    first, second, _ = _two_runs(cli_workspace)
    document = json.loads(_compare(cli_workspace, first, second, "--format", "json").stdout)
    gap = next(s for s in document["slices"] if (s["kind"], s["value"]) == ("form", "GAP"))
    top1 = next(p for p in gap["paired"] if p["rate"] == "top-1 hit rate")
    assert (top1["questions"], top1["newly_failing"]) == (2, ["q2"])
    assert top1["bootstrap_95"][0] < 0


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_compare_says_with_which_thresholds_it_judged(cli_workspace: CliWorkspace) -> None:
    first, second, _ = _two_runs(cli_workspace, TWO_MISS)
    args = [first, second, "--max-drop", "0.9", "--slice-drop", "form:GAP=0.2", "--min-slice-questions", "1"]
    args += ["--format", "json"]
    document = json.loads(_compare(cli_workspace, *args).stdout)
    assert document["notes"][-1].startswith(
        "judged here with the thresholds of this command (--max-drop 0.9, --slice-drop form:GAP=0.2)"
    )
    assert document["verdict"]["status"] == "regression"  # the slice fell by more than 0.2


def test_an_output_path_no_file_can_take_is_bad_usage_before_anything_is_stored(
    cli_workspace: CliWorkspace,
) -> None:
    (cli_workspace.root / "file.txt").write_text("a file")
    result = cli_workspace.evaluate(ALL_HIT, "--summary-md", str(cli_workspace.root / "file.txt" / "x.md"))
    assert result.exit_code == ExitCode.USAGE
    assert "Invalid value for --summary-md: " in result.stderr and "file.txt is not a folder" in result.stderr
    assert not cli_workspace.store.exists()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_an_output_file_that_cannot_be_written_at_the_end_is_exit_3_with_the_run_stored(
    cli_workspace: CliWorkspace,
) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full on this system")
    junit = cli_workspace.root / "out" / "junit.xml"
    result = cli_workspace.evaluate(ALL_HIT, "--summary-md", "/dev/full", "--junit", str(junit))
    assert result.exit_code == ExitCode.INVALID_INPUT
    assert "goldeneval: error: --summary-md: cannot write /dev/full: No space left on device" in result.stderr
    assert junit.is_file()  # the other file is still written
    assert len(ResultStore(cli_workspace.store).list_runs()) == 1
    assert Path("/dev/full").is_char_device()


def test_a_failed_assertion_is_the_reason_an_answer_shows() -> None:
    from goldeneval.prompts.details import AssertionOutcome
    from goldeneval.report.items import _failed_assertions

    outcomes = [
        AssertionOutcome(type="contains", passed=False, weight=1.0, message="'Paris' not found"),
        AssertionOutcome(type="regex", passed=True, weight=1.0, message="matched"),
    ]
    assert _failed_assertions(outcomes) == "contains: 'Paris' not found"
    assert _failed_assertions([AssertionOutcome(type="contains", passed=False, weight=1.0)]) is None
