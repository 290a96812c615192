#!/usr/bin/env bash
# The main job on the embedded default: the Dagster job `nightly_evaluation` over every
# (set x retriever) partition of goldeneval.yaml, stored in DuckDB + Parquet under
# .goldeneval/, with the Dagster instance in .dagster_home/ (kept between invocations).
# Prints the rates per partition, the verdicts and checks, and how to open the UI.
# --partition SET|RETRIEVER (repeatable) runs only that partition.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
export DAGSTER_HOME="${DAGSTER_HOME:-$PWD/.dagster_home}"
exec .venv/bin/python -m pipelines.main "$@"
