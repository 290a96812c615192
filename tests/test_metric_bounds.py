"""Bounds under unjudged documents (issue 41): each rank metric with every unjudged document
of its top k counted not relevant (the metric as reported) and counted relevant, per question
and averaged, in the table, the JSON, the store and the Dagster metadata; the verdict names
the metrics whose bounds overlap between the two runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytrec_eval
import yaml
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.retrieval.details import RetrievalDetails
from goldeneval.retrieval.encoding import code_run
from goldeneval.retrieval.golden import GoldenQuestion, QuestionForm
from goldeneval.retrieval.incomplete import UNJUDGED, grades_in, if_unjudged_relevant
from goldeneval.retrieval.measurement import judged_values
from goldeneval.retrieval.metrics import parse_metrics
from goldeneval.retrieval.retrievers.base import document_id_mapper
from goldeneval.store import open_store
from tests.test_metrics_incomplete import TREC_NAMES, generated

BOUNDED = "hit@3,recall@10,ndcg@10,precision@5,map@100,rprec,bpref,infap"


@pytest.mark.parametrize("level", [1, 2])
def test_the_other_end_is_pytrec_eval_with_the_unjudged_top_k_judged_relevant(level: int) -> None:
    qrels, run = generated(seed=20 + level, questions=200)
    ids = sorted(qrels)
    questions = [
        GoldenQuestion(
            id=qid,
            text=qid,
            form=QuestionForm.MATCH,
            expected=frozenset(d for d, g in qrels[qid].items() if g > 0),
            grades={d: g for d, g in qrels[qid].items() if g > 0},
            not_relevant=frozenset(d for d, g in qrels[qid].items() if g == 0),
        )
        for qid in ids
    ]
    coded = code_run(questions, [run[qid] for qid in ids], document_id_mapper(""))
    metrics = parse_metrics(BOUNDED)
    kept = coded.kept(None)
    ends = if_unjudged_relevant(
        kept, coded.judgements, coded.judged, metrics, rel_level=level, ok=np.ones(len(ids), bool), depth=100
    )
    grades = grades_in(kept, coded.judgements, coded.judged)
    compared = 0
    for metric in metrics:
        k = metric.k or 1000
        augmented = {}
        for i, qid in enumerate(ids):
            start, stop = int(kept.offsets[i]), int(kept.offsets[i + 1])
            unjudged = [run[qid][p] for p in range(stop - start) if grades[start + p] == UNJUDGED and p < k]
            augmented[qid] = {**qrels[qid], **dict.fromkeys(unjudged, level)}
        name = "recip_rank" if metric.kind.key == "mrr" else TREC_NAMES[metric.name]
        evaluator = pytrec_eval.RelevanceEvaluator(augmented, {name}, level)
        scored = {qid: {d: float(len(docs) - r) for r, d in enumerate(docs)} for qid, docs in run.items() if docs}
        theirs = evaluator.evaluate(scored)
        for i, qid in enumerate(ids):
            assert ends[metric.name][i] == pytest.approx(theirs.get(qid, {}).get(name, 0.0), abs=1e-9), (qid, metric)
            compared += 1
    assert compared == 200 * len(metrics)


CORPUS = [{"_id": d, "title": d, "text": f"text {d}"} for d in ("R1", "R2", "N1", "N2", "U1", "U2", "U3")]


def write_set(folder: Path) -> Path:
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("".join(json.dumps(doc) + "\n" for doc in CORPUS))
    questions = [
        {"id": "q1", "text": "first", "form": "MATCH", "expected": ["R1"], "not_relevant": ["N1"]},
        {"id": "q2", "text": "second", "form": "GAP", "expected": ["R2"], "not_relevant": ["N2"]},
    ]
    path = folder / "set.yaml"
    path.write_text(yaml.safe_dump({"id": "bounded", "corpus": "corpus.jsonl", "questions": questions}))
    return path


def replay(tmp_path: Path, set_path: Path, name: str, lines: str, *extra: str) -> dict[str, Any]:
    run_file = tmp_path / f"{name}.run"
    run_file.write_text(lines)
    args = [
        "retrieval", "--set", str(set_path), "--retriever", "goldeneval.trec_run", "--option", f"run={run_file}",
        "--name", "engine", "--store", str(tmp_path / "results.duckdb"), "--cache-dir", str(tmp_path / "cache"),
        "--no-progress", "--metrics", "mrr@10,ndcg@10", *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(main, args)
    assert result.exit_code == ExitCode.OK, result.output
    if "--format" in extra:
        document: dict[str, Any] = json.loads(result.stdout)
        return document
    return {"text": result.stdout}


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_bounds_are_reported_stored_and_plotted_and_the_verdict_names_overlapping_ones(tmp_path: Path) -> None:
    set_path = write_set(tmp_path / "set")
    # the baseline ranks a judged negative first: mrr@10 0.5, nothing unjudged, so its bounds are one point
    first = replay(tmp_path, set_path, "first", "q1 Q0 N1 1 2 t\nq1 Q0 R1 2 1 t\nq2 Q0 R2 1 1 t\n", "--format", "json")
    # the candidate ranks two unjudged documents first: mrr@10 0.333 for q1, up to 1.0 were they relevant
    lines = "q1 Q0 U1 1 3 t\nq1 Q0 U2 2 2 t\nq1 Q0 R1 3 1 t\nq2 Q0 R2 1 1 t\n"
    second = replay(tmp_path, set_path, "second", lines, "--format", "json")
    q1 = next(q for q in second["questions"] if q["id"] == "q1")
    assert q1["metrics"]["mrr@10"] == pytest.approx(1 / 3)
    assert q1["unjudged_relevant"]["mrr@10"] == 1.0
    bounds = second["judged"]["bounds"]
    assert bounds["mrr@10"] == {"unjudged_not_relevant": pytest.approx(2 / 3), "unjudged_relevant": 1.0}
    assert "bounds_definition" in second["judged"]
    overlapping = second["verdict"]["label_coverage"]["overlapping_bounds"]
    assert overlapping["mrr@10"] == {"baseline": [0.75, 0.75], "candidate": [pytest.approx(2 / 3), 1.0]}
    # stored: the store's details hold the bounds, and the Dagster metadata plots both ends
    store = open_store(tmp_path / "results.duckdb")
    stored = store.get_run(second["run"]["id"])
    assert stored is not None
    details = stored.details
    assert isinstance(details, RetrievalDetails)
    bounds_stored = details.metric_bounds()
    assert bounds_stored is not None
    assert bounds_stored["mrr@10"] == pytest.approx((2 / 3, 1.0))
    plotted = judged_values(details)
    assert plotted["bounds/mrr@10/unjudged_relevant"] == 1.0
    # the table says the same, and the verdict names the overlap
    again = replay(tmp_path, set_path, "third", lines, "--baseline", f"run:{first['run']['id']}")["text"]
    assert "Bounds under unjudged documents (unjudged not relevant .. unjudged relevant):" in again
    assert "bounds overlap (unjudged documents not relevant .. relevant): mrr@10 0.750..0.750 -> 0.667..1.000" in again
