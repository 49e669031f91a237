"""Which fetcher serves which configured source kind."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from backend.domain.postings import Posting
from backend.domain.source_config import SourceConfig
from backend.sources.ashby import fetch_ashby
from backend.sources.board_file import fetch_demo_board, fetch_json_file
from backend.sources.csv_file import fetch_csv_file
from backend.sources.feeds import fetch_feed
from backend.sources.greenhouse import fetch_greenhouse
from backend.sources.jobspy_family import fetch_jobspy
from backend.sources.lever import fetch_lever
from backend.sources.personio import fetch_personio
from backend.sources.recruitee import fetch_recruitee
from backend.sources.smartrecruiters import fetch_smartrecruiters
from backend.sources.workable import fetch_workable
from backend.sources.workday import fetch_workday

# Each fetcher takes its own config model; the union's ``kind`` picks the right one.
Fetcher = Callable[[Any], Awaitable[list[Posting]]]

FETCHERS: dict[str, Fetcher] = {
    "demo_board": fetch_demo_board,
    "json_file": fetch_json_file,
    "greenhouse": fetch_greenhouse,
    "lever": fetch_lever,
    "ashby": fetch_ashby,
    "feed": fetch_feed,
    "csv_file": fetch_csv_file,
    # Discovery runs jobspy through its resumable unit runner; this is the plain crawl.
    "jobspy": fetch_jobspy,
    "workday": fetch_workday,
    "smartrecruiters": fetch_smartrecruiters,
    "workable": fetch_workable,
    "recruitee": fetch_recruitee,
    "personio": fetch_personio,
}


async def fetch_source(source: SourceConfig) -> list[Posting]:
    return await FETCHERS[source.kind](source)
