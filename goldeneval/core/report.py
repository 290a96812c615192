"""What every kind of run's report shares: the lines under a verdict's one-line summary."""

from __future__ import annotations

from goldeneval.core.regression import RegressionVerdict

__all__ = ["verdict_lines"]


def _ids(ids: tuple[str, ...], limit: int | None) -> str:
    if limit is None or len(ids) <= limit:
        return ", ".join(ids)
    return ", ".join(ids[:limit]) + f", ... ({len(ids) - limit} more)"


def verdict_lines(verdict: RegressionVerdict, *, limit: int | None = None) -> list[str]:
    """The verdict's details under its one-line summary, for every kind of run; ``limit`` caps
    the ids listed per flip (every id when None)."""
    lines = []
    if verdict.previous_run_id:
        lines.append(f"  compared with run {verdict.previous_run_id} ({verdict.state.value})")
    if verdict.treatment_change:
        lines.append(f"  treatment changed: {verdict.treatment_change}")
    for paired in verdict.paired:
        low, high = paired.interval
        lines.append(
            f"  {paired.rate}: {len(paired.newly_failing)} newly failing, {len(paired.newly_passing)} newly "
            f"passing of {paired.questions}; McNemar p={paired.p_value:.3g}; "
            f"95% bootstrap interval of the change [{low:+.3f}, {high:+.3f}]"
        )
        if paired.newly_failing:
            lines.append(f"    newly failing: {_ids(paired.newly_failing, limit)}")
        if paired.newly_passing:
            lines.append(f"    newly passing: {_ids(paired.newly_passing, limit)}")
    lines += [f"  slice {c.describe()}" for c in verdict.slice_changes if c.regressed]
    if verdict.coverage is not None:
        lines += verdict.coverage.lines()
    if verdict.informational is not None:
        lines += verdict.informational.lines(limit)
    return lines
