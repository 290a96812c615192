#!/usr/bin/env bash
# The whole test suite: lint (ruff), types (mypy, strict on goldeneval/), then pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy goldeneval assets resources pipelines tests benchmarks
echo "== pytest"
.venv/bin/python -m pytest "$@"
