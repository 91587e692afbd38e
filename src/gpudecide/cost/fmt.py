"""Transitional: the money formats with a `lang` argument (`gpudecide.fmt` is the one
format); this module goes once no caller passes a language."""

from __future__ import annotations

from decimal import Decimal

from gpudecide import fmt as _fmt
from gpudecide.report.fmt import _in

__all__ = ["money", "num"]


def num(value: Decimal, places: int = 2, lang: str = "en") -> str:
    """See `gpudecide.fmt.num`."""
    with _in(lang):
        return _fmt.num(value, places)


def money(value: str | None, places: int = 0, lang: str = "en") -> str:
    """See `gpudecide.fmt.money`."""
    with _in(lang):
        return _fmt.money(value, places)
