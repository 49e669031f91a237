"""The import truth gate: a model's reading of a résumé keeps only what the file says.

"Improve with AI" asks a model to read the résumé's text into a JSON Resume. The model may
misread, tidy up, translate or — told to by a line hidden in the file — invent. So every
string of its answer must occur in the file's own text, or it is dropped and reported:

* **Text** (names, titles, employers, places, bullets, skills…) occurs in the text after
  normalising both sides: Unicode NFKC, soft hyphens and zero-width characters removed,
  typographic dashes and quotes folded, case folded, whitespace collapsed, and a word
  broken by a hyphen at a line end read both joined ("engi-/neering" → "engineering") and
  kept ("state-/of-the-art" → "state-of-the-art"). It must start and end on word
  boundaries ("Go" is not found inside "good"). A long string (16+ letters) is also found
  when the text has the same letters with its spaces lost ("Provisionedaneasily…", how
  some PDFs extract); a spacing accent before its letter ("Universit¨at", from LaTeX PDFs)
  reads as the accented letter; and a line cut in two by a date column ("Irwell Valley
  NHS  March 2021 – Present" / "Foundation Trust") is also read with its dates left out.
* **Dates** written as ISO prefixes (``2021``, ``2021-03``, ``2021-03-15``) are the one
  re-formatting allowed, and only when that very date is written in the text ("Mar.
  2021", "März 2021", "03/2021", "15.03.2021", "marzo de 2021"…). Any other date value
  must occur as text.
* **E-mail, phone and URLs** must occur exactly (case kept, no letter changed; only the
  whitespace is collapsed). A URL may gain the ``https://`` / ``www.`` the text left out.
* **Country codes** occur as written (``DE``) or are the code of a country named in the
  text ("Germany", "Deutschland", "Allemagne", "Alemania", "Canada").

An entry (a job, a school, a skill group…) of which no substantive string survives is
dropped whole, so an invented job cannot survive on a year that happens to occur in the
file. Plain functions over plain values: no I/O, no model, no network.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from backend.domain.resume import JsonResume

# Why a value was dropped (the answer's ``reason``).
NOT_IN_FILE = "not_in_file"
DATE_NOT_IN_FILE = "date_not_in_file"
CONTACT_NOT_EXACT = "contact_not_exact"
COUNTRY_NOT_IN_FILE = "country_not_in_file"
ENTRY_DROPPED = "entry_dropped"  # kept on its own, but its entry had nothing else left

MAX_REPORTED_CHARS = 300
LONG_ENOUGH_TO_UNGLUE = 16  # letters; shorter strings need their word boundaries


@dataclass(frozen=True)
class DroppedValue:
    path: str  # where it was in the model's answer: "work[2].highlights[0]"
    value: str  # what the model said, cut to MAX_REPORTED_CHARS
    reason: str


@dataclass(frozen=True)
class Grounded:
    resume: JsonResume
    dropped: list[DroppedValue]


# --------------------------------------------------------------------------- normalising

_INVISIBLE = dict.fromkeys(map(ord, "\u00ad\u200b\u200c\u200d\u2060\ufeff"), None)
_FOLD = str.maketrans({
    **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
})
_HYPHEN_BREAK = re.compile(r"(?<=[^\W\d_])-[ \t]*\r?\n\s*(?=[^\W\d_])")
_SPACE = re.compile(r"\s+")
_BULLET_LEAD = re.compile(r"^(?:[•·▪►‣◦●■□➢✓*+>-]\s*)+")


# LaTeX-made PDFs often extract "Universit¨at": a spacing accent before its letter.
_SPACING_ACCENT = re.compile("(?<=[^\\W\\d_])([\u00a8\u00b4\u02c6\u02dc\u02c7\u02da])\\s?([^\\W\\d_])")
_COMBINING = {"\u00a8": "\u0308", "\u00b4": "\u0301", "\u02c6": "\u0302", "\u02dc": "\u0303",
              "\u02c7": "\u030c", "\u02da": "\u030a"}


def _unicode(text: str) -> str:
    text = _SPACING_ACCENT.sub(lambda m: unicodedata.normalize(
        "NFC", m.group(2) + _COMBINING[m.group(1)]), text)
    return unicodedata.normalize("NFKC", text).translate(_INVISIBLE).translate(_FOLD)


def normalise(text: str) -> str:
    """One line of text as the gate compares it: NFKC, no soft hyphens, folded dashes,
    quotes and case, single spaces."""
    return _SPACE.sub(" ", _unicode(text).casefold()).strip()


def _exact(text: str) -> str:
    """For contact details: NFKC and single spaces only, case kept."""
    return _SPACE.sub(" ", _unicode(text)).strip()


def _plain_letters(text: str) -> str:
    """Casefolded, without diacritics: how month names are matched ("Août" = "aout")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def _bounded(value: str) -> re.Pattern[str]:
    head = r"(?<!\w)" if value[:1].isalnum() else ""
    tail = r"(?!\w)" if value[-1:].isalnum() else ""
    return re.compile(head + re.escape(value) + tail)


