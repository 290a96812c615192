"""Cohen's kappa between assessors, and ``goldeneval judgments stats``."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from goldeneval.cli import main
from goldeneval.judgments.agreement import cohen_kappa
from goldeneval.judgments.judgments import JudgmentLine, append_lines


def cohen_kappa_score(first: list[int], second: list[int]) -> float:
    """scikit-learn's kappa, the reference (imported here: 1.4 s, for the tests that compare with it)."""
    from sklearn.metrics import cohen_kappa_score as reference  # type: ignore[import-untyped]

    return float(reference(first, second))


def _table(counts: dict[tuple[int, int], int]) -> tuple[list[int], list[int]]:
    first: list[int] = []
    second: list[int] = []
    for (a, b), n in counts.items():
        first += [a] * n
        second += [b] * n
    return first, second


def test_kappa_and_its_standard_error_match_a_hand_computed_textbook_example() -> None:
    # Wikipedia's "Cohen's kappa" example: 50 items, yes/yes 20, yes/no 5, no/yes 10, no/no 15:
    # p_o = 0.7, p_e = 0.5 * 0.6 + 0.5 * 0.4 = 0.5, kappa = 0.4.  The Fleiss-Cohen-Everitt (1969)
    # variance, by hand: diagonal 0.4 * (1 - 1.1 * 0.6)^2 + 0.3 * (1 - 0.9 * 0.6)^2 = 0.10972;
    # off-diagonal 0.36 * (0.1 * 1.1^2 + 0.2 * 0.9^2) = 0.10188; less (0.4 - 0.5 * 0.6)^2 = 0.01;
    # over 50 * 0.5^2: 0.2016 / 12.5 = 0.016128, se = 0.126996.
    first, second = _table({(1, 1): 20, (1, 0): 5, (0, 1): 10, (0, 0): 15})
    found = cohen_kappa(first, second)
    assert found.observed == pytest.approx(0.7)
    assert found.kappa == pytest.approx(0.4)
    assert found.se == pytest.approx(0.016128**0.5)
    assert (found.low, found.high) == pytest.approx((0.4 - 1.959964 * 0.126996, 0.4 + 1.959964 * 0.126996), abs=1e-5)


@pytest.mark.slow  # over 0.3 s of processor time: kept out of the fast lane's minute (#44)
@pytest.mark.parametrize("seed", range(6))
def test_kappa_matches_scikit_learn_on_random_graded_pairs(seed: int) -> None:
    rng = random.Random(seed)
    first = [rng.choice([0, 0, 1, 2, 3]) for _ in range(80)]
    second = [grade if rng.random() < 0.6 else rng.choice([0, 1, 2, 3]) for grade in first]
    assert cohen_kappa(first, second).kappa == pytest.approx(cohen_kappa_score(first, second))


def test_kappa_is_undefined_when_both_give_one_grade_only() -> None:
    found = cohen_kappa([1, 1, 1], [1, 1, 1])
    assert (found.kappa, found.se, found.observed) == (None, None, 1.0)


def _judgments(path: Path, grades: dict[str, list[int]]) -> None:
    documents = [f"d{i}" for i in range(len(next(iter(grades.values()))))]
    lines = [JudgmentLine(question="q1" if i < 6 else "q2", document=d) for i, d in enumerate(documents)]
    append_lines(path, [*lines, JudgmentLine(question="q2", document="unjudged")])
    for assessor, given in grades.items():
        append_lines(
            path,
            [
                JudgmentLine(question=line.question, document=line.document, grade=g, assessor=assessor)
                for line, g in zip(lines, given, strict=True)
            ],
        )


def test_two_assessors_files_give_scikit_learns_kappa_in_stats(tmp_path: Path) -> None:
    ann = [0, 1, 2, 3, 1, 0, 2, 2, 1, 0]
    bob = [0, 1, 1, 3, 1, 1, 2, 3, 1, 0]
    path = tmp_path / "j.jsonl"
    _judgments(path, {"ann": ann, "bob": bob})
    result = CliRunner().invoke(main, ["judgments", "stats", str(path), "--format", "json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    (agreement,) = stats["agreement"]
    assert agreement["assessors"] == ["ann", "bob"]
    assert agreement["pairs"] == 10
    assert agreement["kappa"] == pytest.approx(cohen_kappa_score(ann, bob))
    assert agreement["ci_low"] < agreement["kappa"] < agreement["ci_high"]
    assert (stats["pairs"], stats["judged"], stats["unjudged"]) == (11, 10, 1)
    assert stats["questions"] == [
        {"question": "q1", "pairs": 6, "judged": 6, "unjudged": 0},
        {"question": "q2", "pairs": 5, "judged": 4, "unjudged": 1},
    ]
    assert stats["grades"]["ann"] == {"0": 3, "1": 3, "2": 3, "3": 1}


def test_stats_as_text_name_progress_grades_and_agreement(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    _judgments(path, {"ann": [0, 1, 1, 0], "bob": [0, 1, 0, 0]})
    result = CliRunner().invoke(main, ["judgments", "stats", str(path)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "4 of 5 pairs judged, 1 unjudged, over 2 questions"
    assert "  ann: 0: 2, 1: 2" in lines
    kappa = cohen_kappa_score([0, 1, 1, 0], [0, 1, 0, 0])
    assert any(line.startswith(f"  ann / bob: {kappa:.3f} [") and "over 4 pairs, 75.0% agree" in line for line in lines)


def test_stats_of_a_missing_file_is_invalid_input(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["judgments", "stats", str(tmp_path / "none.jsonl")])
    assert result.exit_code == 3
    assert "judgments file not found" in result.output
