#!/usr/bin/env bash
# The whole test suite: lint (ruff), types (mypy, strict on goldeneval/), the architecture
# (import-linter contracts in pyproject.toml), then pytest.  What CI runs.
#
#   bash scripts/test.sh            everything (set-up, ruff, mypy, lint-imports, every test)
#   bash scripts/test.sh --fast     no set-up, no mypy, no slow or e2e tests; prints the slowest
#   bash scripts/test.sh ARGS...    pytest ARGS after the checks (e.g. -k store)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fast" ]; then
  shift
  if [ ! -x .venv/bin/python ]; then
    echo "scripts/test.sh --fast: no .venv here; run bash scripts/test.sh once first" >&2
    exit 2
  fi
  .venv/bin/ruff check --quiet .
  .venv/bin/lint-imports --no-cache >/dev/null || .venv/bin/lint-imports --no-cache
  exec .venv/bin/python -m pytest -q -m "not slow and not e2e" --durations=15 "$@"
fi
bash scripts/setup-venv.sh
echo "== ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "== mypy"
.venv/bin/mypy goldeneval assets resources pipelines tests benchmarks
echo "== import-linter"
.venv/bin/lint-imports --no-cache
echo "== pytest"
.venv/bin/python -m pytest "$@"
