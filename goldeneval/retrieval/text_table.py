"""Text tables for people: a rate cell, a table from rows or columns, and a table streamed a
block of rows at a time (a 100,000-question run never holds every cell at once)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from goldeneval.core.errors import printable

__all__ = [
    "BLOCK_ROWS",
    "Cells",
    "column_table",
    "printable_cells",
    "rate_text",
    "streamed_table",
    "text_table",
]


def rate_text(value: float | None) -> str:
    return "   n/a" if value is None else f"{value:6.3f}"


def text_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    columns = [list(column) for column in zip(*rows, strict=True)] if rows else [[] for _ in headers]
    return column_table(headers, columns)


def column_table(headers: Sequence[str], columns: Sequence[list[str]]) -> list[str]:
    """A text table from its columns (a 100,000-question run is 700,000 cells: each column is
    checked for control characters in one pass, and padded in one comprehension)."""
    cells = [column if "".join(column).isprintable() else [printable(c) for c in column] for column in columns]
    widths = [max(len(h), max(map(len, column), default=0)) for h, column in zip(headers, cells, strict=True)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line.rstrip(), "  ".join("-" * w for w in widths)]
    padded = [[c.ljust(w) for c in column] for column, w in zip(cells[:-1], widths[:-1], strict=True)]
    out += [("  ".join(row)).rstrip() for row in zip(*padded, cells[-1], strict=True)]
    return out


Cells = Callable[[int, int], list[str]]
"""The cells of one column for the rows ``[start, stop)``."""

BLOCK_ROWS = 8192
"""Rows of a large table made at a time."""


def streamed_table(headers: Sequence[str], columns: Sequence[Cells], rows: int) -> str:
    """The lines of :func:`column_table` joined by newlines, for ``rows`` rows whose cells
    ``columns`` make a block at a time: a run's per-question table (100,000 questions: 700,000 cells)
    never holds every cell, every padded cell and every line at once.  The widths are taken
    in a first pass; the second makes each block's lines and appends them to the text, which
    grows in place (the one object the table is at the end)."""
    blocks = [(start, min(start + BLOCK_ROWS, rows)) for start in range(0, rows, BLOCK_ROWS)]
    widths = [len(header) for header in headers]
    for start, stop in blocks:
        for c, cells in enumerate(columns):
            widths[c] = max(widths[c], max(map(len, printable_cells(cells(start, stop))), default=0))
    last = len(columns) - 1
    text = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True)).rstrip()
    text += "\n" + "  ".join("-" * w for w in widths)
    for start, stop in blocks:
        padded = [
            [c.ljust(w) for c in printable_cells(cells(start, stop))]
            for cells, w in zip(columns[:-1], widths[:-1], strict=True)
        ]
        block = [
            ("  ".join(row)).rstrip() for row in zip(*padded, printable_cells(columns[last](start, stop)), strict=True)
        ]
        text += "\n" + "\n".join(block)
        del padded, block
    return text


def printable_cells(cells: list[str]) -> list[str]:
    """:func:`column_table`'s escaping, block by block (a printable cell is left as it is)."""
    return cells if "".join(cells).isprintable() else [printable(c) for c in cells]