# --------------------------------------------------------------------------- dates in the text

_MONTHS = {
    1: "jan january januar janner jaenner janvier janv enero ene",
    2: "feb february februar fevrier fevr fev febrero",
    3: "mar march marz maerz mrz mars marzo",
    4: "apr april avril avr abril abr",
    5: "may mai mayo",
    6: "jun june juni juin junio",
    7: "jul july juli juillet juil julio",
    8: "aug august aout agosto ago",
    9: "sep sept september septembre septiembre setiembre set",
    10: "oct october okt oktober octobre octubre",
    11: "nov november novembre noviembre",
    12: "dec december dez dezember decembre diciembre dic",
}
_MONTH_NUMBER = {name: number for number, names in _MONTHS.items() for name in names.split()}
_MONTH = "|".join(sorted(_MONTH_NUMBER, key=len, reverse=True))
_ORDINAL = r"(?:\.|st|nd|rd|th|er|º|°)?"
_NAMED_DATE = re.compile(
    rf"(?<![\w])(?:(?P<day>\d{{1,2}}){_ORDINAL}\s*(?:de\s+)?)?(?P<month>{_MONTH})\.?,?\s*"
    rf"(?:de\s+|del\s+)?(?:(?P<day2>\d{{1,2}}){_ORDINAL},?\s+)?(?P<year>(?:19|20)\d\d)(?!\d)")
_YEAR_FIRST = re.compile(r"(?<![\d])(?P<year>(?:19|20)\d\d)[-/.](?P<month>\d{1,2})"
                         r"(?:[-/.](?P<day>\d{1,2}))?(?![\d])")
_DAY_MONTH_YEAR = re.compile(r"(?<![\d])(?P<a>\d{1,2})[-/.](?P<b>\d{1,2})[-/.]"
                             r"(?P<year>(?:19|20)\d\d)(?![\d])")
_MONTH_YEAR = re.compile(r"(?<![\d])(?P<month>\d{1,2})[-/.](?P<year>(?:19|20)\d\d)(?![\d])")
_YEAR = re.compile(r"(?<![\d])((?:19|20)\d\d)(?![\d])")
_ISO = re.compile(r"^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$")
_ACCENTED_MONTHS = "jänner märz févr février fév avr août déc décembre"
_ANY_MONTH = "|".join(sorted({*_MONTH_NUMBER, *_ACCENTED_MONTHS.split()}, key=len, reverse=True))
_ANY_DATE = (rf"(?:(?:\d{{1,2}}\.?\s*)?(?:{_ANY_MONTH})\.?\s*(?:(?:19|20)\d\d|'\d\d)"
             r"|\d{1,2}[-/.]\d{1,2}[-/.](?:19|20)\d\d|(?:19|20)\d\d[-/.]\d{1,2}"
             r"|\d{1,2}[-/.](?:19|20)\d\d|(?:19|20)\d\d)")
