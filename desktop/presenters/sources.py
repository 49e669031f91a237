"""What a configured job source is called on screen. Qt-free.

A source is the API's own dict (``GET /v1/settings`` → ``sources``); its id is for the
API, its name is for people: "Demo board", "acme (Greenhouse)", "jobs.rss (feed)".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

# The Source column of Settings' table (Pipelines' source choices use it too).
KIND_LABELS = {
    "demo_board": "Demo board",
    "greenhouse": "Greenhouse board",
    "lever": "Lever site",
    "ashby": "Ashby board",
    "feed": "RSS / Atom feed",
    "json_file": "JSON file",
    "csv_file": "CSV file",
    "jobspy": "Job boards search",
}
# What a sentence calls the family: "acme (Greenhouse)", "jobs.rss (feed)".
FAMILY_NAMES = {
    "demo_board": "Demo board", "greenhouse": "Greenhouse", "lever": "Lever", "ashby": "Ashby",
    "feed": "feed", "json_file": "file", "csv_file": "file", "jobspy": "search",
}
DETAIL_FIELDS = ("boardToken", "company", "boardName", "url", "path")

Source = Mapping[str, Any]


def describe_source(source: Source) -> str:
    """Where a source reads from: the board, site, feed or file (the Where column)."""
    for field in DETAIL_FIELDS:
        if source.get(field):
            return str(source[field])
    if source.get("kind") == "jobspy":
        return ", ".join(source.get("queries") or [])
    return "bundled sample postings"


def source_name(source: Source) -> str:
    """"Demo board", "Acme (Greenhouse)", "jobs.rss (feed)": what sentences call it."""
    kind = str(source.get("kind"))
    if kind == "demo_board":
        return KIND_LABELS[kind]
    label = FAMILY_NAMES.get(kind, "source")
    what = source.get("companyName") or describe_source(source)
    if kind in ("feed", "json_file", "csv_file"):
        what = _last_part(str(what))
    return f"{what} ({label})"


def _last_part(location: str) -> str:
    path = urlsplit(location).path if "://" in location else location
    return path.rstrip("/").rsplit("/", 1)[-1] or location


def source_names(sources: Iterable[Source]) -> dict[str, str]:
    """Source id -> name, for the Activity sentences."""
    return {str(source["id"]): source_name(source) for source in sources if source.get("id")}
