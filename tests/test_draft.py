"""``goldeneval draft`` (issue 40) against a local fake chat server: forms measured by the overlap
rule, near-duplicates removed, drafts scored by no run until a person accepts them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.core.corpus import load_corpus
from goldeneval.core.forms import QuestionForm
from goldeneval.judgments.draft import DRAFT_PROMPT_NAME, prompt_identity
from goldeneval.judgments.judgments import JudgmentLine, append_lines, read_judgments
from goldeneval.retrieval.golden import Draft, GoldenQuestion, GoldenQuestionSet, load_draft_set, load_golden_set
from goldeneval.retrieval.labels import label_digest
from goldeneval.retrieval.overlap import OVERLAP_RULE, measured_form
from tests.chat_server import Reply, answer, chat_server, error, last_user_message

DOCUMENTS = ["fares/day-ticket", "timetables/ferry-f1-weekdays", "service/bikes-on-ferry"]


def _corpus(tmp_path: Path) -> Path:
    """Three pages of the sample corpus as a corpus of their own."""
    from goldeneval.sample import SAMPLE_DIR

    documents = {doc.id: doc for doc in load_corpus(SAMPLE_DIR / "corpus")}
    path = tmp_path / "corpus.jsonl"
    path.write_text(
        "".join(
            json.dumps({"_id": d, "title": documents[d].title, "text": documents[d].text}) + "\n" for d in DOCUMENTS
        ),
        encoding="utf-8",
    )
    return path


SCRIPTED: dict[str, list[dict[str, str]]] = {
    # a claimed GAP that repeats the title (measured MATCH: relabelled), a true GAP, a near-duplicate
    "Day Ticket": [
        {"text": "How much is the Day Ticket?", "form": "MATCH"},
        {"text": "Day Ticket prices", "form": "GAP"},
        {"text": "What does it cost to ride all day as often as I like?", "form": "GAP"},
        {"text": "How much is the Day Ticket ?", "form": "MATCH"},
    ],
    "Ferry F1": [
        {"text": "Ferry F1 weekday timetable departures", "form": "MATCH"},
        {"text": "When does the first boat leave on a Monday morning?", "form": "GAP"},
    ],
}


def _reply(body: dict[str, Any]) -> Reply:
    prompt = last_user_message(body)
    title = prompt.split("Document title: ", 1)[1].split("\n", 1)[0]
    for start, questions in SCRIPTED.items():
        if title.startswith(start):
            return answer("```json\n" + json.dumps({"questions": questions}) + "\n```")
    return answer("I would rather not.")  # no JSON: this document drafts nothing


def _draft(corpus: Path, out: Path, base_url: str, *args: str) -> Result:
    command = ["draft", "--corpus", str(corpus), "--model", "goldeneval.openai", "--model-option",
               f"base_url={base_url}", "--model-option", "model=drafter", "--model-option", "max_retries=0",
               "--per-document", "2", "--out", str(out), "--cache-dir", str(out.parent / "cache"), *args]  # fmt: skip
    return CliRunner().invoke(main, command)


def test_drafts_have_measured_forms_no_near_duplicates_and_their_provenance(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path), tmp_path / "drafts.yaml"
    with chat_server(default=_reply) as server:
        result = _draft(corpus, out, server.base_url)
    assert result.exit_code == 0, result.output
    assert len(server.requests) == 3
    assert "write 2 questions of each of two forms" in last_user_message(server.requests[0])
    drafted = load_draft_set(out)
    documents = {doc.id: doc for doc in load_corpus(corpus)}
    texts = [q.text for q in drafted.questions]
    assert "How much is the Day Ticket ?" not in texts  # a near-duplicate of the first: dropped
    assert len(texts) == 5
    for question in drafted.questions:
        assert question.draft is not None
        source = documents[question.draft.source]
        assert question.expected == {source.id}
        assert question.form is measured_form(question.text, [f"{source.title}\n{source.text}"])
        assert (question.draft.rule, question.draft.model) == (OVERLAP_RULE, "goldeneval.openai")
        assert question.draft.prompt == prompt_identity() and question.draft.prompt.startswith(DRAFT_PROMPT_NAME)
    [relabelled] = [q for q in drafted.questions if q.text == "Day Ticket prices"]
    assert relabelled.form.value == "MATCH" and relabelled.draft is not None
    assert relabelled.draft.claimed_form.value == "GAP" and relabelled.draft.overlap == 1.0
    assert "document 'service/bikes-on-ferry': nothing drafted" in result.output
    assert "drafted 5 questions from 3 documents" in result.output and "1 near-duplicates dropped" in result.output
    assert "model calls: 3 calls sent" in result.output


def test_mismatch_drop_drops_a_draft_whose_form_the_overlap_contradicts(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path), tmp_path / "drafts.yaml"
    with chat_server(default=_reply) as server:
        result = _draft(corpus, out, server.base_url, "--mismatch", "drop")
    assert result.exit_code == 0, result.output
    drafted = load_draft_set(out)
    assert all(q.draft is not None and q.form is q.draft.claimed_form for q in drafted.questions)
    assert "Day Ticket prices" not in [q.text for q in drafted.questions]


def test_a_failed_call_drafts_nothing_for_its_document_and_no_draft_at_all_writes_nothing(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path), tmp_path / "drafts.yaml"
    with chat_server(default=lambda _: error(500)) as server:
        result = _draft(corpus, out, server.base_url)
    assert result.exit_code == 3
    assert "no question drafted from 3 document(s); nothing written: document " in result.output
    assert "nothing drafted: " in result.output  # why, for each document (the first three)
    assert not out.exists()


def test_an_out_path_no_file_can_be_written_to_is_refused_before_any_call(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path)
    (tmp_path / "afile").write_text("")
    asked: list[dict[str, Any]] = []

    def reply(request: dict[str, Any]) -> Reply:
        asked.append(request)
        return _reply(request)

    with chat_server(default=reply) as server:
        result = _draft(corpus, tmp_path / "afile" / "drafts.yaml", server.base_url)
    assert result.exit_code == 2
    assert "is not a folder" in result.output
    assert asked == []


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_no_run_scores_a_draft_until_a_person_accepts_it(tmp_path: Path) -> None:
    corpus, out = _corpus(tmp_path), tmp_path / "drafts.yaml"
    with chat_server(default=_reply) as server:
        assert _draft(corpus, out, server.base_url).exit_code == 0
    store = ["--store", str(tmp_path / "r.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
    refused = CliRunner().invoke(main, ["retrieval", "--set", str(out), "--retriever", "goldeneval.lexical", *store])
    assert refused.exit_code == 3
    assert "question #1 (id 'draft-00001'): field 'draft': a drafted question no person accepted yet" in (
        refused.output
    )
    assert not (tmp_path / "r.duckdb").exists()

    # pooling pools each draft's source; the person accepts two drafts and rejects the rest
    judgments = tmp_path / "j.jsonl"
    pooled = CliRunner().invoke(
        main, ["pool", "--set", str(out), "--depth", "3", "--out", str(judgments), "--cache-dir", str(tmp_path / "c")]
    )
    assert pooled.exit_code == 0, pooled.output
    drafted = load_draft_set(out)
    read = read_judgments(judgments)
    assert {pair for pair, sources in read.pairs.items() if [s.source for s in sources] == ["draft"]} == {
        (q.id, next(iter(q.expected))) for q in drafted.questions
    }
    accepted = {drafted.questions[0].id, drafted.questions[2].id}
    append_lines(
        judgments,
        [
            JudgmentLine(question=q.id, document=next(iter(q.expected)), grade=int(q.id in accepted), assessor="ann")
            for q in drafted.questions
        ],
    )
    labelled = tmp_path / "labelled.yaml"
    to_set = CliRunner().invoke(
        main, ["judgments", "to-set", str(judgments), "--set", str(out), "--out", str(labelled)]
    )
    assert to_set.exit_code == 0, to_set.output
    kept = load_golden_set(labelled)  # a run's loader: no draft left
    assert {q.id for q in kept.questions} == accepted
    # a rejected draft is no no-answer question, and another relevant document does not save it
    rejected = next(q for q in drafted.questions if q.id not in accepted)
    other = next(d for q in drafted.questions for d in q.expected if d not in rejected.expected)
    append_lines(judgments, [JudgmentLine(question=rejected.id, document=other, grade=1, assessor="ann")])
    again = tmp_path / "again.yaml"
    flags = ["--no-answer-when-all-negative", "--allow-unknown-documents"]
    rerun = CliRunner().invoke(
        main, ["judgments", "to-set", str(judgments), "--set", str(out), "--out", str(again), *flags]
    )
    assert rerun.exit_code == 0, rerun.output
    assert {q.id for q in load_golden_set(again).questions} == accepted
    assert f"question {rejected.id!r}: a draft rejected" in rerun.output
    assert all(q.draft is None for q in kept.questions)
    assert "draft" not in yaml.safe_load(labelled.read_text())["questions"][0]
    run = CliRunner().invoke(main, ["retrieval", "--set", str(labelled), "--retriever", "goldeneval.lexical", *store])
    assert run.exit_code == 0, run.output


def test_a_drafts_provenance_is_not_hashed_into_the_label_digest() -> None:
    plain = GoldenQuestion(id="q", text="Day Ticket prices", form=QuestionForm.MATCH, expected=frozenset({"d"}))
    draft = Draft(source="d", claimed_form=QuestionForm.GAP, overlap=1.0, rule=OVERLAP_RULE, model="m", prompt="p")
    drafted = plain.model_copy(update={"draft": draft})
    digests = {label_digest(GoldenQuestionSet(id="s", questions=(q,))) for q in (plain, drafted)}
    assert len(digests) == 1