_PRESENT = (r"(?:present|current|now|today|heute|aktuell|jetzt|dato|laufend|aujourd'hui|"
            r"en cours|actualidad|presente|actual|hoy|oggi)")
_DATE_SPAN = re.compile(rf"(?<!\w)(?:(?:since|seit|depuis|desde)\s+)?{_ANY_DATE}"
                        rf"(?:\s*(?:-|to|until|bis|à|au|a|hasta)\s*(?:{_ANY_DATE}|{_PRESENT}))?(?!\w)")


@dataclass(frozen=True)
class WrittenDates:
    years: frozenset[int]
    months: frozenset[tuple[int, int]]
    days: frozenset[tuple[int, int, int]]

    def has(self, iso: str) -> bool | None:
        """Whether an ISO prefix names a date written in the text; None: not ISO."""
        match = _ISO.fullmatch(iso.strip())
        if match is None:
            return None
        year, month, day = (int(part) if part else None for part in match.groups())
        if month is None:
            return year in self.years
        if day is None:
            return (year, month) in self.months
        return (year, month, day) in self.days


def written_dates(text: str) -> WrittenDates:
    """Every year, month and day the text writes, in the forms résumés use."""
    plain = _SPACE.sub(" ", _plain_letters(_unicode(text)))
    years = {int(y) for y in _YEAR.findall(plain)}
    months: set[tuple[int, int]] = set()
    days: set[tuple[int, int, int]] = set()

    def add(year: int, month: int, day: int | None = None) -> None:
        if not 1 <= month <= 12:
            return
        months.add((year, month))
        if day is not None and 1 <= day <= 31:
            days.add((year, month, day))

    for m in _NAMED_DATE.finditer(plain):
        day = m.group("day") or m.group("day2")
        add(int(m.group("year")), _MONTH_NUMBER[m.group("month")], int(day) if day else None)
    for m in _YEAR_FIRST.finditer(plain):
        add(int(m.group("year")), int(m.group("month")),
            int(m.group("day")) if m.group("day") else None)
    for m in _DAY_MONTH_YEAR.finditer(plain):  # 15.03.2021 or 03/15/2021: either reading
        a, b, year = int(m.group("a")), int(m.group("b")), int(m.group("year"))
        add(year, b, a)
        add(year, a, b)
    for m in _MONTH_YEAR.finditer(plain):
        add(int(m.group("year")), int(m.group("month")))
    return WrittenDates(frozenset(years), frozenset(months), frozenset(days))


# --------------------------------------------------------------------------- countries

_COUNTRY_ALIASES = {
    "US": ("usa", "u.s.", "u.s.a.", "united states", "america"),
    "GB": ("uk", "u.k.", "united kingdom", "great britain", "england", "scotland", "wales",
           "northern ireland"),
}


@lru_cache(maxsize=256)
def _country_names(code: str) -> tuple[str, ...]:
    """The names of the country with this ISO code, in English, German, French and
    Spanish (pycountry's translations); () for an unknown code."""
    try:
        import gettext

        import pycountry
    except ImportError:  # pragma: no cover - a declared dependency
        return ()
    country = pycountry.countries.get(alpha_2=code.upper()) if len(code) == 2 else (
        pycountry.countries.get(alpha_3=code.upper()) if len(code) == 3 else None)
    if country is None:
        return ()
    english = {getattr(country, key, None) for key in ("name", "official_name", "common_name")}
    names = {n for n in english if n}
    for language in ("de", "fr", "es"):
        try:
            translate = gettext.translation("iso3166-1", pycountry.LOCALES_DIR,
                                            languages=[language]).gettext
        except OSError:
            continue
        names |= {translate(n) for n in english if n}
    names |= set(_COUNTRY_ALIASES.get(country.alpha_2, ()))
    return tuple(sorted(normalise(n) for n in names))


# --------------------------------------------------------------------------- the file's text


