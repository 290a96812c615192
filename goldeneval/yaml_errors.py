"""One wording for a YAML file that does not parse: where, and what the parser saw."""

from __future__ import annotations

import yaml

__all__ = ["describe_yaml_error"]


def describe_yaml_error(exc: yaml.YAMLError) -> str:
    """``malformed YAML at line L, column C: <problem>`` (the location when the parser knows it)."""
    mark = getattr(exc, "problem_mark", None)
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    problem = getattr(exc, "problem", None) or str(exc)
    return f"malformed YAML{where}: {problem}"
