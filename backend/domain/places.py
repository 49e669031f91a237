"""Places as people write them on a résumé: "Toronto, ON, Canada", "München, Deutschland",
"Austin, TX", "Lyon, France" → a JSON Resume location (city, region, countryCode).

Country names come from ISO 3166-1 in English and the languages of their translations
shipped with ``pycountry``; regions from ISO 3166-2 (codes and names). Only the informal
English names that no standard lists ("UK", "Holland", "S. Korea") are written here.
Nothing here guesses a city: a text is a place when its last part is a country, or a
region code or name of the few countries whose people write "City, Region" without the
country (the United States, Canada, Australia).
"""

from __future__ import annotations

import gettext
import gzip
import json
import math
import re
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

# Informal names no ISO list carries.
_COUNTRY_ALIASES = {
    "uk": "GB", "u.k.": "GB", "england": "GB", "scotland": "GB", "wales": "GB",
    "northern ireland": "GB", "great britain": "GB", "britain": "GB",
    "us": "US", "u.s.": "US", "u.s.a.": "US", "america": "US",
    "holland": "NL", "the netherlands": "NL", "russia": "RU", "turkey": "TR",
    "south korea": "KR", "s. korea": "KR", "s.korea": "KR", "korea": "KR",
    "czech republic": "CZ", "uae": "AE", "u.a.e.": "AE", "ivory coast": "CI", "vietnam": "VN",
    "iran": "IR", "syria": "SY", "bolivia": "BO", "venezuela": "VE", "tanzania": "TZ",
    "moldova": "MD", "laos": "LA", "taiwan": "TW", "macedonia": "MK", "the philippines": "PH",
}  # fmt: skip
# Languages whose country names a résumé is likely to use (pycountry ships these).
_NAME_LANGUAGES = ("de", "fr", "es", "it", "nl", "pt", "pl", "sv", "da", "nb", "fi", "cs")
# Where "City, ST" without a country is usual; the first listed wins an ambiguous code
# ("CA" is California before it is Canada's code: "Toronto, CA" is rare, "San Jose, CA" is not).
_REGION_COUNTRIES = ("US", "CA", "AU")
# "DE" and "IN" after a city mean Germany and India far more often than Delaware and Indiana.
_COUNTRY_BEFORE_REGION = frozenset(("DE", "IN"))

_CITY = re.compile(r"^(?:\d{4,6}\s+)?(?P<city>[^\W\d_][^\d|@:/()]{0,60}?)(?:\s+\d{4,6})?$")


@dataclass(frozen=True)
class City:
    name: str
    country: str  # ISO 3166-1 alpha-2
    admin1: str  # GeoNames first-level region code
    lat: float
    lon: float
    population: int


@cache
def _city_data() -> dict:
    raw = (resources.files("resources") / "places" / "cities.json.gz").read_bytes()
    return json.loads(gzip.decompress(raw))


@cache
def _city_rows() -> tuple[list[list], dict[str, list[int]]]:
    """The rows of resources/places/cities.json.gz (GeoNames cities of 15,000 people or
    more, most populous first) and folded name or alias → row numbers."""
    rows = _city_data()["rows"]
    index: dict[str, list[int]] = {}
    for number, row in enumerate(rows):
        index.setdefault(row[0].casefold(), []).append(number)
        for alias in row[6]:
            index.setdefault(alias.casefold(), []).append(number)
    return rows, index


def city_named(text: str, country: str | None = None, region: str | None = None) -> City | None:
    """The most populous city called ``text`` ("München" and "Munich" are one city),
    in ``country`` when given, and in ``region`` (a GeoNames first-level code such as
    "TX") when one of that name is there."""
    rows, index = _city_rows()
    found = None
    for number in index.get(_fold(text), ()):
        name, code, admin1, lat, lon, population, _aliases = rows[number]
        if country is None or code == country:
            city = City(name, code, admin1, lat, lon, population)
            if region is None or admin1 == region:
                return city
            found = found or city
    return found


def _fold(text: str) -> str:
    return " ".join(text.replace("’", "'").split()).casefold()