_URL_WRAP = re.compile(r"(?<=\w/)[ \t]*\r?\n[ \t]*(?=\w)")


class SourceText:
    """The file's text, prepared once for many look-ups."""

    def __init__(self, text: str):
        joined = _HYPHEN_BREAK.sub("", text)
        kept = _HYPHEN_BREAK.sub("-", text)
        # A date column can cut a wrapped line in two ("Irwell Valley NHS  March 2021 –
        # Present" / "Foundation Trust"): the text read without its dates joins it again.
        undated = _DATE_SPAN.sub(" ", _unicode(text).casefold())
        self._variants = tuple(dict.fromkeys(normalise(variant) for variant in (
            joined, kept, _HYPHEN_BREAK.sub("", undated), _HYPHEN_BREAK.sub("-", undated))))
        self._glued = tuple(v.replace(" ", "") for v in self._variants)
        # A link wrapped at a line end after "/" ("https://www.linkedin.com/in/" / "jane").
        unwrapped = _URL_WRAP.sub("", text)
        self._exact = tuple(dict.fromkeys((_exact(joined), _exact(kept), _exact(unwrapped))))
        self.dates = written_dates(text)

    def has_text(self, value: str) -> bool:
        wanted = normalise(_BULLET_LEAD.sub("", value.strip()) or value)
        if not wanted:
            return True
        pattern = _bounded(wanted)
        if any(pattern.search(variant) for variant in self._variants):
            return True
        glued = wanted.replace(" ", "")
        return (sum(c.isalpha() for c in glued) >= LONG_ENOUGH_TO_UNGLUE
                and any(glued in variant for variant in self._glued))

    def _has_exact(self, value: str, head: str, tail: str) -> bool:
        pattern = re.compile(head + re.escape(value) + tail)
        return any(pattern.search(variant) for variant in self._exact)

    def has_email(self, value: str) -> bool:
        return self._has_exact(_exact(value), r"(?<![\w.+-])", r"(?![\w-]|\.[\w-])")

    def has_phone(self, value: str) -> bool:
        return self._has_exact(_exact(value), r"(?<![\d+])", r"(?!\d)")

    def has_url(self, value: str) -> bool:
        """The address as written, give or take its ``https://`` and ``www.``."""
        bare = re.sub(r"^(?:https?://)?(?:www\.)?", "", _exact(value).rstrip("/"))
        head = r"(?:(?<![\w/.-])|(?<=://)|(?<=www\.))"
        tail = r"/?(?![\w/%#?=&+~-]|\.[\w])"
        return bool(bare) and self._has_exact(bare, head, tail)

    def has_country(self, value: str) -> bool:
        code = _exact(value)
        if self._has_exact(code, r"(?<!\w)", r"(?!\w)") or (len(code) > 3 and self.has_text(value)):
            return True
        return any(_bounded(name).search(variant)
                   for name in _country_names(code) for variant in self._variants)


# --------------------------------------------------------------------------- the gate

_EXACT_KINDS = {"email": "email", "phone": "phone", "url": "url", "image": "url",
                "website": "url"}


def _kind(key: str) -> str:
    if key in _EXACT_KINDS:
        return _EXACT_KINDS[key]
    if key == "date" or key.endswith("Date"):
        return "date"
    if key == "countryCode":
        return "country"
    return "text"


