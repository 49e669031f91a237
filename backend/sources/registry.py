"""Which fetcher serves which configured source kind."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from backend.domain.postings import Posting
from backend.sources.board_file import fetch_demo_board, fetch_json_file
from backend.sources.config import SourceConfig

Fetcher = Callable[[SourceConfig], Awaitable[list[Posting]]]

FETCHERS: dict[str, Fetcher] = {
    "demo_board": fetch_demo_board,
    "json_file": fetch_json_file,
}


async def fetch_source(source: SourceConfig) -> list[Posting]:
    return await FETCHERS[source.kind](source)
