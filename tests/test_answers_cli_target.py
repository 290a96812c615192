"""``goldeneval answers`` names what it retrieves with the options of ``goldeneval retrieval``
(one declaration, goldeneval.cli.retrieval.target_options), ``--beir-split`` included."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.cli.app import ExitCode


@pytest.fixture
def beir(tmp_path: Path) -> Path:
    """A BEIR folder whose only qrels split is ``dev``; its questions have no answer_gist."""
    (tmp_path / "qrels").mkdir()
    (tmp_path / "corpus.jsonl").write_text(
        '{"_id": "d1", "title": "Bus", "text": "The night bus runs hourly."}\n'
        '{"_id": "d2", "title": "Tram", "text": "Trams stop at midnight."}\n'
    )
    (tmp_path / "queries.jsonl").write_text(
        '{"_id": "q1", "text": "when does the night bus run"}\n{"_id": "q2", "text": "when do trams stop"}\n'
    )
    (tmp_path / "qrels" / "dev.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td2\t1\n")
    return tmp_path


def _answers(folder: Path, *extra: str) -> Result:
    args = ["answers", "--set", str(folder), "--retriever", "goldeneval.lexical", "--model", "goldeneval.extractive"]
    args += ["--store", str(folder / "s.duckdb"), "--cache-dir", str(folder / "cache"), "--no-progress", *extra]
    return CliRunner().invoke(main, args)


def test_answers_reads_the_qrels_split_it_is_given(beir: Path) -> None:
    default = _answers(beir)
    assert default.exit_code == ExitCode.INVALID_INPUT
    assert f"{beir / 'qrels' / 'test.tsv'}: qrels file not found" in default.stderr
    dev = _answers(beir, "--beir-split", "dev")
    assert dev.exit_code == ExitCode.INVALID_INPUT  # the split loaded; its questions carry no gist
    assert f"set 'beir-{beir.name}-dev': no question has an answer_gist, so no answer can be graded" in dev.stderr
    assert not (beir / "s.duckdb").exists()
