"""Where the work happens: the posting's arrangement (remote / hybrid / on-site, office
city, on-site days, remote region) against the profile's places and remote preference.

Place knowledge comes from the bundled place data (``backend.domain.places``: GeoNames
cities with coordinates, ISO 3166 countries and regions in many languages) and a small
table of the regions postings restrict remote work to (EU, EMEA, APAC…) — enough to tell
that München is Munich, in the EU, and San Francisco is not. A place we do not know is
compared by its name only, never guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from backend.domain.fit import Requirement
from backend.domain.places import City, city_in, city_named, country_code, distance_km, region_of
from backend.domain.profile import CandidateProfile
from backend.pipeline.text import human_list

COMMUTE_KM = 50  # about 45 minutes: Mississauga from Toronto, Salford from Manchester
# Two or three office days a week: people take about an hour each way (Rotterdam from
# Amsterdam) — a reservation, not a deal-breaker.
HYBRID_COMMUTE_KM = 80

_EU = (
    "austria", "belgium", "bulgaria", "croatia", "cyprus", "czechia", "denmark", "estonia",
    "finland", "france", "germany", "greece", "hungary", "ireland", "italy", "latvia", "lithuania",
    "luxembourg", "malta", "netherlands", "poland", "portugal", "romania", "slovakia", "slovenia",
    "spain", "sweden",
)
_EUROPE_NON_EU = ["united kingdom", "switzerland", "norway", "iceland", "ukraine", "serbia"]
_REGIONS: dict[str, tuple[str, ...]] = {
    **{country: ("eu", "europe", "emea") for country in _EU},
    **{country: ("europe", "emea") for country in _EUROPE_NON_EU},
    "united states": ("north america", "americas"), "canada": ("north america", "americas"),
    "mexico": ("north america", "americas", "latam"), "brazil": ("americas", "latam"),
    "argentina": ("americas", "latam"), "colombia": ("americas", "latam"),
    "chile": ("americas", "latam"),
    "india": ("apac", "asia"), "singapore": ("apac", "asia"), "japan": ("apac", "asia"),
    "australia": ("apac",), "new zealand": ("apac",),
    "israel": ("emea",), "united arab emirates": ("emea",), "south africa": ("emea", "africa"),
    "nigeria": ("emea", "africa"), "kenya": ("emea", "africa"),
}
# Names of regions a posting restricts remote work to ("Remote (EU)", "anywhere in EMEA").
_REGION_NAMES = {"eu", "europe", "emea", "north america", "americas", "latam", "apac", "asia", "africa"}
_REGION_ALIASES = {"european union": "eu"}


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("(", " ").replace(")", " ").split()).strip(" .,")


@cache
def _country_names() -> dict[str, str]:
    """ISO 3166 alpha-2 → the country's English name as the region table writes it
    ("united states", "south korea"), from pycountry."""
    import pycountry

    return {country.alpha_2: getattr(country, "common_name", country.name).lower()
            for country in pycountry.countries}


def country_from_code(code: str) -> str | None:
    """The country an ISO 3166 alpha-2 code names (a JSON Resume ``countryCode``)."""
    return _country_names().get(code.strip().upper())


def _country_in(part: str) -> str | None:
    """The country a part of a location names, in any language the place data knows
    ("Deutschland", "UK", "España"), or the country of the region it names ("Texas",
    "Ontario", "NSW")."""
    code = country_code(part) if len(part) > 2 else None
    if code is None and len(part) > 2:
        region = region_of(part)
        code = region[0] if region else None
    return country_from_code(code) if code else None


def _two_letter_place(code: str, context: set[str]) -> str:
    """A two-letter part read with the location's other parts: the country their cities or
    names lie in wins ("Berlin, DE" is Germany), then a US state ("Wilmington, DE",
    "Austin, TX"), then an ISO country code ("NL")."""
    country = country_from_code(code)
    if country and country in context:
        return country
    if region_of(code.upper(), "US") and (not context or "united states" in context):
        return "united states"
    return country or code


def _city_country(part: str, context: set[str]) -> str | None:
    """The country of the city a part names (in the location's country, when it names one)."""
    codes = {code for code, name in _country_names().items() if name in context}
    city = city_named(part, next(iter(codes))) if len(codes) == 1 else city_named(part)
    return country_from_code(city.country) if city else None


def _context_countries(parts: list[str]) -> set[str]:
    """The countries named by a location's parts longer than two letters."""
    named = {country for part in parts if len(part) > 2 and (country := _country_in(part))}
    return named or {country for part in parts if len(part) > 2 and (country := _city_country(part, set()))}


@cache
def place_tags(text: str) -> frozenset[str]:
    """Every place a free-text location names or lies in: "Berlin, Germany" →
    {berlin, germany, eu, europe, emea}; "Atlanta, GA, United States" → {atlanta, united
    states, north america, americas}; "München, Deutschland" → {münchen, munich, germany, …}.
    Cached: profiles and boards repeat their places."""
    tags: set[str] = set()
    parts = [_norm(part) for part in re.split(r"[,/;|()]| - ", text)]
    context = _context_countries(parts)
    for part in parts:
        if not part or part == "remote":
            continue
        if len(part) == 2 and part.isalpha():
            name = _two_letter_place(part, context)
            country = name if name in _country_names().values() else None
        else:
            name = _REGION_ALIASES.get(part, part)
            country = _country_in(part)
            if country is None and name not in _REGION_NAMES:
                city = city_named(part)
                country = _city_country(part, context)
                if city is not None:
                    tags.add(city.name.lower())  # "münchen" is also "munich"
        tags.add(name)
        if country:
            tags.add(country)
        tags.update(_REGIONS.get(country or name, ()))
    return frozenset(tags)


def _own_name(part: str) -> str:
    """A place the job seeker names, as the tags write it: a country by its English name
    ("Deutschland" → "germany"), anything else as written."""
    name = _norm(part)
    code = country_code(name) if len(name) > 1 else None
    return country_from_code(code) if code else _REGION_ALIASES.get(name, name)


def country_of(text: str) -> str | None:
    """The country a location lies in, when the place data knows it."""
    countries = set(_country_names().values())
    return next((tag for tag in sorted(place_tags(text)) if tag in countries), None)


# --------------------------------------------------------------------------- the posting


@dataclass(frozen=True)
class Arrangement:
    mode: str | None
    """remote | hybrid | onsite, or None when neither the source nor the text says."""
    city: str | None = None
    """The office city ("San Francisco"), for hybrid and on-site roles."""
    days: int | None = None
    """On-site days a week, when stated."""
    region: str | None = None
    """Where a remote role may be done from ("EU", "United States"), when restricted."""
    location: str | None = None
    """The posting's own location field ("Mississauga, ON, Canada")."""

    def label(self) -> str:
        if self.mode == "remote":
            return f"Remote ({self.region})" if self.region else "Remote"
        where = f" in {self.city}" if self.city else ""
        if self.mode == "hybrid":
            return f"Hybrid, {self.days} days a week{where}" if self.days else f"Hybrid{where}"
        if self.mode == "onsite":
            days = f", {self.days} days a week" if self.days else ""
            return f"On-site{where}{days}"
        return f"Work arrangement{where}"


_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5}
# Run over the lower-cased text (re.I is slower, and this scans the whole description).
_DAYS = re.compile(r"\b([1-5]|one|two|three|four|five)[\s-]+days?\s+(?:a|per|each|every)\s+week"
                   r"|\b([1-5]|one|two|three|four|five)[\s-]+days?\s+(?:in|at)\s+(?:the|our)\s+office")
