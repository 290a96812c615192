#!/usr/bin/env bash
# The full run (what CI runs) and the fast lane; docs/testing.md describes both.
#
#   bash scripts/test.sh            the full run
#   bash scripts/test.sh --fast     the fast lane
#   bash scripts/test.sh ARGS...    pytest ARGS after the checks (e.g. -k store); with --fast too
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
  # pytest-xdist (the test extra) spreads the tests over one worker more than there are cores
  # (many fast tests wait on child processes, local servers and timeouts), at most 8; -n N
  # among the arguments overrides it, -n 0 runs serially.  A .venv set up before pytest-xdist
  # came in runs them serially until the next full run reinstalls.
  workers=$(($(nproc) + 1))
  [ "$workers" -le 8 ] || workers=8
  parallel=(-n "$workers")
  if ! .venv/bin/python -c "import xdist" 2>/dev/null; then
    echo "scripts/test.sh --fast: pytest-xdist missing, running serially; bash scripts/test.sh installs it" >&2
    parallel=()
  fi
  # Keep compiled bytecode (gitignored __pycache__/): without it every run and every goldeneval
  # child process compiles the sources and pytest rewrites every test module anew (seconds each).
  unset PYTHONDONTWRITEBYTECODE
  # The fast lane's limit: docs/testing.md (processor seconds; a later --unmarked-slow-limit wins).
  exec .venv/bin/python -m pytest -q -m "not slow and not e2e" "${parallel[@]}" --durations=15 \
    --unmarked-slow-limit=2 "$@"
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
