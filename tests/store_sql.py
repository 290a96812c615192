"""Plain SQL against a result store's database, behind the store's back, on either backend:
for tests that plant rows as an older goldeneval left them or audit what was written."""

from __future__ import annotations

from typing import Any

import duckdb

from goldeneval.store import StoreLocation


def raw_sql(location: StoreLocation, statement: str, params: list[Any] | None = None) -> list[tuple[Any, ...]]:
    """Run one statement (``?`` placeholders on DuckDB, ``%s`` on PostgreSQL), commit, and
    return its rows (none for a statement without a result)."""
    if location.path is not None:
        con = duckdb.connect(str(location.path))
        try:
            cursor = con.execute(statement, params or [])
            return [tuple(row) for row in cursor.fetchall()] if cursor.description else []
        finally:
            con.close()
    import psycopg

    assert location.url is not None
    with psycopg.connect(location.url, autocommit=True) as pg:
        result = pg.execute(statement, params or None)
        return [tuple(row) for row in result.fetchall()] if result.description else []
