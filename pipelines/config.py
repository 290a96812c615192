"""Where the suite file is: $GOLDENEVAL_CONFIG, else goldeneval.yaml in the working directory,
else the one in the project folder beside this package."""

from __future__ import annotations

import os
from pathlib import Path

from goldeneval.suite import CONFIG_ENV, CONFIG_FILE_NAME

PROJECT_DIR = Path(__file__).resolve().parents[1]


def suite_path() -> Path:
    configured = os.environ.get(CONFIG_ENV)
    if configured:
        return Path(configured)
    local = Path.cwd() / CONFIG_FILE_NAME
    return local if local.is_file() else PROJECT_DIR / CONFIG_FILE_NAME
