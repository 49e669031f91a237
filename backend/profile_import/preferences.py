"""What a résumé says its owner is looking for: an "Objective / Looking for / Preferences"
part read into preference *suggestions* (target titles, places, remote, salary floor and
currency) for the draft.

Plain functions over the extracted text lines; no I/O. The parser will soon mark such a
part as its own section kind; until then :func:`preference_lines` finds it here. Only what
the part states in so many words is suggested (a labelled line "Roles: …", "as a …",
"… roles", "in Toronto or Montréal", "remote or hybrid", an amount with its currency):
nothing is inferred from the rest of the résumé, and what is not stated stays empty.
Currencies are ISO 4217 codes checked with ``pycountry``; a symbol several currencies share
("$", "kr", "¥") is read as the résumé's own country's currency when that is one of them,
else left empty.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import pycountry
from pydantic import Field

from backend.domain.model import CamelModel
from backend.domain.profile import RemotePreference
from backend.domain.resume import Term
from backend.domain.resume_structure import heading_kind, read_lines

# The headings of the part (lower case, without a trailing colon), EN / DE / FR / ES.
PREFERENCE_HEADINGS = frozenset((
    "objective", "career objective", "job objective", "professional objective",
    "looking for", "what i'm looking for", "what i am looking for", "i'm looking for",
    "preferences", "job preferences", "work preferences", "career preferences",
    "desired position", "desired role", "target role", "target roles", "job search",
    "suchprofil", "wunschposition", "gesucht", "was ich suche", "berufliches ziel",
    "karriereziel", "wunschstelle",
    "objectif", "objectif professionnel", "recherche", "poste recherché", "ce que je recherche",
    "objetivo", "objetivo profesional", "lo que busco", "puesto deseado", "busco",
))
MAX_SECTION_LINES = 15  # an objective is a paragraph or a few labelled lines, not a page

# Labelled lines inside the part: "Roles: A, B", "Standort: Berlin", "Salaire : 60 k€".
_LABELS = {
    "titles": ("role", "roles", "target role", "target roles", "position", "positions",
               "title", "titles", "target title", "target titles", "job title", "job titles",
               "wunschposition", "stelle", "rolle", "poste", "postes", "poste recherché",
               "intitulé", "puesto", "puestos", "cargo", "rol"),
    "places": ("location", "locations", "place", "places", "where", "city", "cities",
               "region", "ort", "orte", "standort", "standorte", "arbeitsort", "region",
               "lieu", "lieux", "localisation", "ville", "villes", "ubicación", "ubicacion",
               "ciudad", "ciudades", "lugar"),
    "remote": ("remote", "work mode", "work model", "arrangement", "working model",
               "arbeitsmodell", "arbeitsort", "télétravail", "mode de travail", "modalidad",
               "remoto"),
    "salary": ("salary", "compensation", "pay", "salary floor", "minimum salary",
               "gehalt", "gehaltsvorstellung", "gehaltswunsch", "salaire", "rémunération",
               "prétentions salariales", "salario", "sueldo", "retribución", "pretensiones"),
}
_LABEL_OF = {label: kind for kind, labels in _LABELS.items() for label in labels}

# Words of the three arrangements (matched on the lower-cased text, at word edges).
_REMOTE = ("remote", "fully remote", "home office", "homeoffice", "work from home",
           "télétravail", "teletravail", "à distance", "remoto", "en remoto", "teletrabajo")
_HYBRID = ("hybrid", "hybride", "híbrido", "hibrido")
_ONSITE = ("on-site", "onsite", "on site", "in office", "in-office", "office-based",
           "vor ort", "präsenz", "sur site", "présentiel", "presentiel", "presencial",
           "en oficina")

# Amounts per month or hour are not a yearly floor: they are left out, not converted.
_NOT_YEARLY = re.compile(
    r"per month|/\s?month|a month|monthly|p\.\s?m\.|/\s?mo\b|per hour|/\s?h(?:ou)?r?\b|hourly"
    r"|pro monat|monatlich|/\s?monat|im monat|pro stunde|stundensatz|par mois|/\s?mois"
    r"|mensuel|de l'heure|/\s?heure|al mes|mensual|/\s?mes\b|por hora", re.IGNORECASE)
MIN_YEARLY_SALARY = 1_000  # below this an amount is no yearly salary (a bonus, a count)
MAX_YEARLY_SALARY = 10_000_000  # the profile's own bound on salaryFloor

# Symbols and words that name one currency.
_CURRENCY_SIGNS = {
    "€": "EUR", "£": "GBP", "₹": "INR", "₩": "KRW", "₽": "RUB", "₺": "TRY", "₪": "ILS",
    "zł": "PLN", "kč": "CZK", "us$": "USD", "ca$": "CAD", "c$": "CAD", "a$": "AUD",
    "au$": "AUD", "nz$": "NZD", "hk$": "HKD", "s$": "SGD", "r$": "BRL", "mx$": "MXN",
    "fr.": "CHF", "euro": "EUR", "euros": "EUR", "pound": "GBP", "pounds": "GBP",
    "franken": "CHF",
}
# Signs several currencies share: the national currency of the résumé's country, when its
# ISO 4217 name has one of these words; otherwise unknown.
_SHARED_SIGNS = {"$": ("dollar", "peso"), "dollar": ("dollar",), "dollars": ("dollar",),
                 "¥": ("yen", "yuan"), "kr": ("krona", "krone"), "kr.": ("krona", "krone")}
_SIGN = (r"US\$|CA\$|C\$|AU\$|A\$|NZ\$|HK\$|S\$|R\$|MX\$|\$|€|£|¥|₹|₩|₽|₺|₪|zł|Kč|Fr\."
         r"|(?<![A-Za-z])[A-Z]{3}(?![A-Za-z])")
_WORD_SIGN = r"euros?|dollars?|pounds?|franken|kr\.?"
_AMOUNT = re.compile(
    rf"(?:(?P<pre>{_SIGN})\s?)?"
    r"(?P<num>(?<![\d.,])\d{1,3}(?:[,.'\u00a0\u202f ]\d{3})+(?![\d])|(?<![\d.,])\d+(?:[.,]\d{1,2})?)"
    r"(?:\s?(?P<mult>[kK](?![a-zA-Z])|k(?=EUR)|T(?=\s?(?:€|EUR))|Tsd\.?))?"
    rf"(?:\s?(?P<post>{_SIGN}|(?<=k)EUR|(?i:{_WORD_SIGN})(?![A-Za-z])))?")

_SPLIT = re.compile(r"\s*(?:,|;|/|\||\bor\b|\band\b|\boder\b|\bund\b|\bou\b|\bet\b|\bo\b|\by\b)\s*",
                    re.IGNORECASE)
_TITLE_SPLIT = re.compile(r"\s*(?:,|;|/|\||\bor\b|\boder\b|\bou\b|\bo\b)\s*", re.IGNORECASE)
# Where a title or place phrase stops.
_STOP = (r"(?=\s+(?:in|at|with|near|around|from|for|on|within|à|dans|sur|avec|pour|chez|"
         r"para|con|cerca|bei|im|mit|für|ab|en|remote|hybrid|roles?|positions?|jobs?)\b"
         r"|\s*[,;.()!–—]|\s*$)")
_CAP = r"[A-ZÀ-Ý][\w+#&.'’-]*"
_TITLE_CUES = (
    # "as a Data Engineer", "als Data Engineer", "en tant que …", "como …", "poste de …"
    re.compile(rf"\b(?:as an?|als|en tant que|comme|como|poste d[e']|puesto de|posición de"
               rf"|position als|stelle als)\s*(?P<title>\S.*?){_STOP}", re.IGNORECASE),
    # "Senior Data Engineer or Analytics Engineer roles"
    re.compile(rf"(?P<title>{_CAP}(?:\s+(?:{_CAP}|of|and|&|or|/))*)\s+(?:roles?|positions?"
               r"|jobs?|openings?)\b"),
)
_PLACE_CUE = re.compile(
    rf"\b(?:in|near|around|based in|im raum|raum|in der region|à|en|région|region)\s+"
    rf"(?P<places>{_CAP}(?:\s+{_CAP}){{0,2}}(?:\s*(?:,|/|\bor\b|\band\b|\boder\b|\bund\b|\bou\b"
    rf"|\bet\b|\bo\b|\by\b)\s*{_CAP}(?:\s+{_CAP}){{0,2}})*)")
# An unlabelled line counts only with a cue that it is about the wanted job at all.
_JOB_CUE = re.compile(r"\b(?:roles?|positions?|jobs?|openings?|opportunit\w*|stellen?|"
                      r"position|poste|postes|emploi|puestos?|empleo|trabajo|looking|seeking|"
                      r"suche|recherche|busco)\b", re.IGNORECASE)
_NOT_A_PLACE = {"remote", "hybrid", "on-site", "onsite", "home office", "homeoffice",
                "télétravail", "remoto", "híbrido", "hybride", "anywhere", "europe-wide"}
MAX_TITLE_WORDS = 7


class PreferenceSuggestions(CamelModel):
    """Preference values a résumé states; empty where it says nothing."""

    target_titles: list[Term] = Field(default_factory=list, max_length=50)
    locations: list[Term] = Field(default_factory=list, max_length=50)
    remote_preference: RemotePreference | None = None
    salary_floor: int | None = Field(default=None, ge=0, le=MAX_YEARLY_SALARY)
    salary_currency: str | None = Field(default=None, pattern=r"^[A-Z]{3}$")

    def is_empty(self) -> bool:
        return not (self.target_titles or self.locations or self.remote_preference
                    or self.salary_floor is not None or self.salary_currency)


# --------------------------------------------------------------------------- the part


def _key(text: str) -> str:
    text = text.replace("’", "'").replace("**", "").replace("__", "").strip().strip("#* ")
    return " ".join(text.rstrip(":").strip().lower().split())


def preference_lines(lines: Iterable[str]) -> list[str]:
    """The lines of the résumé's preferences part (without its heading); a heading with
    its text on the same line ("Looking for: remote roles…") gives that text."""
    found: list[str] = []
    inside = False
    for line in read_lines(list(lines)):
        if line is None:
            continue
        head, _colon, rest = line.text.partition(":")
        kind = None if line.bullet else heading_kind(line)
        if not line.bullet and (_key(line.text) in PREFERENCE_HEADINGS or kind == "preferences"):
            inside = True
            continue
        if not line.bullet and _colon and _key(head) in PREFERENCE_HEADINGS and rest.strip():
            inside = True  # "Looking for: …" (kept whole: "Wunschposition: …" is a label too)
            found.append(line.text)
            continue
        if inside and not line.bullet and (line.level or kind is not None):
            inside = False  # the next section
        if inside and len(found) < MAX_SECTION_LINES:
            found.append(line.text)
    return found


def suggest_preferences(lines: Iterable[str], *, country: str | None = None,
                        skills: Iterable[str] = ()) -> PreferenceSuggestions:
    """The suggestions of the résumé's preferences part (``lines``: the extracted text);
    ``country`` (a code or name from the résumé) resolves a shared sign such as "$";
    ``skills`` are the résumé's own skills, never taken for a place ("roles in Python")."""
    part = preference_lines(lines)
    titles: list[str] = []
    places: list[str] = []
    remote_text: list[str] = []
    salary: tuple[int, str | None] | None = None
    for text in part:
        label, value = _labelled(text)
        if label == "titles":
            titles += _items(value, _TITLE_SPLIT)
        elif label == "places":
            places += _items(value, _SPLIT)
        elif label in ("remote", "salary"):
            pass  # read below, like any other line
        elif _JOB_CUE.search(text) or _arrangements(text):
            titles += _cued_titles(text)
            places += _cued_places(text)
        remote_text.append(text)
        if salary is None:
            salary = _salary(text, labelled=label == "salary", country=country)
    titles = _unique(t for t in (_clean_title(t) for t in titles) if t)
    not_places = {skill.lower() for skill in skills}
    places = _unique(p for p in places if _is_place(p, titles) and p.lower() not in not_places)
    floor, currency = salary if salary else (None, None)
    return PreferenceSuggestions(target_titles=titles[:50], locations=places[:50],
                                 remote_preference=_remote(" ".join(remote_text)),
                                 salary_floor=floor, salary_currency=currency)


