"""How cost figures read in labels, the terminal and the report (one format everywhere).

English keeps `1,234.5`; Russian and Kazakh show the same digits with Babel's group and
decimal signs (`1 234,5`).
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from gpudecide.i18n import translator
from gpudecide.report.fmt import localize_digits

_ = translator("cost")


def num(value: Decimal, places: int = 2, lang: str = "en") -> str:
    """A figure: thousands separated, rounded half up, trailing zeros dropped."""
    q = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{q:,.{places}f}"
    return localize_digits(text.rstrip("0").rstrip(".") if "." in text else text, lang)


def money(value: str | None, places: int = 0, lang: str = "en") -> str:
    """A decimal string of the evidence (money) for people, all `places` kept; n/a if absent."""
    if value is None:
        return _("n/a", lang)
    q = Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return localize_digits(f"{q:,.{places}f}", lang)
