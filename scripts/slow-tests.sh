#!/usr/bin/env bash
# The fast lane (scripts/test.sh --fast) with another limit: it fails naming every test not
# marked slow that took over LIMIT seconds of processor time (default 2); docs/testing.md.
#
#   bash scripts/slow-tests.sh [LIMIT] [PYTEST ARGS...]
set -euo pipefail
cd "$(dirname "$0")/.."
limit=2
if [[ "${1:-}" =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  limit=$1
  shift
fi
exec bash scripts/test.sh --fast --unmarked-slow-limit="$limit" "$@"