def _labelled(text: str) -> tuple[str | None, str]:
    head, colon, rest = text.partition(":")
    if colon and rest.strip():
        kind = _LABEL_OF.get(_key(head))
        if kind:
            return kind, rest.strip()
    return None, text


def _items(text: str, splitter: re.Pattern[str]) -> list[str]:
    return [item.strip(" .") for item in splitter.split(text) if item and item.strip(" .")]


def _cued_titles(text: str) -> list[str]:
    for cue in _TITLE_CUES:
        match = cue.search(text)
        if match:
            return _items(match.group("title"), _TITLE_SPLIT)
    return []


def _cued_places(text: str) -> list[str]:
    return [place for match in _PLACE_CUE.finditer(text)
            for place in _items(match.group("places"), _SPLIT)]


def _clean_title(title: str) -> str | None:
    words = title.strip(" .,;:").split()
    while words and words[0].lower() in ("remote", "hybrid", "fully", "a", "an", "un", "une"):
        words = words[1:]
    if not words or len(words) > MAX_TITLE_WORDS:
        return None
    return " ".join(words)


def _is_place(place: str, titles: list[str]) -> bool:
    lowered = place.lower()
    if not place or lowered in _NOT_A_PLACE or len(place.split()) > 3 or _arrangements(place):
        return False  # "remote", "sur site": an arrangement, not a place
    return not any(lowered in title.lower() for title in titles)


