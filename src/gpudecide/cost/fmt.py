"""How cost figures read in labels, the terminal and the report (one format everywhere).

English keeps `1,234.5`; Russian and Kazakh get Babel's grouping and decimal sign.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

from babel.numbers import format_decimal

from gpudecide.i18n import _babel_locale, translator

_ = translator("cost")


def num(value: Decimal, places: int = 2, lang: str = "en") -> str:
    """A figure: thousands separated, rounded half up, trailing zeros dropped."""
    q = value.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if lang != "en":
        pattern = "#,##0" + ("." + "#" * places if places > 0 else "")
        return str(format_decimal(q, format=pattern, locale=_babel_locale(lang)))
    text = f"{q:,.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def money(value: str | None, places: int = 0, lang: str = "en") -> str:
    """A decimal string of the evidence (money) for people, all `places` kept; n/a if absent."""
    if value is None:
        return _("n/a", lang)
    q = Decimal(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    if lang != "en":
        pattern = "#,##0" + ("." + "0" * places if places > 0 else "")
        return str(format_decimal(q, format=pattern, locale=_babel_locale(lang)))
    return f"{q:,.{places}f}"
