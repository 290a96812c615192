#!/usr/bin/env bash
# Create .venv inside the project (if missing) and install goldeneval with its dense, test,
# postgres, distributed, qdrant, langchain and llamaindex extras, at the exact versions of constraints.txt.
# Sourced by scripts/main.sh and scripts/test.sh; safe to run again (pip skips what is there).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
# torch first, pinned: left to the resolver, sentence-transformers pulls a multi-GB CUDA build.
.venv/bin/python -m pip install --quiet --disable-pip-version-check torch==2.13.0
.venv/bin/python -m pip install --quiet --disable-pip-version-check -c constraints.txt -e '.[dense,test,postgres,distributed,qdrant,langchain,llamaindex]'
