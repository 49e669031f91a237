"""``application_projections``: one row per tracked application (the board), folded from
the Application* / FollowUp* / Interview* events with the pure fold of
:mod:`backend.domain.application_state`.

The projection builder runs :func:`catch_up` in the same transaction as every such append
(everything after the ``applications`` watermark), so a board command reads its own write;
re-folding an already folded event changes nothing (``last_event_id``).
``backend.store.applications.rebuild_applications`` rebuilds every row from event 0.
"""

from __future__ import annotations

import aiosqlite

from backend.domain.application_state import APPLICATION_EVENT_TYPES, ApplicationState, fold
from backend.projections import paging, watermarks
from backend.store import applications as rows
from backend.store import projection_builder

WATERMARK_PREFIX = "applications"
PAGE_SIZE = 500


async def _fold_one_page(conn: aiosqlite.Connection, tenant_id: str, page_size: int) -> bool:
    name = f"{WATERMARK_PREFIX}:{tenant_id}"
    after = await watermarks.read_watermark(conn, name)
    page = await paging.next_page(conn, tenant_id, after, APPLICATION_EVENT_TYPES, page_size)
    states: dict[str, ApplicationState | None] = {}
    for event in page.events:
        if event.job_id is None:
            continue
        if event.job_id not in states:
            states[event.job_id] = await rows.read_state(conn, event.job_id)
        states[event.job_id] = fold(states[event.job_id], event.job_id, event.type,
                                    paging.payload_dict(event), event_id=event.id)
    for state in states.values():
        if state is not None:
            await rows.write_state(conn, state)
    if page.newest > after:
        await watermarks.write_watermark(conn, name, page.newest)
    return page.more


async def catch_up(conn: aiosqlite.Connection, tenant_id: str) -> None:
    """The registered fold: every board event after the watermark, in ``conn``'s
    transaction."""
    await paging.fold_to_end(conn, lambda c: _fold_one_page(c, tenant_id, PAGE_SIZE))


projection_builder.register(WATERMARK_PREFIX, APPLICATION_EVENT_TYPES, catch_up)
