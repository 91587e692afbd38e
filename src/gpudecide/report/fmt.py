"""How figures read in tables and the terminal: one format for every section.

English keeps its historic form (`1,234.5`, `12.5%`, `1.5 h`); Russian and Kazakh get their
own grouping and decimal sign from Babel (`1 234,5`, `12,5%`, `1,5 ч`).
"""

from __future__ import annotations

from typing import Any

from babel.numbers import format_decimal, format_percent

from gpudecide.i18n import _babel_locale, translator

_ = translator("report")


def not_available(lang: str = "en") -> str:
    """The mark of an absent figure ("n/a") in the reader's language."""
    return _("n/a", lang)


def fmt(value: Any, lang: str = "en") -> str:
    """A number with thousands separated and no trailing zeros; n/a when absent."""
    if value is None:
        return not_available(lang)
    if isinstance(value, (int, float)) and not isinstance(value, bool) and lang != "en":
        return str(format_decimal(value, format="#,##0.###", locale=_babel_locale(lang)))
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def pct(value: float | None, lang: str = "en") -> str:
    """A share as a percentage with one decimal; n/a when absent."""
    if value is None:
        return not_available(lang)
    if lang == "en":
        return f"{value:.1%}"
    return str(format_percent(value, format="#,##0.0%", locale=_babel_locale(lang)))


def pct0(value: float | None, lang: str = "en") -> str:
    """A share as a whole percentage ("20%"); n/a when absent."""
    if value is None:
        return not_available(lang)
    if lang == "en":
        return f"{value:.0%}"
    return str(format_percent(value, format="#,##0%", locale=_babel_locale(lang)))


def hours(seconds: float | None, lang: str = "en") -> str:
    """Seconds as hours with one decimal; n/a when absent."""
    if seconds is None:
        return not_available(lang)
    if lang == "en":
        return f"{seconds / 3600:.1f} h"
    value = format_decimal(round(seconds / 3600, 1), format="#,##0.0", locale=_babel_locale(lang))
    unit = _("h", lang)
    return f"{value} {unit}"
