"""The answer graders against the labelled calibration set of issue 42
(``benchmarks/answer_calibration.yaml``): the default grader reaches the target — accuracy at
least 0.95 and no case class below 0.9 — and the set is what its module writes, covers every
class with both labels, and is large enough (at least 300 cases)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from benchmarks.answer_calibration import (
    CALIBRATION_SET,
    CLASSES,
    CORRECT_CLASSES,
    HELDOUT_SET,
    TARGET_ACCURACY,
    TARGET_CLASS_ACCURACY,
    build_cases,
    evaluate,
    load_cases,
    render_answer_calibration,
    section_answer_calibration,
)
from goldeneval.sample import __file__ as sample_init

TRANSIT = Path(sample_init).parent / "transit" / "golden.yaml"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_set_is_large_covers_every_class_and_is_what_its_module_writes() -> None:
    cases = load_cases()
    assert len(cases) >= 300
    assert len({c.id for c in cases}) == len(cases)
    classes = Counter(c.case_class for c in cases)
    assert set(classes) == set(CLASSES) and min(classes.values()) >= 8
    assert {c.correct for c in cases} == {True, False}
    gists = {q["id"]: q["answer_gist"] for q in yaml.safe_load(TRANSIT.read_text())["questions"]}
    assert all(gists[c.question_id] == c.reference for c in cases)
    assert cases == build_cases(), "rerun: python -m benchmarks.answer_calibration --write-set"


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_default_grader_meets_the_target_and_token_f1_does_not() -> None:
    results = evaluate(load_cases(), ["deterministic", "token-f1"])
    default = results["deterministic"]
    assert default["overall"]["accuracy"] >= TARGET_ACCURACY, default["misses"]
    worst = {cls: s["accuracy"] for cls, s in default["by_class"].items() if s["accuracy"] < TARGET_CLASS_ACCURACY}
    assert worst == {}, default["misses"]
    assert results["token-f1"]["overall"]["accuracy"] < TARGET_ACCURACY  # why the default changed


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_precision_and_recall_are_of_correct_and_the_section_renders_each_class() -> None:
    results = evaluate(load_cases(), ["token-f1"])["token-f1"]
    overall = results["overall"]
    assert 0 < overall["precision"] < 1 and 0 < overall["recall"] < 1
    # an incorrect class has no correct case: its recall is undefined, its precision 0 or undefined
    assert results["by_class"]["negation"]["recall"] is None
    section = section_answer_calibration({"calibration_graders": ["deterministic", "token-f1"]}, Path("."))
    lines = render_answer_calibration(section)
    for case_class in CLASSES:
        label = "correct" if case_class in CORRECT_CLASSES else "incorrect"
        assert any(line.startswith(f"| {case_class} | {label} |") for line in lines)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_a_case_whose_label_contradicts_its_class_is_refused(tmp_path: Path) -> None:
    document = yaml.safe_load(CALIBRATION_SET.read_text(encoding="utf-8"))
    document["cases"] = document["cases"][:1]
    document["cases"][0]["correct"] = not document["cases"][0]["correct"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump(document), encoding="utf-8")
    with pytest.raises(ValueError, match=r"does not fit correct="):
        load_cases(bad)


@pytest.mark.slow  # over 3 s in the fast lane on a loaded 2-core machine (#44)
def test_the_held_out_cases_are_apart_many_and_graded_at_the_target() -> None:
    """Round 3 of issue 42: at least 60 cases written by hand (not by the module), before the
    grader was changed for them; the default grader reaches 0.95 on them."""
    heldout = load_cases(HELDOUT_SET)
    assert len(heldout) >= 60 and len({c.id for c in heldout}) == len(heldout)
    assert not {c.id for c in heldout} & {c.id for c in build_cases()}
    themes = Counter(c.source for c in heldout)
    assert set(themes) == {f"heldout-r3/{t}" for t in ("names", "polarity", "units", "abstention")}
    assert {c.correct for c in heldout} == {True, False}
    results = evaluate(heldout, ["deterministic"])["deterministic"]
    assert results["overall"]["accuracy"] >= TARGET_ACCURACY, results["misses"]
    section = section_answer_calibration({"calibration_graders": ["deterministic"]}, Path("."))
    lines = render_answer_calibration(section)
    assert any(line.startswith("**Held out**") for line in lines)
    assert any(line.startswith(f"| all | {len(heldout)} | 0.422 |") for line in lines)  # before the changes
