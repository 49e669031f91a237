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

from backend.domain.application_state import APPLICATION_EVENT_TYPES, fold
from backend.projections import paging
from backend.store import applications as rows
from backend.store import projection_builder

WATERMARK_PREFIX = "applications"
PAGE_SIZE = 500


async def _fold_one_page(conn: aiosqlite.Connection, tenant_id: str, page_size: int) -> bool:
    return await paging.fold_page_per_job(
        conn, tenant_id, watermark_name=f"{WATERMARK_PREFIX}:{tenant_id}",
        event_types=APPLICATION_EVENT_TYPES, page_size=page_size, read_state=rows.read_state,
        fold_event=lambda state, event: fold(state, event.job_id, event.type,
                                             paging.payload_dict(event), event_id=event.id),
        write_state=rows.write_state)


async def catch_up(conn: aiosqlite.Connection, tenant_id: str) -> None:
    """The registered fold: every board event after the watermark, in ``conn``'s
    transaction."""
    await paging.fold_to_end(conn, lambda c: _fold_one_page(c, tenant_id, PAGE_SIZE))


projection_builder.register(WATERMARK_PREFIX, APPLICATION_EVENT_TYPES, catch_up)
