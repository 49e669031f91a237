"""Paging and per-posting detail requests, shared by the families that need them."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from backend.sources.errors import SourceMisconfigured, SourcePayloadInvalid

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")

# Detail requests in flight per board: polite to the employer's site, still quick.
DETAIL_CONCURRENCY = 4


async def offset_pages(
    fetch_page: Callable[[int], Awaitable[tuple[list[Any], int | None]]],
    *, page_size: int, limit: int,
) -> list[Any]:
    """Items of an offset-paged list, up to ``limit``. ``fetch_page(offset)`` answers the
    page and the total it reports (None when it says none). A total reported once is kept:
    Workday reports it on the first page only and 0 on the next ones. Stops on a short or
    empty page too, so a board that never reports a total still ends."""
    items: list[Any] = []
    total: int | None = None
    offset = 0
    for _ in range(limit // max(page_size, 1) + 2):  # never more pages than the limit needs
        page, reported = await fetch_page(offset)
        if total is None and reported:
            total = reported
        items.extend(page)
        offset += len(page)
        if len(page) < page_size or len(items) >= limit or (total is not None
                                                              and offset >= total):
            break
    return items[:limit]


async def with_details(
    items: list[T], fetch_detail: Callable[[T], Awaitable[R]],
    *, family: str, concurrency: int = DETAIL_CONCURRENCY,
) -> list[tuple[T, R | None]]:
    """Each item with its detail, a few requests at a time, in the items' order. A detail
    that is gone (404, the posting closed since the list) or unreadable leaves that item
    with None; an unavailable site (after the rate-limit retries) fails the whole fetch,
    so Temporal retries the family instead of storing a half-read board."""
    gate = asyncio.Semaphore(concurrency)
    missing = 0

    async def one(item: T) -> tuple[T, R | None]:
        nonlocal missing
        async with gate:
            try:
                return item, await fetch_detail(item)
            except (SourceMisconfigured, SourcePayloadInvalid):
                missing += 1
                return item, None

    try:
        async with asyncio.TaskGroup() as group:  # one failure cancels the rest
            tasks = [group.create_task(one(item)) for item in items]
    except BaseExceptionGroup as grouped:
        raise grouped.exceptions[0] from None
    results = [task.result() for task in tasks]
    if missing:
        log.warning("%s: %d of %d posting details were gone or unreadable", family, missing,
                    len(items))
    return list(results)
