"""How figures read for people: numbers, shares, money, durations and dates, one format for
every command and report section, in the reader's language (`gpudecide.i18n`).

English keeps its historic form (`1,234.5`, `12.5%`, `1.5 h`). Russian and Kazakh show the
same digits (rounded once, as in English) with their own group and decimal signs from Babel
(`1 234,5`, `12,5%`, `1,5 ч`), so a figure never differs between languages.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import ROUND_HALF_UP, Decimal
from functools import lru_cache

from gpudecide.i18n import babel_locale, current_language, translator

__all__ = [
    "decimal_text",
    "digits",
    "fmt",
    "hours",
    "moment",
    "money",
    "not_available",
    "num",
    "pct",
    "pct0",
    "when",
]

_ = translator("report")


@lru_cache(maxsize=8)
def _signs(lang: str) -> tuple[str, str]:
    from babel.numbers import get_decimal_symbol, get_group_symbol

    loc = babel_locale(lang)
    return str(get_group_symbol(loc)), str(get_decimal_symbol(loc))


def digits(text: str) -> str:
    """An English-formatted number ("1,234.5") with the reader's group and decimal signs."""
    lang = current_language()
    if lang == "en":
        return text
    group, decimal = _signs(lang)
    return text.replace(",", "\0").replace(".", decimal).replace("\0", group)


def not_available() -> str:
    """The mark of an absent figure ("n/a")."""
    return _("n/a")


def fmt(value: object) -> str:
    """A number with thousands separated and up to three decimals, no trailing zeros; n/a
    when absent; anything else as it is."""
    if value is None:
        return not_available()
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, float):
        text = f"{value:,.3f}".rstrip("0").rstrip(".") if value % 1 else f"{value:,.0f}"
        return digits(text)
    if isinstance(value, int):
        return digits(f"{value:,}")
    if isinstance(value, Decimal):
        return num(value, 3)
    return str(value)


def pct(value: float | None) -> str:
    """A share as a percentage with one decimal; n/a when absent."""
    return not_available() if value is None else digits(f"{value:.1%}")


def pct0(value: float | None) -> str:
    """A share as a whole percentage ("20%"); n/a when absent."""
    return not_available() if value is None else digits(f"{value:.0%}")


def hours(seconds: float | None) -> str:
    """Seconds as hours with one decimal ("1.5 h"); n/a when absent."""
    if seconds is None:
        return not_available()
    return f"{digits(f'{seconds / 3600:.1f}')} {_('h')}"


def num(value: Decimal | float | int, places: int = 2) -> str:
    """A figure rounded half up to `places`, thousands separated, trailing zeros dropped."""
    q = Decimal(str(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    text = f"{q:,.{places}f}"
    return digits(text.rstrip("0").rstrip(".") if "." in text else text)


def money(value: str | Decimal | None, places: int = 0) -> str:
    """A decimal amount (the evidence keeps money as decimal strings), all `places` kept;
    n/a when absent."""
    if value is None:
        return not_available()
    q = Decimal(str(value)).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
    return digits(f"{q:,.{places}f}")


def decimal_text(value: float | int | Decimal | None, places: int = 2) -> str:
    """A number with Babel's pattern for the reader's locale, up to `places` decimals; ''
    when absent."""
    if value is None:
        return ""
    from babel.numbers import format_decimal

    pattern = "#,##0" + ("." + "#" * places if places > 0 else "")
    return str(format_decimal(value, format=pattern, locale=babel_locale(current_language())))


def when(value: datetime | date) -> str:
    """A date or a time in the reader's locale."""
    from babel.dates import format_date, format_datetime

    loc = babel_locale(current_language())
    if isinstance(value, datetime):
        return str(format_datetime(value, format="medium", locale=loc))
    return str(format_date(value, format="medium", locale=loc))


def moment(iso: str) -> str:
    """A UTC time of a record ("2026-06-04T08:12:00Z") in the reader's locale, UTC kept;
    English keeps the ISO form, and an unreadable value is shown as it is."""
    if current_language() == "en" or not iso:
        return iso
    try:
        parsed = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    except ValueError:
        return iso
    return f"{when(parsed)} UTC"
