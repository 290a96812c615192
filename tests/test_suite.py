"""goldeneval.yaml: loading, validation messages, and evaluating one (set, retriever) cell."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pytest
import yaml

from goldeneval.core.baseline import Baseline
from goldeneval.core.errors import InputError
from goldeneval.core.privacy import PrivacyMode
from goldeneval.retrieval import pipeline
from goldeneval.suite import load_suite

PROJECT = Path(__file__).resolve().parents[1]
QUESTIONS = [{"id": "q1", "text": "apple orchard", "form": "MATCH", "expected": ["apples"]}]


def _write(tmp_path: Path, config: Mapping[str, object]) -> Path:
    (tmp_path / "corpus").mkdir(exist_ok=True)
    (tmp_path / "corpus" / "apples.md").write_text("# Apples\nApples grow in the orchard.")
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"id": "s", "corpus": "corpus", "questions": QUESTIONS}))
    path = tmp_path / "goldeneval.yaml"
    path.write_text(yaml.safe_dump(dict(config)))
    return path


def test_the_project_file_evaluates_the_sample_with_the_four_builtin_retrievers() -> None:
    suite = load_suite(PROJECT / "goldeneval.yaml")
    assert suite.retrieval_cells == (["transit-sample"], ["lexical", "dense", "hybrid", "reranked"])
    assert [suite.retriever(name).id for name in suite.retrieval_cells.series] == [
        "goldeneval.lexical",
        "goldeneval.dense",
        "goldeneval.hybrid",
        "goldeneval.reranked",
    ]
    assert suite.store_path == PROJECT / ".goldeneval" / "results.duckdb"
    assert suite.tables_root == PROJECT / ".goldeneval" / "tables"
    assert (suite.config.schedule.cron, suite.config.schedule.timezone) == ("0 2 * * *", "UTC")


def test_paths_are_relative_to_the_file(tmp_path: Path) -> None:
    suite = load_suite(_write(tmp_path, {"sets": ["s.yaml"], "retrievers": {"bm25": {"id": "goldeneval.lexical"}}}))
    assert suite.set_refs == {"s": str(tmp_path / "s.yaml")}
    assert suite.cache_dir == tmp_path / ".goldeneval" / "cache"


def test_an_unknown_field_names_the_file_and_the_field(tmp_path: Path) -> None:
    path = _write(tmp_path, {"sets": ["s.yaml"], "retrievers": {"bm25": {"id": "goldeneval.lexical", "option": {}}}})
    with pytest.raises(InputError) as error:
        load_suite(path)
    assert str(error.value) == f"{path}: field 'retrievers.bm25.option': Extra inputs are not permitted"


def test_a_retriever_name_must_be_usable_as_a_partition_key(tmp_path: Path) -> None:
    path = _write(tmp_path, {"sets": ["s.yaml"], "retrievers": {"bm 25": {"id": "goldeneval.lexical"}}})
    with pytest.raises(InputError, match="retriever name 'bm 25' cannot name a partition"):
        load_suite(path)


def test_two_references_to_one_set_fail(tmp_path: Path) -> None:
    path = _write(
        tmp_path, {"sets": ["s.yaml", str(tmp_path / "s.yaml")], "retrievers": {"b": {"id": "goldeneval.lexical"}}}
    )
    with pytest.raises(InputError, match="are both set 's'"):
        load_suite(path)


def test_a_missing_file_says_how_to_fix_it(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="suite file not found; create it"):
        load_suite(tmp_path / "goldeneval.yaml")


def test_privacy_defaults_to_the_environment_then_full(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write(tmp_path, {"sets": ["s.yaml"], "retrievers": {"b": {"id": "goldeneval.lexical"}}})
    monkeypatch.delenv("GOLDENEVAL_PRIVACY", raising=False)
    assert load_suite(path).privacy is PrivacyMode.FULL
    monkeypatch.setenv("GOLDENEVAL_PRIVACY", "metadata_only")
    assert load_suite(path).privacy is PrivacyMode.METADATA_ONLY


def test_a_cell_is_stored_under_the_retriever_name_with_its_options(tmp_path: Path) -> None:
    config = {
        "sets": ["s.yaml"],
        "retrievers": {"bm25-k1": {"id": "goldeneval.lexical", "options": {"k1": 1.2}}},
    }
    run = pipeline.evaluate(load_suite(_write(tmp_path, config)).run_spec("s", "bm25-k1"))
    assert (run.set_id, run.series, run.retriever_id) == ("s", "bm25-k1", "goldeneval.lexical")
    assert run.provenance.pipeline_identity == "goldeneval.lexical/bm25s-lucene-v1(k1=1.2,b=0.75)"
    assert run.aggregates.overall.top1_rate == 1.0


def test_declared_provenance_overrides_the_retrievers_own(tmp_path: Path) -> None:
    config = {
        "sets": ["s.yaml"],
        "retrievers": {"b": {"id": "goldeneval.lexical", "provenance": {"execution_revision": "ci-build-7"}}},
    }
    run = pipeline.evaluate(load_suite(_write(tmp_path, config)).run_spec("s", "b"))
    assert run.provenance.execution_revision == "ci-build-7"


def _suite_error(tmp_path: Path, **fields: object) -> str:
    config = {"sets": ["s.yaml"], "retrievers": {"b": {"id": "goldeneval.lexical"}}, **fields}
    path = _write(tmp_path, config)
    with pytest.raises(InputError) as error:
        load_suite(path)
    return str(error.value).removeprefix(f"{path}: ")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        pytest.param(
            {"thresholds": {"slice_max_drop": {"shape:GAP": 0.1}}},
            "field 'thresholds.slice_max_drop': slice 'shape:GAP' must be '*', 'form:<FORM>' or 'hard_class:<CLASS>'",
            id="slice-kind",
        ),
        pytest.param(
            {"thresholds": {"slice_max_drop": {"form:": 0.1}}},
            "field 'thresholds.slice_max_drop': slice 'form:' must be '*', 'form:<FORM>' or 'hard_class:<CLASS>'",
            id="slice-without-value",
        ),
        pytest.param(
            {"thresholds": {"slice_max_drop": {"*": 1.5}}},
            "field 'thresholds.slice_max_drop': slice '*': the allowed drop must lie between 0 and 1, got 1.5",
            id="slice-drop-range",
        ),
        pytest.param(
            {"baseline": "latest"},
            "field 'baseline': baseline 'latest': expected 'previous', 'accepted', 'best', 'run:<id>' or "
            "'series:<name>'",
            id="baseline",
        ),
        pytest.param(
            {"schedule": {"timezone": "Mars/Olympus"}},
            "field 'schedule.timezone': 'Mars/Olympus' is not an IANA time zone (e.g. UTC, Europe/Berlin)",
            id="timezone",
        ),
        pytest.param(
            {"schedule": {"cron": "every night"}},
            "field 'schedule.cron': 'every night' is not a cron expression of five fields "
            "(minute hour day month weekday)",
            id="cron",
        ),
        pytest.param(
            {"schedule": {"cron": "99 99 * * *"}},
            "field 'schedule.cron': '99 99 * * *': the minute field '99' is not a value, range, list or step in 0-59",
            id="cron-range",
        ),
        pytest.param(
            {"thresholds": {"slice_max_drop": {"form:MAYBE": 0.1}}},
            "field 'thresholds.slice_max_drop': slice 'form:MAYBE': a form is one of MATCH, GAP",
            id="slice-unknown-form",
        ),
        pytest.param(
            {"thresholds": {"max_top1_drop": float("nan")}},
            "field 'thresholds.max_top1_drop': Input should be a finite number",
            id="threshold-nan",
        ),
        pytest.param(
            {"alerts": {"timeout_s": float("inf")}},
            "field 'alerts.timeout_s': Input should be a finite number",
            id="alert-timeout-inf",
        ),
        pytest.param(
            {"retrievers": {"b": {"id": "goldeneval.nonexistent"}}},
            "field 'retrievers.b.id': unknown retriever 'goldeneval.nonexistent' (registered: goldeneval.command, "
            "goldeneval.dense, goldeneval.http, goldeneval.hybrid, goldeneval.langchain, goldeneval.lexical, "
            "goldeneval.llamaindex, goldeneval.qdrant, goldeneval.reranked, goldeneval.trec_run)",
            id="unregistered-retriever",
        ),
        pytest.param(
            {"timeout_s": float("inf")},
            "field 'timeout_s': Input should be a finite number",
            id="timeout-inf",
        ),
        pytest.param(
            {"hit_cutoffs": [0, 3]},
            "field 'hit_cutoffs': hit cutoffs must be whole numbers from 1 to 1000",
            id="cutoffs",
        ),
        pytest.param(
            {"retrievers": {"b": {"id": "not a retriever"}}},
            "field 'retrievers.b.id': 'not a retriever' is neither a registered retriever id nor an import path "
            "package.module:factory",
            id="retriever-id",
        ),
    ],
)
def test_every_suite_field_is_validated_at_load_naming_the_field(
    tmp_path: Path, fields: dict[str, object], message: str
) -> None:
    assert _suite_error(tmp_path, **fields) == message


def test_the_suite_file_carries_baseline_significance_and_slice_options_into_the_spec(tmp_path: Path) -> None:
    config = {
        "sets": ["s.yaml"],
        "retrievers": {"b": {"id": "goldeneval.lexical"}},
        "baseline": "best",
        "thresholds": {"max_p": 0.05, "slice_max_drop": {"form:GAP": 0.15}, "min_slice_questions": 3},
    }
    spec = load_suite(_write(tmp_path, config)).run_spec("s", "b")
    assert spec.baseline == Baseline("best")
    assert spec.thresholds.max_p == 0.05
    assert dict(spec.thresholds.slice_max_drop) == {"form:GAP": 0.15}
    assert spec.thresholds.min_slice_questions == 3
    assert (spec.series, spec.retriever_id, spec.expected_set_id) == ("b", "goldeneval.lexical", "s")


def test_a_missing_retriever_corpus_names_the_field(tmp_path: Path) -> None:
    message = _suite_error(tmp_path, retrievers={"b": {"id": "goldeneval.lexical", "corpus": "nowhere"}})
    assert message == f"field 'retrievers.b.corpus': {tmp_path / 'nowhere'} does not exist"


@pytest.mark.parametrize("cron", ["0 2 * * *", "*/15 0-6 1,15 jan-jun mon-fri", "5 4 * * 7"])
def test_valid_cron_expressions_load(tmp_path: Path, cron: str) -> None:
    config = {"sets": ["s.yaml"], "retrievers": {"b": {"id": "goldeneval.lexical"}}, "schedule": {"cron": cron}}
    assert load_suite(_write(tmp_path, config)).config.schedule.cron == cron


def _prompt_suite(tmp_path: Path, prompts: Mapping[str, object]) -> Path:
    (tmp_path / "p.yaml").write_text(
        yaml.safe_dump({"id": "p", "prompts": [{"id": "a", "prompt": "?", "reference": "x"}]})
    )
    config = {
        "sets": ["s.yaml"],
        "retrievers": {"b": {"id": "goldeneval.lexical"}},
        "prompt_sets": ["p.yaml"],
        "models": {"m": {"id": "goldeneval.extractive"}},
        "prompts": dict(prompts),
    }
    return _write(tmp_path, config)


def test_the_suite_file_carries_the_grading_options_of_prompts_into_the_spec(tmp_path: Path) -> None:
    prompts = {
        "grader": "llm_judge",
        "judge": {"id": "goldeneval.openai", "rubric": "faithfulness", "samples": 3},
        "fail_on_unstable": True,
        "abstention_phrases": ["beyond me"],
        "response_cache": False,
        "max_consecutive_failures": 2,
        "workers": 4,
    }
    spec = load_suite(_prompt_suite(tmp_path, prompts)).prompt_run_spec("p", "m")
    assert spec.judge is not None and (spec.judge.rubric, spec.judge.samples) == ("faithfulness", 3)
    assert (spec.fail_on_unstable, spec.abstention_phrases) == (True, ("beyond me",))
    assert (spec.response_cache, spec.max_consecutive_failures, spec.workers) == (False, 2, 4)
    assert spec.abstention_rules().match("That is beyond me.") == "beyond me"


@pytest.mark.parametrize(
    ("prompts", "message"),
    [
        (
            {"judge": {"id": "j", "rubric": "vibes"}},
            "field 'prompts.judge.rubric': unknown rubric 'vibes'",
        ),
        (
            {"abstention_phrases": ["..."]},
            "field 'prompts.abstention_phrases': abstention phrase #1 '...'",
        ),
        ({"workers": 0}, "field 'prompts.workers': Input should be greater than or equal to 1"),
    ],
)
def test_a_bad_grading_option_in_the_suite_names_the_field(
    tmp_path: Path, prompts: Mapping[str, object], message: str
) -> None:
    with pytest.raises(InputError) as raised:
        load_suite(_prompt_suite(tmp_path, prompts))
    assert message in str(raised.value)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_cell_the_suite_does_not_declare_names_the_file_and_what_it_does_declare() -> None:
    suite = load_suite(PROJECT / "goldeneval.yaml")
    where = str(PROJECT / "goldeneval.yaml")
    with pytest.raises(InputError) as retriever:
        suite.retriever("nope")
    assert str(retriever.value) == f"{where}: no retriever named 'nope' (configured: lexical, dense, hybrid, reranked)"
    with pytest.raises(InputError) as set_id:
        suite.run_spec("nope", "lexical")
    assert str(set_id.value) == f"{where}: no set with id 'nope' (configured: transit-sample)"
    with pytest.raises(InputError) as prompt_set:
        suite.prompt_run_spec("nope", "extractive")
    assert str(prompt_set.value) == f"{where}: no prompt set with id 'nope' (configured: goldeneval.smoke)"
    with pytest.raises(InputError) as model:
        suite.prompt_run_spec("goldeneval.smoke", "nope")
    assert str(model.value) == f"{where}: no model named 'nope' (configured: extractive)"


def test_a_suite_file_that_is_not_utf8_is_invalid_input_naming_the_byte(tmp_path: Path) -> None:
    path = tmp_path / "goldeneval.yaml"
    content = b"sets: [transit-sample]\nretrievers:\n  lexical: {id: goldeneval.lexical}\n# caf\xe9\n"
    path.write_bytes(content)
    offset = content.index(b"\xe9")
    with pytest.raises(InputError) as caught:
        load_suite(path)
    assert str(caught.value) == f"{path}: not valid UTF-8 (byte offset {offset})"
