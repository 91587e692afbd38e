"""DuckDB over the Arrow job tables: one way to open a connection and to quote text."""

from __future__ import annotations

import duckdb
import pyarrow as pa

__all__ = [
    "connect",
    "literal",
]


def connect(**tables: pa.Table) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB that reads times in UTC, with the Arrow tables registered by name.

    Registering is zero-copy: a query scans the Arrow buffers where they are.
    """
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("SET enable_progress_bar = false")
    for name, table in tables.items():
        con.register(name, table)
    return con


def literal(text: str) -> str:
    """A SQL string literal (for file paths and user regexes that go into a query)."""
    return "'" + text.replace("'", "''") + "'"
