"""Several judge rubrics in one run (issue 42): ``--judge-rubrics`` measures faithfulness,
relevance, context precision and context recall as RAGAS defines them, each stored as its own
measure per question and in the summary, never averaged with the grader's pass rate.

Through ``goldeneval answers`` with a real chat-completions server that scripts both the
answering model and the judge: the judge's verdict on each unit (answer sentence, retrieved
document, reference sentence) comes from a table here, so every measure is checked against a
hand computation of RAGAS's formula."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.prompts.measures import context_precision, sentences, share
from goldeneval.prompts.rubrics import CONTEXT_PRECISION, CONTEXT_RECALL, RELEVANCE, STATEMENT_SUPPORT
from tests.chat_server import Reply, answer, chat_server, last_user_message, verdict

FARES = "A day ticket costs 7.80 in zones A and B."
ZONES = "Zones A and B cover the city centre; a day ticket is valid in both."
TICKETS = "A day ticket costs what two single rides cost; children ride free."
FERRY = "The first ferry leaves Harbour Front at 08:00 on Saturdays."
ANSWERS = {
    "What does a day ticket cost?": "A day ticket costs 7.80. It is sold on the bus.",
    "When does the first Saturday ferry leave?": "The first ferry leaves at 08:00.",
}
GISTS = {
    "fare": "A day ticket costs 7.80. It is valid in zones A and B. Children ride free.",
    "ferry": "08:00",
}
SUPPORTED = {  # faithfulness: each answer sentence, supported by the passages or not
    "A day ticket costs 7.80.": 1.0,
    "It is sold on the bus.": 0.0,
    "The first ferry leaves at 08:00.": 0.9,
}
ATTRIBUTABLE = {  # context recall: each reference sentence, attributable to the passages or not
    "A day ticket costs 7.80.": 1.0,
    "It is valid in zones A and B.": 0.7,
    "Children ride free.": 0.2,
    "08:00": 1.0,
}
USEFUL = {"Fares": 1.0, "Zones": 0.0, "Tickets": 0.3, "Ferry": 1.0}  # context precision: each retrieved passage's title
RELEVANT = 0.8


def _reply(body: dict[str, Any]) -> Reply:
    prompt = last_user_message(body)
    if body["model"] != "judge":
        return answer(ANSWERS[prompt.rsplit("Question: ", 1)[-1]])
    system = body["messages"][0]["content"]
    if system.startswith(STATEMENT_SUPPORT.text):
        return verdict(SUPPORTED[prompt.rsplit("Statement of the answer to check:\n", 1)[1]])
    if system.startswith(CONTEXT_RECALL.text):
        return verdict(ATTRIBUTABLE[prompt.rsplit("Statement of the reference answer to check:\n", 1)[1]])
    if system.startswith(CONTEXT_PRECISION.text):
        return verdict(USEFUL[prompt.rsplit("Passage to judge:\n", 1)[1].split("\n", 1)[0]])
    if system.startswith(RELEVANCE.text):
        return verdict(RELEVANT)
    return verdict(0.0, f"unexpected judge prompt: {system[:40]}")


def _workspace(tmp_path: Path) -> Path:
    corpus = tmp_path / "corpus"
    corpus.mkdir(parents=True, exist_ok=True)
    for name, title, text in (("fares", "Fares", FARES), ("zones", "Zones", ZONES), ("tickets", "Tickets", TICKETS),
                              ("ferry", "Ferry", FERRY)):  # fmt: skip
        (corpus / f"{name}.md").write_text(f"# {title}\n\n{text}\n")
    questions = [
        {"id": "fare", "text": "What does a day ticket cost?", "form": "MATCH", "expected": ["fares"],
         "answer_gist": GISTS["fare"]},
        {"id": "ferry", "text": "When does the first Saturday ferry leave?", "form": "MATCH", "expected": ["ferry"],
         "answer_gist": GISTS["ferry"]},
    ]  # fmt: skip
    path = tmp_path / "transit-mini.yaml"
    path.write_text(yaml.safe_dump({"id": "transit-mini", "corpus": "corpus", "questions": questions}))
    return path


ALL = "faithfulness,relevance,context_precision,context_recall"


def _answers(tmp_path: Path, *extra: str, rubrics: str | None = ALL) -> tuple[Result, list[dict[str, Any]]]:
    with chat_server(default=_reply) as server:
        args = ["answers", "--set", str(_workspace(tmp_path)), "--retriever", "goldeneval.lexical"]
        args += ["--context-depth", "3"]
        args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
        args += ["--model-option", "model=answerer", "--model-option", "max_retries=0"]
        args += ["--judge-model", "goldeneval.openai", "--judge-option", f"base_url={server.base_url}"]
        args += ["--judge-option", "model=judge", "--judge-option", "max_retries=0"]
        args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
        if rubrics is not None:
            args += ["--judge-rubrics", rubrics]
        result = CliRunner().invoke(main, [*args, *extra])
    return result, [r for r in server.requests if r["model"] == "judge"]


def _titles(prompt: dict[str, Any]) -> list[str]:
    titles = {"fares": "Fares", "zones": "Zones", "tickets": "Tickets", "ferry": "Ferry"}
    return [titles[doc] for doc in prompt["documents"]]


def test_each_rubric_is_its_own_measure_matching_ragas_by_hand(tmp_path: Path) -> None:
    result, judged = _answers(tmp_path, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)["answers"]
    by_id = {p["id"]: p for p in document["prompts"]}
    fare, ferry = by_id["fare"], by_id["ferry"]

    # faithfulness: supported answer sentences over all of them (RAGAS: claims)
    assert fare["measure_verdicts"]["faithfulness"] == [1.0, 0.0]
    assert fare["measures"]["faithfulness"] == 1 / 2
    assert ferry["measures"]["faithfulness"] == 1 / 1
    # relevance: the judge's score of the whole answer
    assert fare["measures"]["relevance"] == ferry["measures"]["relevance"] == RELEVANT
    # context recall: attributable reference sentences over all of them (0.2 < 0.5 is a no)
    assert fare["measure_verdicts"]["context_recall"] == [1.0, 0.7, 0.2]
    assert fare["measures"]["context_recall"] == 2 / 3
    assert ferry["measures"]["context_recall"] == 1.0
    # context precision: mean of precision@k over the ranks k whose document is useful
    for prompt in (fare, ferry):
        useful = [USEFUL[title] >= 0.5 for title in _titles(prompt)]
        assert prompt["measure_verdicts"]["context_precision"] == [USEFUL[t] for t in _titles(prompt)]
        by_hand = [sum(useful[:k]) / k for k in range(1, len(useful) + 1) if useful[k - 1]]
        assert prompt["measures"]["context_precision"] == pytest.approx(sum(by_hand) / len(by_hand))
    # the fare question's ranking: not useful (0.3), useful, not useful: precision@2 = 1/2 alone
    assert (_titles(fare), _titles(ferry)) == (["Tickets", "Fares", "Zones"], ["Ferry"])
    assert fare["measures"]["context_precision"] == 1 / 2 and ferry["measures"]["context_precision"] == 1.0

    # the summary: each measure's mean over the questions, apart from the pass rate and mean score
    measures = document["aggregates"]["measures"]
    assert measures["faithfulness"] == {"questions": 2, "mean": pytest.approx(0.75)}
    assert measures["context_recall"]["mean"] == pytest.approx((2 / 3 + 1) / 2)
    assert document["run"]["measures"]["relevance"] == pytest.approx(RELEVANT)
    overall = document["aggregates"]["overall"]
    assert document["run"]["grader"] == "answer_deterministic"
    assert document["run"]["mean_score"] == overall["mean_score"]
    assert document["run"]["pass_rate"] == overall["passed"] / overall["graded"]
    # one judge call per unit: 3 answer sentences, 2 answers, 3 + 1 reference sentences, 3 + 3 documents
    assert len(judged) == 3 + 2 + 4 + len(fare["documents"]) + len(ferry["documents"])


def test_measures_are_in_the_fingerprint_and_do_not_move_the_pass_rate(tmp_path: Path) -> None:
    plain, _ = _answers(tmp_path / "a", "--format", "json", rubrics=None)
    measured, _ = _answers(tmp_path / "b", "--format", "json", rubrics="context_recall")
    assert plain.exit_code == 0 and measured.exit_code == 0, measured.output
    before, after = json.loads(plain.stdout)["answers"], json.loads(measured.stdout)["answers"]
    assert "measures" not in before["aggregates"] and before["run"]["measures"] == {}
    assert CONTEXT_RECALL.identity in after["grading"]["protocol"]
    assert CONTEXT_RECALL.identity not in before["grading"]["protocol"]
    assert before["run"]["benchmark_fingerprint"] != after["run"]["benchmark_fingerprint"]
    assert (before["run"]["pass_rate"], before["run"]["mean_score"]) == (
        after["run"]["pass_rate"],
        after["run"]["mean_score"],
    )


def test_a_judge_rubric_grader_and_measures_together_and_the_table(tmp_path: Path) -> None:
    result, _ = _answers(tmp_path, "--grader", "llm_judge", "--judge-rubric", "relevance", rubrics="context_recall")
    assert result.exit_code == 0, result.output
    assert "Judge measures (--judge-rubrics; apart from the pass rate):" in result.output
    assert "Grader: answer_llm_judge:relevance;" in result.output
    table = result.output.split("Judge measures", 1)[1]
    assert "fare       0.667" in table and "mean       0.833" in table and "measured   2" in table


def test_metadata_only_keeps_the_measures_numbers(tmp_path: Path) -> None:
    result, _ = _answers(tmp_path, "--format", "json", "--privacy", "metadata_only", rubrics="faithfulness")
    assert result.exit_code == 0, result.output
    fare = next(p for p in json.loads(result.stdout)["answers"]["prompts"] if p["id"] == "fare")
    assert fare["measures"] == {"faithfulness": 0.5} and "answer" not in fare and "documents" not in fare


def test_a_failed_measure_call_is_a_grading_error_naming_the_measure(tmp_path: Path) -> None:
    with chat_server(default=lambda body: answer("A day ticket costs 7.80.") if body["model"] != "judge"
                     else answer("not json")) as server:  # fmt: skip
        args = ["answers", "--set", str(_workspace(tmp_path)), "--retriever", "goldeneval.lexical"]
        args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
        args += ["--model-option", "model=m", "--judge-model", "goldeneval.openai"]
        args += ["--judge-option", f"base_url={server.base_url}", "--judge-option", "model=judge"]
        args += ["--judge-option", "max_retries=0", "--judge-rubrics", "relevance", "--format", "json"]
        args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
        result = CliRunner().invoke(main, args)
    prompts = json.loads(result.stdout)["answers"]["prompts"]
    assert {p["status"] for p in prompts} == {"error"}
    assert prompts[0]["error"].startswith("judge measure 'relevance': no JSON object in the judge's answer")


def test_bad_rubric_lists_are_refused(tmp_path: Path) -> None:
    result, _ = _answers(tmp_path, rubrics="faithfulness,vibes")
    assert result.exit_code == 2 and "unknown judge rubric 'vibes' for --judge-rubrics" in result.output
    runner = CliRunner().invoke(main, ["answers", "--set", "x", "--retriever", "goldeneval.lexical", "--model", "m",
                                       "--judge-rubrics", "relevance"])  # fmt: skip
    assert runner.exit_code == 2 and "--judge-rubrics needs --judge-model" in runner.output


def test_a_prompt_run_refuses_context_measures_and_takes_the_others(tmp_path: Path) -> None:
    prompts = tmp_path / "p.yaml"
    prompts.write_text(yaml.safe_dump({"id": "p", "prompts": [{"id": "p1", "prompt": "Hi?", "reference": "Hello."}]}))
    with chat_server(default=lambda body: verdict(0.8) if body["model"] == "judge" else answer("Hello.")) as server:
        args = ["prompts", "--set", str(prompts), "--model", "goldeneval.openai", "--model-option", "model=m"]
        args += ["--model-option", f"base_url={server.base_url}", "--judge-model", "goldeneval.openai"]
        args += ["--judge-option", f"base_url={server.base_url}", "--judge-option", "model=judge"]
        args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "c"), "--no-progress"]
        refused = CliRunner().invoke(main, [*args, "--judge-rubrics", "faithfulness,relevance,context_recall"])
        taken = CliRunner().invoke(main, [*args, "--judge-rubrics", "relevance", "--format", "json"])
    assert refused.exit_code == 3, refused.output
    assert "--judge-rubrics faithfulness,context_recall: a prompt run has no retrieved" in refused.output
    assert taken.exit_code == 0, taken.output
    assert json.loads(taken.stdout)["prompts"][0]["measures"] == {"relevance": 0.8}


def test_the_formulas() -> None:
    assert context_precision([1, 0, 1]) == pytest.approx((1 + 2 / 3) / 2)
    assert context_precision([0, 0, 1]) == pytest.approx(1 / 3)
    assert context_precision([0, 0]) == 0.0 and context_precision([]) is None
    assert share([1, 0.5, 0.49]) == 2 / 3 and share([]) is None
    split = ("It costs 7.80.", "Then 8 a.m. on Sundays!", "Yes")
    assert sentences("It costs 7.80. Then 8 a.m. on Sundays!\nYes") == split


def test_the_suite_file_names_the_measures_as_a_list_or_text(tmp_path: Path) -> None:
    from goldeneval.core.errors import InputError
    from goldeneval.suite import load_suite
    from tests.test_suite import _prompt_suite

    for given in (["relevance", "correctness"], "relevance, correctness"):
        judge = {"id": "goldeneval.openai", "rubrics": given}
        spec = load_suite(_prompt_suite(tmp_path, {"judge": judge})).prompt_run_spec("p", "m")
        assert spec.judge is not None and spec.judge.rubrics == ("relevance", "correctness")
    with pytest.raises(InputError, match=r"field 'prompts.judge.rubrics': .*unknown judge rubric 'vibes'"):
        load_suite(_prompt_suite(tmp_path, {"judge": {"id": "j", "rubrics": ["vibes"]}}))


def test_with_nothing_retrieved_recall_is_zero_and_precision_null_without_a_judge_call() -> None:
    from goldeneval.prompts.graders import GradingItem
    from goldeneval.prompts.measures import MeasureJudge
    from goldeneval.prompts.models import ModelContext, build_model
    from goldeneval.prompts.rubrics import MEASURES

    with chat_server(default=lambda body: verdict(1.0)) as server:
        judge = build_model(ModelContext("goldeneval.openai", {"base_url": server.base_url, "model": "judge"}))
        wanted = (MEASURES["context_precision"], MEASURES["context_recall"])
        measured = MeasureJudge(judge, judge.provenance(), wanted).measure(  # type: ignore[attr-defined]
            GradingItem("q", "What does it cost?", reference="It costs 7.80. Children ride free.", context=()), "7.80"
        )
    assert measured.values == {"context_precision": None, "context_recall": 0.0} and not server.requests