# Two patterns, each starting with literal text, so the engine can skip ahead to it.
_CITY = r"([A-Z][\w.'-]*(?: [A-Z][\w.'-]*){0,2})"
_OFFICE_CITY = (re.compile(r"in our " + _CITY + r" (?:office|hub|studio|HQ|headquarters)"),
                re.compile(r"(?:on-?site|hybrid|based|office) in " + _CITY))
_REMOTE_REGION = re.compile(
    r"\b[Rr]emote\s*[(\-–:,]\s*(?:only\s+)?(?:in\s+)?(?:the\s+)?([A-Z][\w.]*(?: [A-Z][\w.]*){0,2})"
    r"|\banywhere in (?:the )?([A-Z][\w.]*(?: [A-Z][\w.]*){0,2})"
    r"|\b(?:live|reside|located|based) in (?:the )?([A-Z][\w.]*(?: [A-Z][\w.]*){0,2})")
_REMOTE_TEXT = re.compile(r"\b(?:fully remote|100% remote|remote-first|remote first|work from anywhere"
                          r"|remote role|remote position)\b", re.IGNORECASE)
_ANYWHERE = re.compile(r"\b(?:anywhere|worldwide|world-wide|globally|any country|weltweit"
                       r"|partout|cualquier lugar)\b(?!\s+(?:in|au|en|dans|within|across|im|in der)\b)", re.I)