class _Gate:
    def __init__(self, source: SourceText):
        self.source = source
        self.dropped: list[DroppedValue] = []

    def drop(self, path: str, value: Any, reason: str) -> None:
        self.dropped.append(DroppedValue(path=path, value=str(value)[:MAX_REPORTED_CHARS],
                                         reason=reason))

    def verdict(self, kind: str, value: str) -> str | None:
        """None when the value may stay, else why it may not."""
        source = self.source
        if not value.strip():
            return None
        if kind == "email":
            return None if source.has_email(value) else CONTACT_NOT_EXACT
        if kind == "phone":
            return None if source.has_phone(value) else CONTACT_NOT_EXACT
        if kind == "url":
            return None if source.has_url(value) else CONTACT_NOT_EXACT
        if kind == "country":
            return None if source.has_country(value) else COUNTRY_NOT_IN_FILE
        if kind == "date":
            written = source.dates.has(value)
            if written is not None:
                return None if written else DATE_NOT_IN_FILE
            return None if source.has_text(value) else DATE_NOT_IN_FILE
        return None if source.has_text(value) else NOT_IN_FILE

    def scalar(self, path: str, kind: str, value: Any) -> tuple[bool, Any]:
        """(keep, value) for one scalar; numbers are checked as their text."""
        if value is None or isinstance(value, bool):
            return True, value
        reason = self.verdict(kind, value if isinstance(value, str) else str(value))
        if reason is not None:
            self.drop(path, value, reason)
            return False, None
        return True, value

    def mapping(self, path: str, data: dict[str, Any]) -> dict[str, Any]:
        kept: dict[str, Any] = {}
        for key, value in data.items():
            where = f"{path}.{key}" if path else key
            if isinstance(value, dict):
                kept[key] = self.mapping(where, value)
            elif isinstance(value, list):
                kept[key] = self.sequence(where, _kind(key), value)
            else:
                keep, value = self.scalar(where, _kind(key), value)
                if keep:
                    kept[key] = value
        return kept

    def sequence(self, path: str, kind: str, items: list[Any]) -> list[Any]:
        kept: list[Any] = []
        for index, item in enumerate(items):
            where = f"{path}[{index}]"
            if isinstance(item, dict):
                entry = self.mapping(where, item)
                if _substantive(entry):
                    kept.append(entry)
                else:
                    for leaf_path, leaf in _leaves(where, entry):
                        self.drop(leaf_path, leaf, ENTRY_DROPPED)
            elif isinstance(item, list):
                kept.append(self.sequence(where, kind, item))
            else:
                keep, value = self.scalar(where, kind, item)
                if keep:
                    kept.append(value)
        return kept


def _leaves(path: str, value: Any) -> Iterable[tuple[str, Any]]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(f"{path}.{key}", item)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _leaves(f"{path}[{index}]", item)
    elif value not in (None, "") and not isinstance(value, bool):
        yield path, value


def _substantive(entry: dict[str, Any]) -> bool:
    """An entry stands when a string other than a date or a country code survived."""
    return any(_kind(path.rsplit(".", 1)[-1].split("[", 1)[0]) not in ("date", "country")
               for path, _value in _leaves("", entry))


def ground_resume(candidate: JsonResume | dict[str, Any], text: str) -> Grounded:
    """``candidate`` with every string the file's ``text`` does not hold removed, and
    what was removed (path, value, reason), in document order."""
    data = (candidate.model_dump(mode="json", by_alias=True, exclude_none=True)
            if isinstance(candidate, JsonResume) else dict(candidate))
    gate = _Gate(SourceText(text))
    kept = gate.mapping("", data)
    return Grounded(resume=JsonResume.model_validate(kept), dropped=gate.dropped)


def still_unplaced(lines: Iterable[str], resume: JsonResume) -> list[str]:
    """The lines (of the rules' "not placed" list) that the resume still does not hold:
    a line is placed when it occurs in one of the resume's strings, or when the resume's
    strings that occur in it cover most of its letters."""
    values = [normalise(str(v)) for _path, v in _leaves("", resume.export())]
    values = [v for v in values if v]
    left: list[str] = []
    for line in lines:
        wanted = normalise(_BULLET_LEAD.sub("", line.strip()) or line)
        letters = sum(c.isalnum() for c in wanted)
        if not letters or any(wanted in value for value in values):
            continue
        covered = sum(sum(c.isalnum() for c in v) for v in values
                      if len(v) >= 2 and _bounded(v).search(wanted))
        if covered < 0.6 * letters:
            left.append(line)
    return left
