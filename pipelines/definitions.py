"""The code location: `dagster dev` / `dg dev` load `defs` from here (workspace.yaml)."""

from pipelines.build import build_definitions
from pipelines.config import suite_path

defs = build_definitions(suite_path())
