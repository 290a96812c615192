"""Materialisation metadata helpers every kind uses: numbers as text on partitioned assets and
checks and as floats on the per-series keys, Arrow schemas as Dagster TableSchemas, a verdict's
comparison as Markdown tables.  (A kind's own metadata, such as retrieval's hit rates and rank
metrics, lives with its assets.)

Dagster's UI plots every float and int metadata entry of an asset key over that key's events
(its Plots tab), and every float and int of an asset check over the check's executions.  On a
key partitioned by (set x retriever) that line runs across the partitions: lexical, then dense,
then a changed corpus, in materialisation order.  So the partitioned assets and their checks
carry their numbers as text (:func:`shown_rates`, :func:`shown_counts`: shown, never plotted),
and only the per-series keys of ``assets.series`` carry floats (:func:`float_rates`), whose
plots run over the nights.  A reader of such a text reads it back with :func:`metadata_number`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import dagster as dg
import pyarrow as pa

from goldeneval.core.privacy import PrivacyMode
from goldeneval.core.regression import RateChange, RegressionVerdict
from goldeneval.kinds import KindDeclaration
from goldeneval.store.parquet import WrittenTable

UNKNOWN = "unknown"


def table_schema(schema: pa.Schema) -> dg.TableSchema:
    return dg.TableSchema(columns=[dg.TableColumn(name=f.name, type=str(f.type)) for f in schema])


def table_metadata(table: WrittenTable) -> dict[str, Any]:
    """A partitioned table's row count (as text: ``dagster/row_count``, an int, would be plotted
    across the partitions) and its column schema."""
    return {**shown_counts({"row_count": table.num_rows}), "dagster/column_schema": table_schema(table.schema)}


def float_rates(values: Mapping[str, float | None]) -> dict[str, Any]:
    """Rates as floats, for the per-series keys only (``assets.series``: the UI plots them over
    the nights); absent when nothing was scored.  A partitioned asset or check shows its rates
    with :func:`shown_rates` instead."""
    return {name: dg.MetadataValue.float(value) for name, value in values.items() if value is not None}


def shown_rates(values: Mapping[str, float | None]) -> dict[str, Any]:
    """Rates of a partitioned asset or check as text to three places (``"0.654"``): shown on its
    page, never plotted across its partitions; absent when nothing was scored.  The exact values
    are in the store, and as floats on the per-series keys (:func:`float_rates`)."""
    return {name: dg.MetadataValue.text(f"{value:.3f}") for name, value in values.items() if value is not None}


def shown_counts(values: Mapping[str, int]) -> dict[str, Any]:
    """Counts of a partitioned asset or check as text (``"81"``): shown, never plotted."""
    return {name: dg.MetadataValue.text(str(int(value))) for name, value in values.items()}


def metadata_number(entry: object) -> float | None:
    """A rate or count read back from metadata: a float or int value, or the text
    :func:`shown_rates` and :func:`shown_counts` write; None when absent or not a number."""
    value = entry.value if isinstance(entry, dg.MetadataValue) else entry
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    try:
        return float(str(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class RunLabels:
    """How a kind's summary and its checks name the run in their metadata, the same for every
    kind: the kind, the set (``set``), the series under its dimension's name (``retriever``,
    ``model``, ...), which dimension that is, and the two stored rates under the kind's
    metadata keys, with what the kind calls them in messages (``rate_names``: ``[key, name]``
    pairs, ``pass_rate``'s first).  The alert
    sensor reads a failed check's alert from these alone (``pipelines.sensors.alert_for``)."""

    kind: str
    dimensions: tuple[str, str]
    """The kind's set dimension, then its series dimension."""
    rates: tuple[tuple[str, str], tuple[str, str]]
    """The metadata key and the name in messages of the stored ``pass_rate``, then ``mean_score``."""

    @classmethod
    def of(cls, kind: KindDeclaration, names: Mapping[str, str] | None = None) -> RunLabels:
        """A declared kind's labels: its declared rates' metadata keys, named in messages by
        ``names`` (what the stored ``pass_rate`` and ``mean_score`` are called: a kind's
        details' ``rate_names``), else by the titles of its declared rates."""
        (first_title, first_key), (second_title, second_key) = kind.rates
        shown = names or {"pass_rate": first_title, "mean_score": second_title}
        return cls(kind.name, kind.dimensions, ((first_key, shown["pass_rate"]), (second_key, shown["mean_score"])))

    def identity(self, set_id: str, series: str, pass_rate: float | None, mean_score: float | None) -> dict[str, Any]:
        """The run's labels and its rates (as text: :func:`shown_rates`), for a summary's or a
        check's metadata."""
        set_dimension, series_dimension = self.dimensions
        (first, _), (second, _) = self.rates
        return {
            "kind": self.kind,
            "set": set_id,
            series_dimension: series,
            "set_dimension": set_dimension,
            "series_dimension": series_dimension,
            "rate_names": dg.MetadataValue.json([list(rate) for rate in self.rates]),  # in order: JSON sorts keys
            **shown_rates({first: pass_rate, second: mean_score}),
        }


def text_or_unknown(value: str | None) -> dg.MetadataValue:
    return dg.MetadataValue.text(value if value is not None else UNKNOWN)


MAX_QUESTION_ROWS = 50
"""Newly failing and passing questions listed per comparison table; the rest are counted."""


def _cell(value: object) -> str:
    """A value as one Markdown table cell: no line break, no column separator."""
    return " ".join(str(value).split()).replace("|", "\\|")


def _number(value: float | None, signed: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value:+.3f}" if signed else f"{value:.3f}"


def _p(value: float | None) -> str:
    return "-" if value is None else f"{value:.3g}"


def _rate_rows(changes: Sequence[RateChange]) -> list[str]:
    return [
        f"| {_cell(c.rate)} | {_number(c.previous)} | {_number(c.current)} | {_number(-c.drop, signed=True)} "
        f"| {_number(-c.threshold, signed=True)} | {_p(c.p_value)} | {'**yes**' if c.regressed else 'no'} |"
        for c in changes
    ]


def comparison_markdown(verdict: RegressionVerdict, privacy: PrivacyMode) -> str:
    """The comparison as the UI renders it (``MetadataValue.md``): the verdict, the treatment
    that changed, each rate's change against its threshold, the paired statistics, and the
    newly failing and newly passing questions by id.

    It holds what ``verdict_details`` holds, as tables a person reads: question ids (kept in
    every privacy mode, ADR-215 decision 5), never question text; the unjudged documents of a
    newly failing question only under ``full`` (under ``metadata_only`` only their count)."""
    lines = [f"**{_cell(verdict.status.value)}** ({_cell(verdict.state.value)}): {_cell(verdict.reason)}", ""]
    if verdict.previous_run_id:
        lines += [f"Compared with run `{_cell(verdict.previous_run_id)}`.", ""]
    lines += [f"**Treatment change:** {_cell(verdict.treatment_change or 'none')}", ""]
    changes = [*verdict.changes, *(c for c in verdict.slice_changes if c.regressed)]
    if changes:
        lines += [
            "| rate | previous | current | change | allowed | McNemar p | regressed |",
            "| --- | ---: | ---: | ---: | ---: | ---: | --- |",
            *_rate_rows(changes),
            "",
        ]
    if verdict.paired:
        lines += [
            "| rate | questions | newly failing | newly passing | McNemar p | 95% bootstrap interval of the change |",
            "| --- | ---: | ---: | ---: | ---: | --- |",
        ]
        for paired in verdict.paired:
            low, high = paired.interval
            lines.append(
                f"| {_cell(paired.rate)} | {paired.questions} | {len(paired.newly_failing)} "
                f"| {len(paired.newly_passing)} | {_p(paired.p_value)} | [{low:+.3f}, {high:+.3f}] |"
            )
        lines.append("")
        lines += _question_rows(verdict, privacy)
    if verdict.coverage is not None:
        note = verdict.coverage
        lines += [
            f"**Label coverage:** judged@3 {_number(note.baseline)} -> {_number(note.candidate)}; "
            f"{note.newly_unjudged} questions' top-3 hold documents nobody judged that the earlier run's did not.",
            "",
        ]
    unchanged = verdict.informational
    if unchanged is not None:  # a mismatch: the unchanged questions, shown, never gated
        lines += [
            f"**{_cell(unchanged.heading[0].upper() + unchanged.heading[1:])}**",
            "",
            "| rate | questions | previous | current | newly failing | newly passing | McNemar p |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
            *(
                f"| {_cell(r.rate)} | {r.questions} | {r.earlier:.3f} | {r.current:.3f} | {len(r.newly_failing)} "
                f"| {len(r.newly_passing)} | {_p(r.p_value)} |"
                for r in unchanged.rates
            ),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"


def _question_rows(verdict: RegressionVerdict, privacy: PrivacyMode) -> list[str]:
    """One row per question whose outcome changed, per paired rate; with a column of the newly
    failing question's unjudged top-3 documents where the runs measured label coverage."""
    coverage = verdict.coverage
    rows: list[str] = []
    total = 0
    for paired in verdict.paired:
        for change, questions in (("newly failing", paired.newly_failing), ("newly passing", paired.newly_passing)):
            for question in questions:
                total += 1
                if len(rows) >= MAX_QUESTION_ROWS:
                    continue
                row = f"| `{_cell(question)}` | {_cell(paired.rate)} | {change} |"
                if coverage is not None:
                    documents = coverage.failing_unjudged.get(question, ()) if change == "newly failing" else ()
                    shown = (
                        ", ".join(f"`{_cell(d)}`" for d in documents)
                        if privacy is PrivacyMode.FULL
                        else (f"{len(documents)} (ids withheld)" if documents else "")
                    )
                    row += f" {shown or '-'} |"
                rows.append(row)
    if not rows:
        return ["No question changed its outcome.", ""]
    header = ["| question | rate | change |", "| --- | --- | --- |"]
    if coverage is not None:
        header = ["| question | rate | change | unjudged top-3 documents |", "| --- | --- | --- | --- |"]
    more = [f"… and {total - len(rows)} more (all in `verdict_details`)."] if total > len(rows) else []
    return [*header, *rows, "", *more]
