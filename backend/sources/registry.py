"""Which fetcher serves which configured source kind.

Each fetcher's module is imported when its kind is first fetched, not when the worker
starts: together the adapters (and the HTML, feed and retry libraries they use) were a
large part of the worker's start-up, and a user's sources use two or three of them."""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from typing import Any

from backend.domain.postings import Posting
from backend.domain.source_config import SourceConfig
from backend.sources.caps import Postings, cap_postings

# Each fetcher takes its own config model; the union's ``kind`` picks the right one.
Fetcher = Callable[[Any], Awaitable[list[Posting]]]

# kind -> (module under backend.sources, function)
FETCHERS: dict[str, tuple[str, str]] = {
    "demo_board": ("board_file", "fetch_demo_board"),
    "json_file": ("board_file", "fetch_json_file"),
    "greenhouse": ("greenhouse", "fetch_greenhouse"),
    "lever": ("lever", "fetch_lever"),
    "ashby": ("ashby", "fetch_ashby"),
    "feed": ("feeds", "fetch_feed"),
    "csv_file": ("csv_file", "fetch_csv_file"),
    # Discovery runs jobspy through its resumable unit runner; this is the plain crawl.
    "jobspy": ("jobspy_family", "fetch_jobspy"),
    "workday": ("workday", "fetch_workday"),
    "smartrecruiters": ("smartrecruiters", "fetch_smartrecruiters"),
    "workable": ("workable", "fetch_workable"),
    "recruitee": ("recruitee", "fetch_recruitee"),
    "personio": ("personio", "fetch_personio"),
}


def fetcher_for(kind: str) -> Fetcher:
    module, function = FETCHERS[kind]
    return getattr(importlib.import_module(f"backend.sources.{module}"), function)


async def fetch_source(source: SourceConfig) -> Postings:
    """The source's postings, at most MAX_POSTINGS_PER_FETCH of them whatever the family
    (the families built on ``collect`` stop converting there already; this is the one
    place every family passes), with how many were left out over the cap."""
    return cap_postings(await fetcher_for(source.kind)(source))
