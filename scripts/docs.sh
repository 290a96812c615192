#!/usr/bin/env bash
# Regenerate the reference pages in docs/reference/ from the code: each page's cog block calls
# docs/generate.py (the CLI's --help, the metric registry, the store schema, the JSON output).
#   bash scripts/docs.sh           rewrite the pages
#   bash scripts/docs.sh --check   only check them (what tests/test_docs_generated.py does)
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(-r)
if [ "${1:-}" = "--check" ]; then
  mode=(--check --check-fail-msg "regenerate with: bash scripts/docs.sh")
fi
.venv/bin/cog "${mode[@]}" -I docs docs/reference/*.md