_HYBRID_TEXT = re.compile(r"\bhybrid\b", re.IGNORECASE)
_ONSITE_TEXT = re.compile(r"\b(?:on-?site|in-office|in the office|five days a week)\b", re.IGNORECASE)


def _first_group(match: re.Match[str] | None) -> str | None:
    return next((group for group in match.groups() if group), None) if match else None


def _mode(remote: str | None, text: str) -> str | None:
    if remote in ("remote", "hybrid", "onsite"):
        return remote
    # The source did not say: the text's own words, strongest signal first.
    for mode, pattern in (("hybrid", _HYBRID_TEXT), ("remote", _REMOTE_TEXT), ("onsite", _ONSITE_TEXT)):
        if pattern.search(text):
            return mode
    return None


def _location_city(location: str | None) -> str | None:
    first = (location or "").split(",")[0].strip()
    return first if first and first.lower() not in ("remote", "anywhere", "worldwide") else None


def posting_arrangement(remote: str | None, location: str | None, text: str) -> Arrangement:
    mode = _mode(remote, text)
    if mode == "remote":
        region = _first_group(_REMOTE_REGION.search(location or "")) or _first_group(
            _REMOTE_REGION.search(text))
        region = region.rstrip(".") if region else None
        known = region and (place_tags(region) & (_REGION_NAMES | set(_country_names().values())))
        if not known and not _ANYWHERE.search(f"{location or ''} {text}"):
            # "Montréal, QC, Canada (télétravail au Canada)": a remote role listed in one
            # country hires there unless it says anywhere.
            country = country_of(location or "")
            region, known = (country.title(), True) if country else (None, False)
        return Arrangement("remote", region=region if known else None, location=location)
    days = _first_group(_DAYS.search(text.lower()))
    day_count = None if days is None else _NUMBER_WORDS.get(days) or int(days)
    city = next((m.group(1) for p in _OFFICE_CITY if (m := p.search(text))), None) or _location_city(location)
    if mode == "onsite" and day_count is None:
        day_count = 5 if re.search(r"\bfull[- ]time in the office\b", text, re.I) else None
    return Arrangement(mode, city=city, days=day_count, location=location)


# --------------------------------------------------------------------------- the profile


def office_reachable(profile: CandidateProfile, *places: str | None) -> bool:
    """An office is reachable when its city, or its country, is one the profile names, or
    when it lies within a commute (``COMMUTE_KM``) of a city the profile names — a region
    ("EU") is not a commute. ``places``: the office city, the posting's location."""
    names = [place for place in places if place]
    own = {_own_name(place.split(",")[0]) for place in profile.locations}
    if any(place_tags(name) & (own - _REGION_NAMES) for name in names):
        return True
    homes = _home_cities(tuple(profile.locations))
    # The posting's location field names the office; a place in its text ("our SoHo
    # office") only counts when the field names no city we know.
    offices = _office_cities(names[1:]) or _office_cities(names[:1])
    return any(distance_km(home, office) <= COMMUTE_KM for office in offices for home in homes)


@cache
def _home_cities(locations: tuple[str, ...]) -> tuple[City, ...]:
    return tuple(city for place in locations if (city := city_in(place)) is not None)


def _office_cities(names: list[str]) -> list[City]:
    return [city for name in names if (city := city_in(name)) is not None]


def office_distance_km(profile: CandidateProfile, arrangement: Arrangement) -> float | None:
    """How far the office is from the nearest place the job seeker named, when both are known."""
    office = office_city(arrangement)
    homes = _home_cities(tuple(profile.locations))
    return min((distance_km(home, office) for home in homes), default=None) if office else None


def office_city(arrangement: Arrangement) -> City | None:
    """The city the office is in, when the posting names one we know."""
    return next(iter(_office_cities([n for n in (arrangement.location, arrangement.city) if n])), None)


def place_covered(place: str, held: list[str]) -> bool:
    """Whether places the job seeker holds (lives in, may work in) cover ``place``.

    A country or city is covered when one of the held places names it or a region it lies
    in ("EU" covers Germany); a region is covered by any held place inside it (Berlin lies
    in the EU). Neighbouring countries never cover each other, although they share a region.
    """
    wanted = place_tags(place)
    if wanted - _REGION_NAMES:
        return bool(wanted & _named_or_regions(held))
    return bool(wanted & places_of(held))


def _named_or_regions(held: list[str]) -> set[str]:
    """The places named, without the regions they lie in — unless the name is a region."""
    names: set[str] = set()
    for name in held:
        tags = place_tags(name)
        names |= tags if tags <= _REGION_NAMES else tags - _REGION_NAMES
    return names