def _unique(values: Iterable[str]) -> list[str]:
    seen: dict[str, str] = {}
    for value in values:
        seen.setdefault(value.lower(), value)
    return list(seen.values())


# --------------------------------------------------------------------------- remote


def _has(text: str, words: tuple[str, ...]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(word)}(?![\w-])", text) for word in words)


def _arrangements(text: str) -> set[str]:
    lowered = text.lower()
    return {mode for mode, words in (("remote", _REMOTE), ("hybrid", _HYBRID),
                                     ("onsite", _ONSITE)) if _has(lowered, words)}


def _remote(text: str) -> RemotePreference | None:
    """remote only, remote or hybrid (hybrid alone too), on-site, or any (on-site and
    another arrangement); None when the part names none."""
    modes = _arrangements(text)
    if not modes:
        return None
    if "onsite" in modes:
        return "onsite" if modes == {"onsite"} else "any"
    return "remote_only" if modes == {"remote"} else "remote_or_hybrid"


# --------------------------------------------------------------------------- salary


def _salary(text: str, *, labelled: bool, country: str | None) -> tuple[int, str | None] | None:
    """(yearly floor, currency) of the first amount in ``text`` that is a salary: one with
    a currency, a "k", or on a salary line. The floor of a range is its first amount; the
    currency may stand at either end ("60.000–70.000 €")."""
    if _NOT_YEARLY.search(text):
        return None
    amounts = []
    for match in _AMOUNT.finditer(text):
        value = _value(match.group("num"), match.group("mult"))
        currency, signed = _currency_of(match, country)
        if value is None or not (signed or match.group("mult") or labelled):
            continue
        if not MIN_YEARLY_SALARY <= value <= MAX_YEARLY_SALARY:
            continue
        amounts.append((value, currency))
    if not amounts:
        return None
    currency = next((c for _value_, c in amounts if c), None)
    return amounts[0][0], currency


