"""metadata_only persists no question text and no document id: every byte of every file a
run writes is scanned for marker strings planted in the questions and the document ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import ExitCode, main
from goldeneval.core.privacy import PRIVACY_ENV, PrivacyMode, resolve_privacy
from tests.conftest import CliWorkspace

QUESTION_MARKER = "QMARK7c1e"
DOCUMENT_MARKER = "DMARK93fa"
QUESTIONS = [
    {"id": "q1", "text": f"{QUESTION_MARKER} fares", "form": "MATCH", "expected": [f"{DOCUMENT_MARKER}-1"]},
    {"id": "q2", "text": f"{QUESTION_MARKER} bikes", "form": "GAP", "expected": [f"{DOCUMENT_MARKER}-2"]},
]
RANKINGS = {
    f"{QUESTION_MARKER} fares": [f"{DOCUMENT_MARKER}-1#0", f"{DOCUMENT_MARKER}-3"],
    f"{QUESTION_MARKER} bikes": [f"{DOCUMENT_MARKER}-3"],
}


def files_containing(folder: Path, marker: str) -> list[str]:
    return sorted(
        str(path.relative_to(folder))
        for path in folder.rglob("*")
        if path.is_file() and marker.encode() in path.read_bytes()
    )


@pytest.fixture
def private_workspace(cli_workspace: CliWorkspace) -> CliWorkspace:
    cli_workspace.write_set(QUESTIONS)
    return cli_workspace


def run_in(workspace: CliWorkspace, out: Path, privacy: str) -> str:
    out.mkdir()
    path = workspace.root / "rankings.json"
    path.write_text(json.dumps(RANKINGS))
    args = ["retrieval", "--set", str(workspace.set_path), "--retriever", "fixed_rankings_plugin:build"]
    args += ["--option", f"rankings={path}", "--option", "corpus=rev-1", "--store", str(out / "results.duckdb")]
    args += ["--no-progress", "--privacy", privacy, "--format", "json"]
    for _ in range(2):  # a baseline and a comparison: both write
        result = CliRunner().invoke(main, args)
        assert result.exit_code == ExitCode.OK, result.output
    return result.output


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_persists_no_question_text_and_no_document_id(private_workspace: CliWorkspace) -> None:
    out = private_workspace.root / "metadata-only"
    run_in(private_workspace, out, "metadata_only")
    assert files_containing(out, QUESTION_MARKER) == []
    assert files_containing(out, DOCUMENT_MARKER) == []


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_keeps_the_summary_and_the_fingerprints(private_workspace: CliWorkspace) -> None:
    document = json.loads(run_in(private_workspace, private_workspace.root / "m", "metadata_only"))
    assert document["run"]["privacy"] == "metadata_only"
    assert document["run"]["top1_rate"] == 0.5
    assert document["run"]["benchmark_fingerprint"].startswith("benchmark-v1:sha256:")
    assert [q["id"] for q in document["questions"]] == ["q1", "q2"]
    assert all("documents" not in q for q in document["questions"])


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_full_mode_does_persist_document_ids_so_the_scan_can_fail(private_workspace: CliWorkspace) -> None:
    out = private_workspace.root / "full"
    run_in(private_workspace, out, "full")
    assert files_containing(out, DOCUMENT_MARKER) != []
    assert files_containing(out, QUESTION_MARKER) == []  # question text is never stored


def test_the_privacy_default_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRIVACY_ENV, "metadata_only")
    assert resolve_privacy(None) is PrivacyMode.METADATA_ONLY
    assert resolve_privacy("full") is PrivacyMode.FULL


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_metadata_only_keeps_only_the_class_of_an_error(cli_workspace: CliWorkspace) -> None:
    # The plugin looks the question up in its rankings: a missing one raises a KeyError that
    # quotes the question text, which must not reach the store.
    cli_workspace.write_set(QUESTIONS)
    rankings = {f"{QUESTION_MARKER} fares": RANKINGS[f"{QUESTION_MARKER} fares"]}
    out = cli_workspace.root / "errors"
    out.mkdir()
    path = cli_workspace.root / "rankings.json"
    path.write_text(json.dumps(rankings))
    args = ["retrieval", "--set", str(cli_workspace.set_path), "--retriever", "fixed_rankings_plugin:build"]
    args += ["--option", f"rankings={path}", "--store", str(out / "r.duckdb"), "--privacy", "metadata_only"]
    result = CliRunner().invoke(main, [*args, "--format", "json", "--no-progress"])
    errors = [q["error"] for q in json.loads(result.stdout)["questions"]]
    assert errors == [None, "KeyError"]
    assert files_containing(out, QUESTION_MARKER) == []


@pytest.mark.parametrize(
    ("message", "kept"),
    [("KeyError: 'DMARK-1'", "KeyError"), ("timed out after 5 s", "timed out after 5 s"), ("odd", "error")],
)
def test_content_free_errors(message: str, kept: str) -> None:
    from goldeneval.core.privacy import content_free_error

    assert content_free_error(message) == kept
