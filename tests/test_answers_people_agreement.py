"""People check the graders (issue 42): a file of answer judgments (correct, incorrect,
abstained) for a stored run's answers gives each grader's agreement with those people —
Cohen's kappa with its interval — matching scikit-learn's ``cohen_kappa_score``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.judgments.answer_judgments import grader_verdict
from goldeneval.prompts.details import PromptDetail
from tests.chat_server import Reply, answer, chat_server, last_user_message

# (prompt id, question, reference, the model's answer, the grader's verdict)
PROMPTS = [
    ("p1", "What does a day ticket cost?", "7.80", "It costs 7.80.", "correct"),
    ("p2", "When does the first ferry leave?", "08:00", "At 8 am.", "correct"),
    ("p3", "What does a monthly pass cost?", "89.00", "It costs 98.00.", "incorrect"),
    ("p4", "What is the penalty fare?", "60.00", "The documents do not say.", "incorrect"),  # prompt run
    ("p5", "How long does tram T3 take?", "27 minutes", "About half an hour.", "incorrect"),
    ("p6", "Who is the Managing Director?", "Dr Helena Marsh", "Helena Marsh.", "correct"),
]
# what two people said of the same answers
PEOPLE = {
    "ann": {"p1": "correct", "p2": "correct", "p3": "incorrect", "p4": "abstained", "p5": "correct", "p6": "correct"},
    "bob": {"p1": "correct", "p2": "incorrect", "p3": "incorrect", "p4": "abstained", "p5": "incorrect"},
}
VERDICTS = ("correct", "incorrect", "abstained")


def _run(tmp_path: Path) -> str:
    path = tmp_path / "people.yaml"
    prompts = [{"id": pid, "prompt": q, "reference": ref} for pid, q, ref, _, _ in PROMPTS]
    path.write_text(yaml.safe_dump({"id": "people", "prompts": prompts}), encoding="utf-8")
    answers = {q: text for _, q, _, text, _ in PROMPTS}

    def reply(body: dict[str, Any]) -> Reply:
        return answer(answers[last_user_message(body)])

    with chat_server(default=reply) as server:
        args = ["prompts", "--set", str(path), "--model", "goldeneval.openai", "--model-option"]
        args += [f"base_url={server.base_url}", "--model-option", "model=m", "--store", str(tmp_path / "s.duckdb")]
        result = CliRunner().invoke(main, [*args, "--no-progress", "--format", "json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert [p["passed"] for p in document["prompts"]] == [v == "correct" for *_, v in PROMPTS]
    return str(document["run"]["id"])


def _stats(tmp_path: Path, lines: list[dict[str, str]], *extra: str) -> Result:
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    args = ["judgments", "answer-stats", str(path), "--store", str(tmp_path / "s.duckdb"), *extra]
    return CliRunner().invoke(main, args)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_graders_kappa_against_people_matches_scikit_learn(tmp_path: Path) -> None:
    from sklearn.metrics import cohen_kappa_score  # type: ignore[import-untyped]

    run_id = _run(tmp_path)
    lines = [
        {"run": run_id[:10], "question": q, "verdict": v, "assessor": who}
        for who, verdicts in PEOPLE.items()
        for q, v in verdicts.items()
    ]
    lines.insert(0, {"run": run_id[:10], "question": "p1", "verdict": "incorrect", "assessor": "ann"})  # superseded
    result = _stats(tmp_path, lines, "--format", "json")
    assert result.exit_code == 0, result.output
    found = {a["assessor"]: a for a in json.loads(result.stdout)["agreements"]}
    assert set(found) == {"ann", "bob"}
    grader = {pid: verdict for pid, *_, verdict in PROMPTS}
    for who, verdicts in PEOPLE.items():
        questions = sorted(verdicts)
        expected = cohen_kappa_score([grader[q] for q in questions], [verdicts[q] for q in questions])
        assert found[who]["kappa"] == pytest.approx(expected)
        assert found[who]["pairs"] == len(questions)
        assert found[who]["grader"] == "deterministic" and found[who]["run"] == run_id
        assert found[who]["ci_low"] <= found[who]["kappa"] <= found[who]["ci_high"]
    assert found["ann"]["confusion"]["incorrect"]["abstained"] == 1  # p4: the grader failed an abstention
    text = _stats(tmp_path, lines)
    assert text.exit_code == 0, text.output
    assert "ann" in text.output and "deterministic" in text.output


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
@pytest.mark.parametrize(
    ("line", "message"),
    [
        ({"run": "RUN", "question": "p1", "verdict": "maybe", "assessor": "ann"}, "answers.jsonl:1: field 'verdict'"),
        ({"run": "RUN", "question": "p1", "verdict": "correct"}, "answers.jsonl:1: field 'assessor': Field required"),
        ({"run": "RUN", "question": "p9", "verdict": "correct", "assessor": "ann"}, "has no question 'p9'"),
        ({"run": "nope", "question": "p1", "verdict": "correct", "assessor": "ann"}, "nope"),
    ],
)
def test_bad_judgments_are_one_line_of_invalid_input(tmp_path: Path, line: dict[str, str], message: str) -> None:
    run_id = _run(tmp_path)
    result = _stats(tmp_path, [{k: (run_id if v == "RUN" else v) for k, v in line.items()}])
    assert result.exit_code == 3, result.output
    assert message in result.output


@pytest.mark.parametrize(
    ("status", "outcome", "passed", "verdict"),
    [
        ("ok", "pass", True, "correct"),
        ("ok", "fail", False, "incorrect"),
        ("ok", "missed_abstention", False, "incorrect"),
        ("ok", "abstained", True, "abstained"),
        ("ok", "over_abstention", False, "abstained"),
        ("ok", None, True, "correct"),  # format 1 details
        ("unstable", "unstable", None, None),
        ("error", None, None, None),
    ],
)
def test_the_graders_outcomes_read_as_verdicts(
    status: str, outcome: str | None, passed: bool | None, verdict: str | None
) -> None:
    detail = PromptDetail.model_validate(
        {"id": "q", "status": status, "outcome": outcome, "passed": passed, "score": None, "latency_ms": 1.0}
    )
    assert grader_verdict(detail) == verdict
