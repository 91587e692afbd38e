"""How cost figures read in labels, the terminal and the report (one format everywhere)."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal


def num(value: Decimal, places: int = 2) -> str:
    """A figure: thousands separated, rounded half up, trailing zeros dropped."""
    q = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{q:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def money(value: str | None, places: int = 0) -> str:
    """A decimal string of the evidence (money) for people, all `places` kept; n/a if absent."""
    if value is None:
        return "n/a"
    q = Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return f"{q:,.{places}f}"
