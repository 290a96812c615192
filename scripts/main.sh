#!/usr/bin/env bash
# The main job on the embedded default: the bundled sample set against the built-in
# lexical retriever, stored in .goldeneval/results.duckdb.  Extra arguments go to
# `goldeneval retrieval` (e.g. --format json).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
exec .venv/bin/goldeneval retrieval --set transit-sample --retriever goldeneval.lexical "$@"
