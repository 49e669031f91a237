"""Names of spoken languages as a résumé writes them ("English", "Deutsch", "Español",
"anglais"): the ISO 639 languages that have a two-letter code, in English and in the
languages pycountry ships translations for, plus the few forms no standard lists."""

from __future__ import annotations

import gettext
from functools import cache

# The languages whose names for other languages a résumé is likely to use.
_NAME_LANGUAGES = ("de", "fr", "es", "it", "nl", "pt", "pl", "sv", "da", "nb", "fi", "cs", "tr")
_EXTRA_NAMES = (
    "mandarin", "cantonese", "farsi", "sign language", "german sign language",
    "british sign language", "american sign language", "asl", "bsl", "flemish", "castilian",
    "swiss german", "schweizerdeutsch", "brazilian portuguese", "filipino", "tagalog",
)


def _spellings():
    """(English name, ISO 639-1 code of the language it is written in, spelling as written)
    for every language with a two-letter code — the ~180 languages people list — in
    English and in the languages of ``_NAME_LANGUAGES``."""
    import pycountry

    translations = [(lang, gettext.translation("iso639-3", pycountry.LOCALES_DIR, languages=[lang],
                                               fallback=True)) for lang in _NAME_LANGUAGES]
    for language in pycountry.languages:
        if not hasattr(language, "alpha_2"):
            continue
        english = _first_name(language.name)
        for spelling in language.name.split(";"):
            spelling = spelling.strip()
            yield english, "en", spelling
            for code, translation in translations:
                yield english, code, translation.gettext(spelling)


def _first_name(spelling: str) -> str:
    """"Spanish; Castilian" / "Greek, Modern (1453-)": the first word is the name."""
    return spelling.split(";")[0].split(",")[0].split(" (")[0].strip()


@cache
def _names() -> frozenset[str]:
    names = set(_EXTRA_NAMES)
    for _, lang, spelling in _spellings():
        names.add(spelling.casefold())
        if lang == "en":
            names.add(_first_name(spelling).casefold())
    return frozenset(name for name in names if name)


def is_language_name(text: str) -> bool:
    return " ".join(text.split()).casefold() in _names()


@cache
def _english_names() -> dict[str, tuple[str, str]]:
    """Every spelling → (the language's English name, the language the spelling is in):
    "Deutsch" → ("German", "de")."""
    out: dict[str, tuple[str, str]] = {}
    for english, lang, spelling in _spellings():
        out.setdefault(_first_name(spelling).casefold(), (english, lang))
    return out


def english_name(text: str) -> str | None:
    """The English name of a language written in any of the known languages
    ("Deutsch", "anglais", "Inglés" → "German", "English", "English")."""
    found = _english_names().get(" ".join(text.split()).casefold())
    return found[0] if found else None


def names_of(english: str, languages: frozenset[str] | None = None) -> list[str]:
    """Every known spelling of a language given its English name, lower-case; only its
    English name and its names in ``languages`` (ISO 639-1 codes) when given."""
    return sorted(name for name, (value, lang) in _english_names().items()
                  if value == english and (languages is None or lang == "en" or lang in languages))
