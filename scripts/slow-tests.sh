#!/usr/bin/env bash
# Before committing: run the fast lane (scripts/test.sh --fast) and list every test that is not
# marked slow yet took over LIMIT seconds (default 3), setup and call together.  The list is a
# warning, never a failure: timings on a shared machine are noisy; the exit status is the tests'.
# Mark what it lists @pytest.mark.slow (CI still runs it) or make it faster.
#
#   bash scripts/slow-tests.sh [LIMIT] [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=3
if [[ "${1:-}" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  limit=$1
  shift
fi
exec bash scripts/test.sh --fast --list-unmarked-slow="$limit" "$@"
