"""How figures read in tables and the terminal: one format for every section."""

from __future__ import annotations

from typing import Any


def fmt(value: Any) -> str:
    """A number with thousands separated and no trailing zeros; n/a when absent."""
    if value is None:
        return "n/a"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal; n/a when absent."""
    return "n/a" if value is None else f"{value:.1%}"


def hours(seconds: float | None) -> str:
    """Seconds as hours with one decimal; n/a when absent."""
    return "n/a" if seconds is None else f"{seconds / 3600:.1f} h"
