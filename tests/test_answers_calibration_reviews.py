"""The held-out review sets of issue 42 (rounds 6 to 11): each set's cases are apart and graded at
the target, and the benchmark's section shows each with the figure it had before its round.
The section grades every set, so it is made once for all of them."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.answer_calibration import (
    REVIEW6_SET,
    REVIEW7_SET,
    REVIEW8_SET,
    REVIEW9_SET,
    REVIEW10_SET,
    REVIEW11_SET,
    TARGET_ACCURACY,
    evaluate,
    load_cases,
    render_answer_calibration,
    section_answer_calibration,
)


@pytest.fixture(scope="module")
def section_lines() -> list[str]:
    section = section_answer_calibration({"calibration_graders": ["deterministic"]}, Path("."))
    return render_answer_calibration(section)


@pytest.mark.slow  # grades every calibration set: over 2 s of processor time (docs/testing.md)
@pytest.mark.parametrize(
    ("cases_file", "count", "heading", "before_row"),
    [
        (REVIEW6_SET, 298, "**Review 6**", "| all | 298 | 0.866 |"),
        (REVIEW7_SET, 200, "**Review 7**", "| all | 200 | 0.925 |"),
        (REVIEW8_SET, 211, "**Review 8**", "| all | 211 | 0.938 |"),
        (REVIEW9_SET, 207, "**Review 9**", "| all | 207 | 0.932 |"),
        (REVIEW10_SET, 178, "**Review 10**", "| all | 178 | 0.893 |"),
        (REVIEW11_SET, 150, "**Review 11**", "| all | 150 | 0.987 |"),
    ],
)
def test_a_review_set_is_apart_and_graded_at_the_target_with_its_before_figure(
    section_lines: list[str], cases_file: Path, count: int, heading: str, before_row: str
) -> None:
    cases = load_cases(cases_file)
    assert len(cases) == count and len({c.id for c in cases}) == len(cases)
    results = evaluate(cases, ["deterministic"])["deterministic"]
    assert results["overall"]["accuracy"] >= TARGET_ACCURACY, results["misses"]
    assert any(line.startswith(heading) for line in section_lines)
    assert any(line.startswith(before_row) for line in section_lines)  # before the changes
