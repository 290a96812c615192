"""The bundled sample: a fictional city transport authority's service pages and a golden set.

Registered as the entry point ``goldeneval.sample`` of ``goldeneval.golden_question_sets``.
"""

from __future__ import annotations

from pathlib import Path

from goldeneval.retrieval.golden import GoldenQuestionSet, load_golden_set

SAMPLE_DIR = Path(__file__).parent / "transit"
SAMPLE_SET_PATH = SAMPLE_DIR / "golden.yaml"
SAMPLE_CORPUS_PATH = SAMPLE_DIR / "corpus"


def golden_question_sets() -> list[GoldenQuestionSet]:
    return [load_golden_set(SAMPLE_SET_PATH)]
