"""The shipped example prompt set ``goldeneval.smoke``: the pattern to copy and a runnable target.

Registered as the entry point ``goldeneval.smoke`` of ``goldeneval.golden_prompt_sets``.  It
carries a small corpus of goldeneval's own documentation, so the offline model
``goldeneval.extractive`` answers it without any network or model download.
"""

from __future__ import annotations

from pathlib import Path

from goldeneval.prompts.golden import GoldenPromptSet, load_prompt_set

SMOKE_DIR = Path(__file__).parent
SMOKE_SET_PATH = SMOKE_DIR / "smoke.yaml"
SMOKE_CORPUS_PATH = SMOKE_DIR / "corpus"


def golden_prompt_sets() -> list[GoldenPromptSet]:
    return [load_prompt_set(SMOKE_SET_PATH)]
