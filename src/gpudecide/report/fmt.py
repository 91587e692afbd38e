"""How figures read in tables and the terminal: one format for every section.

English keeps its historic form (`1,234.5`, `12.5%`, `1.5 h`). Russian and Kazakh show the
same digits (rounded once, as in English) with their own group and decimal signs from
Babel (`1 234,5`, `12,5%`, `1,5 ч`), so a figure never differs between languages.
"""

from __future__ import annotations

from typing import Any

from babel.numbers import get_decimal_symbol, get_group_symbol

from gpudecide.i18n import _babel_locale, translator

_ = translator("report")


def localize_digits(text: str, lang: str) -> str:
    """An English-formatted number ("1,234.5") with `lang`'s group and decimal signs."""
    if lang == "en":
        return text
    loc = _babel_locale(lang)
    group, decimal = get_group_symbol(loc), get_decimal_symbol(loc)
    return text.replace(",", "\0").replace(".", decimal).replace("\0", group)


def not_available(lang: str = "en") -> str:
    """The mark of an absent figure ("n/a") in the reader's language."""
    return _("n/a", lang)


def fmt(value: Any, lang: str = "en") -> str:
    """A number with thousands separated and no trailing zeros; n/a when absent."""
    if value is None:
        return not_available(lang)
    if isinstance(value, float):
        text = f"{value:,.3f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"
        return localize_digits(text, lang)
    if isinstance(value, int):
        return localize_digits(f"{value:,}", lang)
    return str(value)


def pct(value: float | None, lang: str = "en") -> str:
    """A share as a percentage with one decimal; n/a when absent."""
    return not_available(lang) if value is None else localize_digits(f"{value:.1%}", lang)


def pct0(value: float | None, lang: str = "en") -> str:
    """A share as a whole percentage ("20%"); n/a when absent."""
    return not_available(lang) if value is None else localize_digits(f"{value:.0%}", lang)


def hours(seconds: float | None, lang: str = "en") -> str:
    """Seconds as hours with one decimal; n/a when absent."""
    if seconds is None:
        return not_available(lang)
    unit = _("h", lang)
    return f"{localize_digits(f'{seconds / 3600:.1f}', lang)} {unit}"