@cache
def _countries() -> dict[str, str]:
    """Every spelling → alpha-2: codes, English and translated names."""
    import pycountry

    names: dict[str, str] = {}
    translations = [gettext.translation("iso3166-1", pycountry.LOCALES_DIR, languages=[lang],
                                        fallback=True) for lang in _NAME_LANGUAGES]
    for country in pycountry.countries:
        spellings = {country.name, getattr(country, "common_name", country.name),
                     getattr(country, "official_name", country.name)}
        for spelling in list(spellings):
            spellings.update(t.gettext(spelling) for t in translations)
        for spelling in spellings:
            names.setdefault(_fold(spelling), country.alpha_2)
            # "Korea, Republic of" is also written "Republic of Korea".
            if ", " in spelling:
                head, _, tail = spelling.partition(", ")
                names.setdefault(_fold(f"{tail} {head}"), country.alpha_2)
    names.update(_COUNTRY_ALIASES)
    return names


@cache
def _codes() -> frozenset[str]:
    import pycountry

    return frozenset(c.alpha_2 for c in pycountry.countries) | frozenset(
        c.alpha_3 for c in pycountry.countries)


@cache
def _regions() -> dict[str, list[tuple[str, str]]]:
    """Region code or name (folded) → [(country, region as the code)] for the countries
    of ``_REGION_COUNTRIES``, in that order."""
    import pycountry

    found: dict[str, list[tuple[str, str]]] = {}
    for country in _REGION_COUNTRIES:
        for region in pycountry.subdivisions.get(country_code=country):
            code = region.code.split("-", 1)[1]
            for spelling in (code, region.name):
                found.setdefault(_fold(spelling), []).append((country, code))
    return found


def country_code(text: str) -> str | None:
    """ISO 3166-1 alpha-2 of a country name or code in any of the known languages."""
    text = text.strip().strip(".")
    if not text:
        return None
    if text.isupper() and 2 <= len(text) <= 3 and text in _codes():
        import pycountry

        return pycountry.countries.lookup(text).alpha_2
    return _countries().get(_fold(text)) or _countries().get(_fold(text) + ".")


def region_of(text: str, country: str | None = None) -> tuple[str, str] | None:
    """(country, region code) when ``text`` names a region of the US, Canada or Australia."""
    options = _regions().get(_fold(text), [])
    if country is not None:
        options = [option for option in options if option[0] == country]
    return options[0] if options else None


def _city(text: str) -> str | None:
    match = _CITY.match(text.strip())
    if not match or len(match.group("city").split()) > 4:
        return None
    return match.group("city").strip()


def location_of(text: str) -> dict[str, str] | None:
    """A JSON Resume location when ``text`` reads as a place, else None."""
    parts = [part.strip() for part in text.strip().strip(".").split(",")]
    if len(parts) < 2 or len(parts) > 4 or not all(parts):
        return None
    if len(parts) >= 3 and any(ch.isdigit() for ch in parts[0]) and not _city(parts[0]):
        rest = location_of(", ".join(parts[1:]))  # "Wandsbeker Chaussee 88, 22089 Hamburg, …"
        return {"address": parts[0], **rest} if rest else None
    city = _city(parts[0])
    if city is None:
        return None
    last = parts[-1]
    if len(parts) == 2 and last not in _COUNTRY_BEFORE_REGION and (region := region_of(last)):
        return {"city": city, "region": last, "countryCode": region[0]}
    code = country_code(last)
    if code is None:
        return None
    location = {"city": city, "countryCode": code}
    head, _, tail = city.rpartition(" ")
    if len(parts) == 2 and head and tail.isupper() and region_of(tail, code):
        location.update(city=head, region=tail)  # "Sydney NSW, Australia"
    middle = ", ".join(parts[1:-1])
    if middle:
        if any(ch.isdigit() for ch in middle) or len(middle.split()) > 4:
            return None
        location["region"] = middle
    return location


def is_place(text: str) -> bool:
    """A place ("Lyon, France", "Austin, TX"), a country, or a city of 15,000 people or more."""
    text = text.strip()
    return (location_of(text) is not None or country_code(text) is not None
            or city_named(text) is not None)


