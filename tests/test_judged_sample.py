"""Issue 23's done-when on the bundled sample: labels from pooling lexical (judged by the sample's
own labels), a baseline of lexical, then a retriever that surfaces documents nobody judged
shows judged@3 below 1 and, with ``--min-judged 0.9 --fail-on-regression``, exits 6 naming
"labels incomplete"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.judgments.judgments import JudgmentLine, append_lines, read_judgments
from goldeneval.retrieval.golden import load_golden_set
from goldeneval.sample import SAMPLE_DIR

SAMPLE_SET = SAMPLE_DIR / "golden.yaml"


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def _judged_set(tmp_path: Path) -> Path:
    """Pool lexical at depth 3 and judge every pooled pair (and each expected document) as the
    sample labels it: ``to-set`` keeps the pairs judged 0 as judged negatives."""
    judgments, out = tmp_path / "j.jsonl", tmp_path / "judged.yaml"
    pooled = _invoke(
        "pool", "--set", str(SAMPLE_SET), "--retriever", "goldeneval.lexical", "--depth", "3", "--out", str(judgments)
    )
    assert pooled.exit_code == 0, pooled.output
    original = {q.id: q for q in load_golden_set(SAMPLE_SET).questions}
    pairs = set(read_judgments(judgments).pairs)
    expected = {(q.id, d) for q in original.values() for d in q.expected} - pairs
    append_lines(judgments, [JudgmentLine(question=q, document=d) for q, d in sorted(expected)])
    append_lines(
        judgments,
        [
            JudgmentLine(question=q, document=d, grade=original[q].grade(d), assessor="ann")
            for q, d in sorted(pairs | expected)
        ],
    )
    made = _invoke(
        "judgments",
        "to-set",
        str(judgments),
        "--out",
        str(out),
        "--set",
        str(SAMPLE_SET),
        "--no-answer-when-all-negative",
    )
    assert made.exit_code == 0, made.output
    return out


def _shifted_run(documents: dict[str, list[str]], path: Path) -> Path:
    """A TREC run that puts each question's lexical ranks 4 to 6 (never pooled) first."""
    lines = []
    for question, docs in documents.items():
        order = docs[3:6] + docs[:3] + docs[6:]
        lines += [f"{question} Q0 {doc} {r} {len(order) - r + 1} shifted" for r, doc in enumerate(order, start=1)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.slow
def test_a_retriever_surfacing_unjudged_documents_is_labels_incomplete(tmp_path: Path) -> None:
    judged = _judged_set(tmp_path)
    labels = load_golden_set(judged)
    assert labels.records_negatives
    assert {q.id for q in labels.questions} == {q.id for q in load_golden_set(SAMPLE_SET).questions}
    store = str(tmp_path / "store.duckdb")
    common = ["retrieval", "--set", str(judged), "--store", store, "--no-progress", "--name", "sample"]

    baseline = _invoke(*common, "--retriever", "goldeneval.lexical", "--format", "json", "--min-judged", "0.9")
    assert baseline.exit_code == 0, baseline.output
    first = json.loads(baseline.output)
    assert first["judged"]["overall"]["judged@3"] == 1.0  # every top-3 document was pooled and judged
    assert first["verdict"]["status"] == "baseline"

    documents = {q["id"]: q["documents"] for q in first["questions"]}
    run_file = _shifted_run(documents, tmp_path / "shifted.txt")
    replay = ["--retriever", "goldeneval.trec_run", "--option", f"run={run_file}"]
    shown = _invoke(*common, *replay, "--baseline", f"run:{first['run']['id']}")
    assert shown.exit_code == 0, shown.output
    assert "judged@3: 1.000 -> " in shown.output
    assert "top-3 hold documents nobody judged that the earlier run's did not" in shown.output
    assert "goldeneval pool --set SET_FILE --retriever goldeneval.trec_run" in shown.output

    gated = _invoke(
        *common, *replay, "--baseline", f"run:{first['run']['id']}", "--min-judged", "0.9", "--fail-on-regression"
    )
    assert gated.exit_code == 6, gated.output
    verdict_line = next(line for line in gated.output.splitlines() if line.startswith("Regression verdict:"))
    assert verdict_line.startswith("Regression verdict: unknown: labels incomplete for this run: judged@3 0.")
    share = float(verdict_line.split("judged@3 ")[1].split()[0])
    assert share < 0.9
