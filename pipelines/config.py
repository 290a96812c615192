"""Where the suite file is: $GOLDENEVAL_CONFIG, else goldeneval.yaml in the working directory,
else the one in the project folder beside this package.

The first two are how the ``goldeneval`` command finds it too (``goldeneval.suite.find_suite_file``),
so both doors read one ``storage:`` section; the storage settings themselves are resolved by
``goldeneval.core.storage`` (the environment first), not here."""

from __future__ import annotations

from pathlib import Path

from goldeneval.suite import CONFIG_FILE_NAME, find_suite_file

PROJECT_DIR = Path(__file__).resolve().parents[1]


def suite_path() -> Path:
    return find_suite_file() or PROJECT_DIR / CONFIG_FILE_NAME