# A French arrondissement ("Lyon 3e") or a district number names the city it is in.
_POSTCODE = re.compile(r"\s+\d{4,6}$|^\d{4,6}\s+")  # "Penrith NSW 2750", "92400 Courbevoie"
_NEAR_WORDS = re.compile(r"\s+(bei|am|an der|im|near|nahe|près de|sur)\s+", re.I)
_DISTRICT = re.compile(r"\s+\d{1,2}(?:e|er|ème|º|\.)?$", re.I)


@lru_cache(maxsize=4096)  # boards and profiles repeat their places
def city_in(text: str) -> City | None:
    """The city a free-text place names: "Mississauga, ON, Canada", "München, Deutschland",
    "Lyon 3e", "Garching bei München", "Paris La Défense", "Clayton, Melbourne VIC" — in
    the country the text names (by a country, or a region such as "VIC"), when it names
    one; None when no part of it is a city of 15,000 people or more."""
    parts = [part.strip(" )") for part in re.split(r"[,/|;(]| - | – ", text) if part.strip(" )")]
    if not parts:
        return None
    location = location_of(text) or {}
    country = location.get("countryCode") or (country_code(parts[-1]) if len(parts) > 1 else None)
    region = location.get("region")
    named: list[str] = []
    for part in parts[:3]:
        name = _POSTCODE.sub("", _DISTRICT.sub("", part))
        head, _, code = name.rpartition(" ")
        if head and code.isupper() and (known := region_of(code, country)):
            name, country, region = head, known[0], code  # "Dandenong VIC"
        named.append(name)
    for name in named:
        for candidate in _candidates(name):
            city = city_named(candidate, country, region) or (
                city_named(candidate) if country is None else None)
            if city is not None:
                return city
    return None


def _candidates(name: str) -> list[str]:
    """The name, the town and the city of "Garching bei München", then the name's leading
    words ("Paris La Défense" → "Paris La", "Paris")."""
    near = _NEAR_WORDS.split(name)[::2] if _NEAR_WORDS.search(name) else []
    words = name.split()
    return [name, *near, *(" ".join(words[:n]) for n in range(len(words) - 1, 0, -1))]


def distance_km(a: City, b: City) -> float:
    """Great-circle distance between two cities."""
    lat1, lon1, lat2, lon2 = map(math.radians, (a.lat, a.lon, b.lat, b.lon))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(math.sqrt(h))


# --------------------------------------------------------------------------- as written

# Words that say how or whether someone works somewhere, never where.
_PREFERENCE = re.compile(
    r"\b(?:fully\s+|100\s*%\s+)?(?:remote(?:ly)?(?:[\s-]first)?|hybrid|on-?site|on\s+site|in-office"
    r"|anywhere|worldwide|world-wide|home\s*-?office|work(?:ing)? from home|wfh|telecommut\w*"
    r"|flexible|relocat\w*|mobile|télétravail|teletrabajo|remoto|remota)\b", re.IGNORECASE)
# What is left of "Open to relocation" or "Remote only" once the preference word is gone.
_FILLER = re.compile(r"\b(?:open|willing|to|or|and|only|preferred|possible|ok|also|in|within|"
                     r"from|work|options?)\b|[()\[\]/|:;+&–—-]", re.IGNORECASE)


def preference_only(text: str) -> bool:
    """True when ``text`` says how someone wants to work ("Remote", "Hybrid", "Open to
    relocation") and names no place."""
    if not _PREFERENCE.search(text):
        return False
    rest = _FILLER.sub(" ", _PREFERENCE.sub(" ", text))
    return not any(ch.isalpha() for ch in rest)


def country_name(code: str, language: str = "en") -> str:
    """The country's usual short name: "Canada", "United States", "United Kingdom",
    "South Korea"; in ``language`` when pycountry carries it ("Deutschland")."""
    import pycountry

    country = pycountry.countries.get(alpha_2=code)
    if country is None:
        return code
    name = getattr(country, "common_name", None) or country.name
    if language == "en":
        return name
    translation = gettext.translation("iso3166-1", pycountry.LOCALES_DIR, languages=[language],
                                      fallback=True)
    translated = translation.gettext(name)
    return translated if translated != name else translation.gettext(country.name)


