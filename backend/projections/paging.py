"""The shared builder loop of the event-folded projections: read the next page of one
projection's event types after its watermark, fold it, and repeat until the log's end.

:func:`fold_to_end` is what each projection registers with the projection builder
(:mod:`backend.store.projection_builder`), which runs it inside the writer's transaction
of every matching append; :func:`refresh` and :func:`rebuild` run the same page fold in
transactions of their own (the start-up catch-up, the repair, the tests).

Each projection keeps its own fold; this module only owns the paging, so every builder
moves its watermark by the same rule (see :func:`next_page`). The SQL it runs is the
store's (:mod:`backend.store.event_pages`, :mod:`backend.store.watermarks`).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import aiosqlite

from backend.domain.clock import parse_iso
from backend.store import event_pages, watermarks
from backend.store.db import Database
from backend.store.events import StoredEvent

FoldPage = Callable[[aiosqlite.Connection], Awaitable[bool]]


@dataclass(frozen=True)
class Page:
    events: list[StoredEvent]
    newest: int  # the id the watermark may move to once this page is folded
    more: bool  # True when more pages may follow


def payload_dict(event: StoredEvent) -> dict[str, Any]:
    """The event's JSON payload as a dict; {} when it is malformed or not an object."""
    try:
        value = json.loads(event.payload_json)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def duration_ms(started_at: str | None, finished_at: str | None) -> int | None:
    """Milliseconds between two ISO times; None when either is missing or unreadable."""
    if not started_at or not finished_at:
        return None
    try:
        delta = parse_iso(finished_at) - parse_iso(started_at)
    except ValueError:
        return None
    return max(0, round(delta.total_seconds() * 1000))


async def next_page(conn: aiosqlite.Connection, tenant_id: str, after: int,
                    event_types: Sequence[str], page_size: int) -> Page:
    """The next ``page_size`` events of ``event_types`` after ``after``, inside the
    caller's write transaction."""
    events = await event_pages.events_after(conn, tenant_id, after, event_types, page_size)
    if len(events) < page_size:
        # Every event of these types up to the log's end is in this page (we hold the
        # write lock, so nothing new can commit): the watermark may jump past other events.
        newest = await event_pages.newest_event_id(conn, tenant_id)
        return Page(events, newest, more=False)
    return Page(events, events[-1].id, more=True)


async def fold_page_per_job(conn: aiosqlite.Connection, tenant_id: str, *, watermark_name: str,
                            event_types: Sequence[str], page_size: int,
                            read_state: Callable[[aiosqlite.Connection, str], Awaitable[Any]],
                            fold_event: Callable[[Any, StoredEvent], Any],
                            write_state: Callable[[aiosqlite.Connection, Any], Awaitable[None]],
                            ) -> bool:
    """One page of a projection kept one row per job: each job's row is read once, every
    event of the page folded into it in order (``fold_event(state, event)``), the rows
    written back, then the watermark moved. Returns whether more pages may follow."""
    after = await watermarks.read_watermark(conn, watermark_name)
    page = await next_page(conn, tenant_id, after, event_types, page_size)
    states: dict[str, Any] = {}
    for event in page.events:
        if event.job_id is None:
            continue
        if event.job_id not in states:
            states[event.job_id] = await read_state(conn, event.job_id)
        states[event.job_id] = fold_event(states[event.job_id], event)
    for state in states.values():
        if state is not None:
            await write_state(conn, state)
    if page.newest > after:
        await watermarks.write_watermark(conn, watermark_name, page.newest)
    return page.more


async def fold_to_end(conn: aiosqlite.Connection, fold_page: FoldPage) -> None:
    """Fold page after page inside the caller's write transaction until the log's end."""
    while await fold_page(conn):
        pass


async def refresh(db: Database, tenant_id: str, watermark_name: str,
                  fold_page: FoldPage) -> int:
    """Fold page after page (one write transaction each) until the log's end; returns
    the watermark afterwards. Cheap when nothing is new (two indexed reads, no write
    lock). ``fold_page`` re-reads the watermark inside its transaction, so concurrent
    builders never fold an event twice."""
    watermark = await watermarks.read_watermark(db, watermark_name)
    if await event_pages.newest_event_id(db, tenant_id) <= watermark:
        return watermark
    more = True
    while more:
        async with db.transaction() as conn:
            more = await fold_page(conn)
    return await watermarks.read_watermark(db, watermark_name)


async def rebuild(db: Database, tenant_id: str, watermark_name: str, tables: Sequence[str],
                  fold_page: FoldPage) -> int:
    """Drop the tenant's rows of ``tables`` and fold the whole log again from event 0, in
    one transaction, so no reader of another connection sees a half-built table."""
    async with db.transaction() as conn:
        await event_pages.delete_tenant_rows(conn, tables, tenant_id)
        await watermarks.write_watermark(conn, watermark_name, 0)
        while await fold_page(conn):
            pass
    return await watermarks.read_watermark(db, watermark_name)
