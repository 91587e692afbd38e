"""Translations of everything a person reads: gettext catalogues (Babel), one domain a package.

English is the source language: a string is written in English in the code, wrapped in the
domain's translator, and translated in `locale/<lang>/LC_MESSAGES/<domain>.po`:

    _ = translator("governance")
    line = _("{n} activities have no Accountable", lang).format(n=3)

One domain per package keeps catalogues beside the code that owns them; `tests/test_i18n.py`
extracts every `_()` string with Babel and fails when a catalogue lacks one. Numbers, money
and dates are formatted per locale with Babel too (`number`, `decimal`, `date`).
"""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import date, datetime
from decimal import Decimal
from functools import lru_cache
from importlib import resources
from typing import Literal, get_args

from babel.dates import format_date, format_datetime
from babel.messages.pofile import read_po
from babel.numbers import format_decimal

Language = Literal["en", "ru", "kk"]
LANGUAGES: tuple[Language, ...] = get_args(Language)
Translator = Callable[[str, str], str]


def catalogue_path(domain: str, lang: str) -> resources.abc.Traversable:
    """Where the catalogue of `domain` in `lang` lives in the package."""
    return resources.files("gpudecide") / "locale" / lang / "LC_MESSAGES" / f"{domain}.po"


@lru_cache(maxsize=64)
def catalogue(domain: str, lang: str) -> dict[str, str]:
    """msgid -> translation of one catalogue (fuzzy and empty entries left out)."""
    path = catalogue_path(domain, lang)
    if not path.is_file():
        return {}
    parsed = read_po(io.BytesIO(path.read_bytes()), locale=lang, domain=domain)
    return {
        str(m.id): str(m.string)
        for m in parsed
        if m.id and isinstance(m.id, str) and m.string and not m.fuzzy
    }


def translator(domain: str) -> Translator:
    """The `_` of one domain: `_(english, lang)` is the text in `lang` (English when missing)."""

    def _(msgid: str, lang: str = "en") -> str:
        if lang == "en":
            return msgid
        return catalogue(domain, lang).get(msgid, msgid)

    return _


def number(value: float | int | Decimal | None, lang: str, digits: int = 2) -> str:
    """A number in the reader's locale (grouping and decimal sign); '' for None."""
    if value is None:
        return ""
    pattern = "#,##0" + ("." + "#" * digits if digits > 0 else "")
    return str(format_decimal(value, format=pattern, locale=_babel_locale(lang)))


def when(value: datetime | date, lang: str) -> str:
    """A date or time in the reader's locale."""
    if isinstance(value, datetime):
        return str(format_datetime(value, format="medium", locale=_babel_locale(lang)))
    return str(format_date(value, format="medium", locale=_babel_locale(lang)))


def _babel_locale(lang: str) -> str:
    return {"en": "en_GB", "ru": "ru_RU", "kk": "kk_KZ"}.get(lang, "en_GB")