def iso_region(city: City) -> str | None:
    """The ISO 3166-2 code (without the country) of the region ``city`` is in: "ON" for
    Toronto, "CA" for San Francisco, "NSW" for Sydney."""
    mapped = _city_data().get("regions", {}).get(f"{city.country}.{city.admin1}")
    if mapped:
        return mapped
    return city.admin1 if region_of(city.admin1, city.country) else None


def _region_code(text: str, country: str) -> str | None:
    if country not in _REGION_COUNTRIES:
        return None
    found = region_of(text, country)
    return found[1] if found else None


def _readings(parts: list[str]) -> list[tuple[str, str | None]]:
    """(country, region) readings of a place's parts after the city, likeliest first:
    "CA" after a city is California or Canada, "ON" only Ontario."""
    last, middle = parts[-1], ", ".join(parts[1:-1])
    readings: list[tuple[str, str | None]] = []
    code = country_code(last)
    if code is not None and last in _COUNTRY_BEFORE_REGION:
        readings.append((code, _region_code(middle, code) if middle else None))
    if len(parts) == 2:
        readings.extend(_regions().get(_fold(last), []))
    if code is not None:
        readings.append((code, _region_code(middle, code) if middle else None))
    return list(dict.fromkeys(readings))


def written_place(text: str, language: str = "en") -> tuple[str, City | None] | None:
    """A place as people write it on a résumé, and the city it names when known: the
    city, its region only where the region is customarily written (the postal
    abbreviation in the United States, Canada and Australia), then the country's name in
    ``language``. "Toronto, CA" → "Toronto, ON, Canada"; "San Jose, CA" → "San Jose, CA,
    United States"; "München, DE" → "München, Germany" ("München, Deutschland" in German).
    A text that only states a preference ("Remote", "Open to relocation") is None; one
    that names no place known here stays as written."""
    text = " ".join(text.split()).strip(" ,.")
    if not text or preference_only(text):
        return None
    if _PREFERENCE.search(text):  # "Remote (Canada)", "Toronto – hybrid"
        text = " ".join(_FILLER.sub(" ", _PREFERENCE.sub(" ", text)).split()).strip(" ,.")
    parts = [part.strip() for part in text.split(",") if part.strip()]
    if len(parts) == 1:
        code = country_code(text)
        if code is not None:
            return country_name(code, language), None
        if (region := region_of(text)) is not None and not city_named(text):
            return f"{text}, {country_name(region[0], language)}", None  # "Ontario"
        city = city_named(text)
        return (_as_written(text, city, None, language), city) if city else (text, None)
    if len(parts) > 3 or any(ch.isdigit() for ch in parts[0]):
        return text, None  # an address: as the job seeker wrote it
    name = parts[0]
    readings = _readings(parts)
    head, _, tail = name.rpartition(" ")
    if head and tail.isupper() and (known := [r for r in _regions().get(_fold(tail), [])
                                              if r[0] in {c for c, _ in readings}]):
        name, readings = head, known  # "Sydney NSW, Australia"
    for country, region in readings:
        city = city_named(name, country, region)
        if city is not None and (region is None or iso_region(city) in (None, region)):
            return _as_written(name, city, region, language), city
    if readings:
        country, region = readings[0]
        return _as_written(name, None, region, language, country), None
    return text, None


def _as_written(name: str, city: City | None, region: str | None, language: str,
                country: str | None = None) -> str:
    country = city.country if city is not None else country
    if country in _REGION_COUNTRIES:
        region = region or (iso_region(city) if city is not None else None)
    else:
        region = None
    return ", ".join(part for part in (name, region, country_name(country, language) if country else None)
                     if part)


def places_as_written(texts: list[str], language: str = "en") -> list[str]:
    """Each place once, as people write it (``written_place``), in the given order:
    "Munich" after "München, Germany" is the same city, and a bare country or region
    already named by an earlier place ("Canada" after "Toronto, ON, Canada") adds nothing."""
    shown: list[str] = []
    cities: set[City] = set()
    for text in texts:
        written = written_place(text, language)
        if written is None:
            continue
        place, city = written
        if city is not None and city in cities:
            continue
        if city is None and any(_fold(other).endswith(", " + _fold(place)) for other in shown):
            continue
        if _fold(place) in {_fold(other) for other in shown}:
            continue
        if city is not None:
            cities.add(city)
        shown.append(place)
    return shown
