"""The bundled sample is what the README's main job evaluates: it must stay a fair test bed."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.corpus import Corpus, load_corpus
from goldeneval.retrieval.golden import KNOWN_HARD_CLASSES, GoldenQuestionSet
from goldeneval.sample import SAMPLE_CORPUS_PATH, golden_question_sets
from goldeneval.store import ResultStore


@pytest.fixture(scope="module")
def sample_set() -> GoldenQuestionSet:
    [golden] = golden_question_sets()
    return golden


@pytest.fixture(scope="module")
def sample_corpus() -> Corpus:
    return load_corpus(SAMPLE_CORPUS_PATH)


def test_the_sample_corpus_has_at_least_60_documents(sample_corpus: Corpus) -> None:
    assert len(sample_corpus) >= 60


def test_every_expected_document_exists_in_the_sample_corpus(
    sample_set: GoldenQuestionSet, sample_corpus: Corpus
) -> None:
    missing = {
        q.id: sorted(q.expected - sample_corpus.ids) for q in sample_set.questions if q.expected - sample_corpus.ids
    }
    assert missing == {}


def test_the_sample_set_covers_forms_classes_multi_targets_and_no_answers(
    sample_set: GoldenQuestionSet,
) -> None:
    questions = sample_set.questions
    assert len(questions) >= 48
    assert set(Counter(q.form.value for q in questions)) == {"MATCH", "GAP"}
    assert set(KNOWN_HARD_CLASSES) <= {q.hard_class for q in questions}
    assert sum(len(q.expected) > 1 for q in questions) >= 3
    assert sum(not q.expected for q in questions) >= 3


def test_the_sample_set_names_its_corpus(sample_set: GoldenQuestionSet) -> None:
    assert sample_set.corpus is not None and Path(sample_set.corpus) == SAMPLE_CORPUS_PATH.resolve()


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_main_job_prints_and_stores_a_run_and_an_identical_rerun_passes(tmp_path: Path) -> None:
    args = [
        "retrieval",
        "--set",
        "transit-sample",
        "--retriever",
        "goldeneval.lexical",
        "--store",
        str(tmp_path / "results.duckdb"),
        "--cache-dir",
        str(tmp_path / "cache"),
        "--no-progress",
    ]
    first = CliRunner().invoke(main, args)
    assert first.exit_code == ExitCode.OK, first.output
    assert {"Overall:", "By form:", "By hard class:"} <= set(first.output.splitlines())
    second = CliRunner().invoke(main, [*args, "--fail-on-regression"])
    assert second.exit_code == ExitCode.OK
    assert "Regression verdict: pass" in second.output
    runs = ResultStore(tmp_path / "results.duckdb").list_runs()
    assert [(r.set_id, r.model, r.status) for r in runs] == [("transit-sample", "goldeneval.lexical", "complete")] * 2
    assert runs[0].pass_rate == runs[1].pass_rate
