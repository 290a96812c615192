"""docs/guide/ci.md's GitHub Actions workflow, run as written: the workflow file is parsed, and
its ``goldeneval`` steps run in a fresh folder as GitHub would run them for a push to main and
for a pull request (``if:`` conditions, ``${{ ... }}`` expressions and the workflow's ``env``
applied; ``$GITHUB_STEP_SUMMARY`` a file per step).  The steps that need GitHub itself (install,
restore with ``gh``, the ``uses:`` actions) are listed and checked by name, not run: the store
they restore is the one the push run left in the folder."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from markdown_it import MarkdownIt

from goldeneval.store import ResultStore

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "ci.md"
WORKFLOW_BLOCK = re.compile(r'^```yaml title="\.github/workflows/([^"]+)"\n(.*?)^```$', re.MULTILINE | re.DOTALL)
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
PULL_REQUEST = 123
NOT_RUN = ["Install goldeneval", "Restore main's result store"]
"""The ``run:`` steps that need GitHub (the package index, ``gh``): checked by name, not run."""

WORSE_RETRIEVER = textwrap.dedent(
    '''
    """The bundled lexical retriever with its three best documents moved to the end: a regression."""

    from goldeneval.retrieval.retrievers.lexical import build as lexical


    class Worse:
        def __init__(self, inner):
            self.inner = inner

        def retrieve(self, question, limit):
            ranking = list(self.inner.retrieve(question, limit))
            return ranking[3:] + ranking[:3]

        def provenance(self):
            return self.inner.provenance()


    def build(context):
        return Worse(lexical(context))
    '''
)


def workflow() -> dict[str, Any]:
    found = WORKFLOW_BLOCK.findall(GUIDE.read_text(encoding="utf-8"))
    assert [name for name, _ in found] == ["retrieval-quality.yml"]
    parsed: dict[str, Any] = yaml.safe_load(found[0][1])
    return parsed


def _runs(condition: str | None, event: str, succeeded: bool) -> bool:
    """The ``if:`` conditions the workflow uses, evaluated as GitHub does."""
    if condition is None:
        return succeeded
    known = {
        "github.event_name == 'push'": event == "push",
        "github.event_name == 'pull_request'": event == "pull_request",
        "always() && github.event_name == 'push'": event == "push",
        "always()": True,
    }
    assert condition in known, f"a condition this test cannot evaluate: {condition}"
    return known[condition] and (succeeded or "always()" in condition)


def _expanded(text: str) -> str:
    values = {"github.event.pull_request.number": str(PULL_REQUEST), "github.token": "token"}

    def value(match: re.Match[str]) -> str:
        assert match.group(1) in values, f"an expression this test does not know: {match.group(0)}"
        return values[match.group(1)]

    return EXPRESSION.sub(value, text)


@dataclass
class JobRun:
    exit_codes: dict[str, int]
    summaries: dict[str, str]
    skipped: list[str]
    uses: list[str]


def run_job(folder: Path, event: str, env: dict[str, str]) -> JobRun:
    """The job's steps for ``event``, in order, stopping the ordinary steps at the first failure."""
    document = workflow()
    [job] = document["jobs"].values()
    environment = {**os.environ, **{k: str(v) for k, v in document["env"].items()}, **env}
    environment["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    result = JobRun({}, {}, [], [])
    succeeded = True
    for number, step in enumerate(job["steps"]):
        name = step.get("name", step.get("uses", f"step {number}"))
        if not _runs(step.get("if"), event, succeeded):
            continue
        if "uses" in step:
            result.uses.append(name)
            continue
        if name in NOT_RUN:
            result.skipped.append(name)
            continue
        summary = folder / f"summary-{number}.md"
        step_env = {**environment, "GITHUB_STEP_SUMMARY": str(summary)}
        done = subprocess.run(
            ["bash", "-e", "-c", _expanded(step["run"])],
            cwd=folder,
            env=step_env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        result.exit_codes[name] = done.returncode
        result.summaries[name] = summary.read_text(encoding="utf-8") if summary.exists() else ""
        succeeded = succeeded and done.returncode == 0
    return result


def test_the_workflow_gates_main_and_pull_requests_and_names_the_steps_it_needs_github_for() -> None:
    document = workflow()
    [job] = document["jobs"].values()
    names = [step.get("name") for step in job["steps"]]
    for name in NOT_RUN:
        assert name in names
    commands = " ".join(step.get("run", "") for step in job["steps"])
    assert "--baseline series:main" in commands and '--summary-md "$GITHUB_STEP_SUMMARY"' in commands
    uploads = [step for step in job["steps"] if str(step.get("uses", "")).startswith("actions/upload-artifact")]
    assert [step["if"] for step in uploads] == ["always() && github.event_name == 'push'", "always()"]


@pytest.mark.slow
def test_the_workflow_runs_as_written_for_main_then_a_pull_request(tmp_path: Path) -> None:
    main = run_job(tmp_path, "push", {})
    assert main.exit_codes == {"Gate main": 0}
    assert main.skipped == NOT_RUN
    assert main.uses == [
        "actions/checkout@v4",
        "actions/setup-python@v5",
        "Keep main's result store",
        "Upload the report",
    ]
    assert "**baseline**" in main.summaries["Gate main"]
    store = ResultStore(tmp_path / ".goldeneval" / "results.duckdb")
    [main_run] = store.list_runs(model="main")

    passing = run_job(tmp_path, "pull_request", {})
    step = "Gate the pull request against main's latest run"
    assert passing.exit_codes == {step: 0}
    assert passing.uses == ["actions/checkout@v4", "actions/setup-python@v5", "Upload the report"]
    assert "**pass**" in passing.summaries[step]
    assert main_run.id[:12] in passing.summaries[step]  # compared with main's run
    assert (tmp_path / "goldeneval-report.html").stat().st_size > 0

    (tmp_path / "worse_retriever.py").write_text(WORSE_RETRIEVER, encoding="utf-8")
    failing = run_job(tmp_path, "pull_request", {"GOLDENEVAL_RETRIEVER": "worse_retriever:build"})
    assert failing.exit_codes == {step: 1}  # a regression fails the job ...
    summary = failing.summaries[step]
    assert "**regression**" in summary
    assert failing.uses == ["actions/checkout@v4", "actions/setup-python@v5", "Upload the report"]
    rendered = MarkdownIt("commonmark").enable("table").render(summary)
    assert "<table>" in rendered
    suite = ET.parse(tmp_path / "goldeneval-junit.xml").getroot()
    cases = suite.findall(".//testcase")
    assert len(cases) == 81 + 1  # one per question of transit-sample, and the gate
    failed = {str(case.get("name")) for case in cases if case.find("failure") is not None}
    assert "gate" in failed and len(failed) > 1
    newly_failing = sorted(failed - {"gate"})
    assert newly_failing[0] in summary  # ... and the summary names what newly fails
    # main's series still holds main's run alone: the pull request's runs went to pr-123
    assert [run.id for run in store.list_runs(model="main")] == [main_run.id]
    assert len(store.list_runs(model=f"pr-{PULL_REQUEST}")) == 2
