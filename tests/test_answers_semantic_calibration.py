"""The semantic grader's threshold is calibrated, and documented, on a labelled sample (issue 24).

The slow test recomputes every pair's cosine with the bundled model, picks the threshold as
:func:`goldeneval.prompts.semantic.calibrate` does, and checks that it is
``CALIBRATED_THRESHOLD`` and that docs/guide/answers.md states that threshold and that
accuracy: changing the sample, the model or the method fails here until code and guide agree."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
import yaml

from goldeneval.answers.semantic import build
from goldeneval.core.errors import InputError
from goldeneval.prompts.grader_plugins import GraderContext
from goldeneval.prompts.semantic import (
    CALIBRATED_THRESHOLD,
    CALIBRATION_SAMPLE,
    calibrate,
    load_calibration_sample,
)
from goldeneval.sample import __file__ as sample_init

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "answers.md"
TRANSIT = Path(sample_init).parent / "transit" / "golden.yaml"
DOCUMENTED = re.compile(
    r"Calibrated threshold: \*\*(?P<threshold>[0-9.]+)\*\*, (?P<correct>\d+) of (?P<total>\d+) pairs "
    r"graded right \(accuracy (?P<accuracy>[0-9.]+)\)"
)


def test_the_sample_is_balanced_and_its_references_are_gists_of_the_transit_sample() -> None:
    sample = load_calibration_sample()
    assert 40 <= len(sample.pairs) <= 60
    assert len({p.id for p in sample.pairs}) == len(sample.pairs)
    labels = Counter(p.correct for p in sample.pairs)
    assert labels[True] == labels[False]
    kinds = {(p.kind, p.correct) for p in sample.pairs}
    assert kinds == {
        ("paraphrase", True), ("concise", True), ("wrong", False), ("off-topic", False), ("regurgitated", False),
    }  # fmt: skip
    gists = {q.get("answer_gist") for q in yaml.safe_load(TRANSIT.read_text())["questions"]}
    assert {p.reference for p in sample.pairs} <= gists


def test_calibration_takes_the_middle_of_the_best_run_of_thresholds() -> None:
    # right for every threshold in (0.40, 0.70]: 0.41 .. 0.70, whose middle is 0.55
    assert calibrate([0.2, 0.4, 0.7, 0.9], [False, False, True, True]).threshold == 0.55
    tied = calibrate([0.3, 0.5, 0.6, 0.8], [True, False, True, False])  # 2 of 4 at best, three runs
    assert (tied.correct, tied.total) == (2, 4)
    assert tied.threshold == 0.15  # the longest run, 0.00 .. 0.30
    with pytest.raises(ValueError, match="one label per score"):
        calibrate([0.5], [True, False])


def test_a_malformed_sample_is_one_line_naming_file_and_field(tmp_path: Path) -> None:
    bad = tmp_path / "sample.yaml"
    bad.write_text(
        yaml.safe_dump({"id": "x", "pairs": [{"id": "a", "reference": "r", "answer": "a", "kind": "k"}] * 2})
    )
    with pytest.raises(InputError, match=rf"^{re.escape(str(bad))}: field 'pairs.0.correct': Field required$"):
        load_calibration_sample(bad)


@pytest.mark.slow
def test_the_documented_threshold_is_the_one_the_sample_calibrates() -> None:
    grader = build(GraderContext(grader_id="semantic"))
    assert grader.pass_threshold == CALIBRATED_THRESHOLD
    sample = load_calibration_sample(CALIBRATION_SAMPLE)
    scores = grader.encoder.similarities([(p.answer, p.reference) for p in sample.pairs])
    calibration = calibrate(scores, [p.correct for p in sample.pairs])
    assert calibration.threshold == CALIBRATED_THRESHOLD
    documented = DOCUMENTED.search(GUIDE.read_text(encoding="utf-8"))
    assert documented is not None, f"{GUIDE} states no 'Calibrated threshold: **T**, N of M pairs graded right'"
    assert float(documented["threshold"]) == calibration.threshold
    assert (int(documented["correct"]), int(documented["total"])) == (calibration.correct, calibration.total)
    assert documented["accuracy"] == f"{calibration.accuracy:.3f}"
    assert calibration.accuracy >= 0.85  # well above the 0.5 of guessing on a balanced sample