def region_allows(profile: CandidateProfile, region: str | None) -> bool | None:
    """Whether a remote role's region admits the profile; None when the posting restricts
    nothing or the profile names no place."""
    held = [*profile.locations, *profile.work_authorization]
    if not region or not held:
        return None
    return place_covered(region, held)


def places_of(names: list[str]) -> frozenset[str]:
    """Every place the names name or lie in."""
    return frozenset().union(*(place_tags(name) for name in names))


def wanted_phrase(profile: CandidateProfile) -> str:
    """What the job seeker asked for, in their words: "you want remote only (from Berlin)"."""
    places = human_list(profile.locations[:3])
    preference = profile.remote_preference
    if preference == "remote_only":
        return f"you want remote only (from {places})" if places else "you want remote only"
    if preference == "remote_or_hybrid":
        return f"you want remote, or hybrid in {places}" if places else "you want remote or hybrid"
    if preference == "onsite":
        return f"you want to work on-site in {places}" if places else "you want to work on-site"
    return f"you want remote or {places}" if places else "you want remote"


def location_requirement(profile: CandidateProfile, arrangement: Arrangement) -> Requirement:
    """The posting's arrangement judged against the profile's places and remote preference.

    An on-site role for a remote-only profile is a deal-breaker; a hybrid one is too, a
    milder one; so is an office in a city the profile does not list, or a remote role
    open only to a region the job seeker is not in (the cap levels are in ``rules``)."""
    label = arrangement.label()
    preference = profile.remote_preference
    wants = wanted_phrase(profile)
    mode = arrangement.mode

    def req(status: str, *, evidence: str | None = None, detail: str | None = None,
            deal_breaker: bool = False) -> Requirement:
        return Requirement(kind="location", label=label, importance="must", status=status,
                           evidence=evidence, detail=detail, deal_breaker=deal_breaker)

    if mode is None:
        return _unstated_mode(profile, arrangement, req, wants)
    if mode == "remote":
        if preference == "onsite":
            return req("unknown", detail=f"A remote role — {wants}")
        allowed = region_allows(profile, arrangement.region)
        if allowed is False:  # hiring only where the job seeker is not: a deal-breaker
            return req("missing", detail=f"Only from {arrangement.region} — you are in "
                                         f"{human_list(profile.locations[:3])}", deal_breaker=True)
        evidence = "Remote preference: " + preference.replace("_", " ")
        if allowed:
            evidence += f"; {human_list(profile.locations[:3])} is in {arrangement.region}"
        return req("met", evidence=evidence)
    if preference == "remote_only":
        return req("missing", detail=wants, deal_breaker=True)
    if preference == "remote_or_hybrid" and mode == "onsite":
        return req("missing", detail=f"Fully on-site — {wants}", deal_breaker=True)
    if office_reachable(profile, arrangement.city, arrangement.location):
        return req("met", evidence=f"Locations: {human_list(profile.locations[:3])}")
    if not profile.locations:
        return req("unknown", detail=f"{wants}; your profile names no city")
    if not arrangement.city:
        return req("unknown", detail=f"Office city not stated — {wants}")
    if office_city(arrangement) is None:  # a district or small town: the distance is unknown
        return req("unknown", detail=f"Cannot tell how far {arrangement.city} is — {wants}")
    far = office_distance_km(profile, arrangement)
    if mode == "hybrid" and far is not None and far <= HYBRID_COMMUTE_KM:
        return req("unknown", detail=f"About {far:.0f} km from {human_list(profile.locations[:1])}, "
                                     "a long commute on office days")
    # An office beyond a commute of every place the job seeker named: no amount of skills
    # makes it a fit.
    return req("missing", detail=wants, deal_breaker=True)


def _unstated_mode(profile: CandidateProfile, arrangement: Arrangement, req, wants: str) -> Requirement:
    """A posting that does not say remote or on-site works where it says it is: a known
    city beyond a commute of every place the job seeker named rules it out."""
    office = office_city(arrangement)
    if office is None or not profile.locations:
        return req("unknown", detail="Remote or on-site — not stated")
    if office_reachable(profile, arrangement.city, arrangement.location):
        if profile.remote_preference == "remote_only":
            return req("unknown", detail=f"Remote or on-site — not stated; {wants}")
        return req("met", evidence=f"{office.name} is within reach of {human_list(profile.locations[:3])}")
    return req("missing", detail=f"In {office.name} — {wants}", deal_breaker=True)