def _value(number: str, multiplier: str | None) -> int | None:
    digits = re.sub(r"[,.'\u00a0\u202f ](?=\d{3}(?!\d))", "", number)
    try:
        value = float(digits.replace(",", "."))
    except ValueError:
        return None
    if multiplier:
        value *= 1000
    return round(value)


def _currency_of(match: re.Match[str], country: str | None) -> tuple[str | None, bool]:
    """(ISO code or None, whether the amount carries any currency sign at all)."""
    signs = [s for s in (match.group("pre"), match.group("post")) if s]
    signs.sort(key=lambda sign: sign.lower() in _SHARED_SIGNS)  # "$95,000 CAD" is CAD
    signed = False
    for sign in signs:
        code = currency_code(sign, country)
        if code or sign.lower() in _SHARED_SIGNS:
            signed = True
        if code:
            return code, True
    return None, signed


def currency_code(sign: str, country: str | None = None) -> str | None:
    """"EUR", "€", "euros", "CA$" → the ISO 4217 code; a shared sign ("$", "kr") by the
    country's own currency; None when unknown."""
    lowered = sign.lower()
    if lowered in _CURRENCY_SIGNS:
        return _CURRENCY_SIGNS[lowered]
    if lowered in _SHARED_SIGNS:
        national = national_currency(country)
        if national and any(word in national.name.lower() for word in _SHARED_SIGNS[lowered]):
            return national.alpha_3
        return None
    if len(sign) == 3 and sign.isupper() and pycountry.currencies.get(alpha_3=sign):
        return sign
    return None


def national_currency(country: str | None):
    """The ISO 4217 currency whose number is the country's ISO 3166 number (the national
    currency: Canada 124 → CAD), or None (the euro area, or no country)."""
    found = find_country(country)
    return pycountry.currencies.get(numeric=found.numeric) if found else None


def find_country(country: str | None):
    if not country or not country.strip():
        return None
    value = country.strip()
    try:
        if len(value) == 2:
            return pycountry.countries.get(alpha_2=value.upper())
        if len(value) == 3 and value.isalpha():
            return pycountry.countries.get(alpha_3=value.upper())
        return pycountry.countries.lookup(value)
    except LookupError:
        return None
