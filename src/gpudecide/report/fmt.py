"""Transitional: the number formats with a `lang` argument, for section builders not yet
reading the run's language. `gpudecide.fmt` is the one format; this module goes once no
caller passes a language."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from gpudecide import fmt as _fmt
from gpudecide.i18n import speaking


def _in(lang: str) -> Any:
    return speaking(lang if lang in ("en", "ru", "kk") else "en")  # type: ignore[arg-type]


def localize_digits(text: str, lang: str) -> str:
    """See `gpudecide.fmt.digits`."""
    with _in(lang):
        return _fmt.digits(text)


def not_available(lang: str = "en") -> str:
    """See `gpudecide.fmt.not_available`."""
    with _in(lang):
        return _fmt.not_available()


def fmt(value: Any, lang: str = "en") -> str:
    """See `gpudecide.fmt.fmt`."""
    with _in(lang):
        return _fmt.fmt(value)


def pct(value: float | None, lang: str = "en") -> str:
    """See `gpudecide.fmt.pct`."""
    with _in(lang):
        return _fmt.pct(value)


def pct0(value: float | None, lang: str = "en") -> str:
    """See `gpudecide.fmt.pct0`."""
    with _in(lang):
        return _fmt.pct0(value)


def hours(seconds: float | None, lang: str = "en") -> str:
    """See `gpudecide.fmt.hours`."""
    with _in(lang):
        return _fmt.hours(seconds)


def number(value: float | int | Decimal | None, lang: str, digits: int = 2) -> str:
    """See `gpudecide.fmt.decimal_text`."""
    with _in(lang):
        return _fmt.decimal_text(value, digits)


def when(value: datetime | date, lang: str) -> str:
    """See `gpudecide.fmt.when`."""
    with _in(lang):
        return _fmt.when(value)
