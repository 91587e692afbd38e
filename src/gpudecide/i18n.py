"""The reader's language and the gettext catalogues: the one way a word reaches a person.

English is the source language. A sentence is written in English where its fact is known and
translated in `locale/<lang>/LC_MESSAGES/<domain>.po` (one domain per package, Babel's PO
format with plural forms):

    _ = translator("governance")
    _("Ownership per option (RACI)")                        # a str in the reader's language
    _.n("{n} activity has no owner", "{n} activities have no owner", n).format(n=n)

The reader's language is set once per run (`set_language`: the root `--lang`, the
workspace's `report.language`) and held in a `ContextVar`, so no function passes it on; a
block that speaks another language (a report written in Kazakh by an English command) runs
inside `speaking(lang)`. Sentences that are stored (a record's summary, a finding, a rule's
text) are `gpudecide.message.Message`s, rendered in the reader's language where they are
shown; numbers, money and dates are formatted by `gpudecide.fmt`.
"""

from __future__ import annotations

import gettext
import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources
from typing import Literal, get_args

__all__ = [
    "LANGUAGES",
    "N_",
    "Catalogue",
    "Language",
    "Translator",
    "babel_locale",
    "catalogue",
    "catalogue_of",
    "catalogue_path",
    "current_language",
    "is_language",
    "set_language",
    "speaking",
    "translator",
]

Language = Literal["en", "ru", "kk"]
LANGUAGES: tuple[Language, ...] = get_args(Language)

_LANGUAGE: ContextVar[Language] = ContextVar("gpudecide_language", default="en")


def is_language(value: object) -> bool:
    """Whether `value` is one of the languages gpudecide speaks."""
    return value in LANGUAGES


def current_language() -> Language:
    """The language the reader reads in now (English unless a run or block chose another)."""
    return _LANGUAGE.get()


def set_language(lang: Language) -> None:
    """Speak `lang` from now on in this context (a run's choice: `--lang`, the workspace)."""
    if lang not in LANGUAGES:
        raise LookupError(f"{lang!r} is not one of {', '.join(LANGUAGES)}")
    _LANGUAGE.set(lang)


@contextmanager
def speaking(lang: Language) -> Iterator[None]:
    """Speak `lang` inside the block, then the language before it again."""
    if lang not in LANGUAGES:
        raise LookupError(f"{lang!r} is not one of {', '.join(LANGUAGES)}")
    token = _LANGUAGE.set(lang)
    try:
        yield
    finally:
        _LANGUAGE.reset(token)


def N_(msgid: str) -> str:
    """Mark an English msgid for extraction; it is translated where it is shown."""
    return msgid


def babel_locale(lang: str) -> str:
    """The Babel locale whose number and date formats a language uses."""
    return {"en": "en_GB", "ru": "ru_RU", "kk": "kk_KZ"}.get(lang, "en_GB")


# --- catalogues ---


def _english_plural(n: int) -> int:
    return 0 if n == 1 else 1


@dataclass(frozen=True)
class Catalogue:
    """One domain's translations in one language: single msgids, plural entries (keyed by
    the singular msgid, every form in the order of the catalogue's Plural-Forms) and the
    formula that picks a form for a count."""

    singular: dict[str, str] = field(default_factory=dict)
    plurals: dict[str, tuple[str, ...]] = field(default_factory=dict)
    plural_index: Callable[[int], int] = _english_plural

    def form(self, n: float) -> int:
        """The plural form for `n`. A fraction takes the form of 2: CLDR's rule for
        Russian decimals ("2,5 часа", "0,45 GPU-часа") is the word the formula gives 2, and
        English and Kazakh use their plural there too; gettext's formula knows integers only."""
        if isinstance(n, bool) or n != int(n):
            return self.plural_index(2)
        return self.plural_index(abs(int(n)))


_ENGLISH = Catalogue()


def catalogue_path(domain: str, lang: str) -> resources.abc.Traversable:
    """Where the catalogue of `domain` in `lang` lives in the package."""
    return resources.files("gpudecide") / "locale" / lang / "LC_MESSAGES" / f"{domain}.po"


@lru_cache(maxsize=64)
def catalogue_of(domain: str, lang: str) -> Catalogue:
    """The catalogue of `domain` in `lang` (empty when there is none); fuzzy and empty
    entries are left out, so their English shows instead of a wrong word."""
    path = catalogue_path(domain, lang)
    if lang == "en" or not path.is_file():
        return Catalogue()
    # Babel is imported here: an English run never reads a catalogue.
    from babel.messages.pofile import read_po

    parsed = read_po(io.BytesIO(path.read_bytes()), locale=lang, domain=domain)
    singular: dict[str, str] = {}
    plurals: dict[str, tuple[str, ...]] = {}
    for m in parsed:
        if not m.id or m.fuzzy:
            continue
        if isinstance(m.id, tuple | list):
            forms = tuple(str(s) for s in m.string or ())
            if forms and all(forms):
                plurals[str(m.id[0])] = forms
        elif isinstance(m.id, str) and m.string:
            singular[m.id] = str(m.string)
    return Catalogue(
        singular=singular, plurals=plurals, plural_index=gettext.c2py(parsed.plural_expr)
    )


def catalogue(domain: str, lang: str) -> dict[str, str]:
    """msgid -> translation of one catalogue's single entries."""
    return catalogue_of(domain, lang).singular


class Translator:
    """The `_` of one domain: `_(msgid)` and `_.n(singular, plural, n)` in the reader's
    language (the English when the catalogue lacks it)."""

    def __init__(self, domain: str) -> None:
        self.domain = domain

    def __call__(self, msgid: str) -> str:
        lang = _LANGUAGE.get()
        if lang == "en":
            return msgid
        return catalogue_of(self.domain, lang).singular.get(msgid, msgid)

    def n(self, singular: str, plural: str, n: float) -> str:
        """The form of `singular`/`plural` that fits the count `n` (not yet formatted)."""
        cat = catalogue_of(self.domain, _LANGUAGE.get())
        forms = cat.plurals.get(singular)
        if forms is None:
            return singular if _ENGLISH.form(n) == 0 else plural
        return forms[min(cat.form(n), len(forms) - 1)]


def translator(domain: str) -> Translator:
    """The translator of one catalogue domain."""
    return Translator(domain)
