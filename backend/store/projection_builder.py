"""The projection builder: the one keeper of the read models folded from ``job_events``.

Every event-folded projection registers its fold here (:func:`register`), and
:func:`backend.store.events.append_event` hands each appended event to
:func:`fold_appended`, which runs the folds registered for that event's type inside the
writer's own transaction (fold-at-write). So a read model is current the moment the
write commits, rolls back with it, and no reader ever has to fold (a GET never writes).

A registered fold is a *catch-up*: it folds every event of its types after the
projection's watermark (``projection_watermarks``), not only the one just appended. Events
that reached the log without passing through here (a migration's data step on a plain
sqlite3 connection, a process that appended before its projections registered) are
therefore folded by the next matching write, or by :func:`catch_up_all`, which the API and
the worker run once at start-up.

The folds themselves live in ``backend/projections/`` and register on import of that
package; the store owns only the registry and the call, so it never imports a projection.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass

import aiosqlite

from backend.store.db import Database

log = logging.getLogger(__name__)

# Fold every event of the projection's types after its watermark, inside the caller's
# write transaction, for one tenant.
CatchUp = Callable[[aiosqlite.Connection, str], Awaitable[None]]


@dataclass(frozen=True)
class Projection:
    name: str
    event_types: frozenset[str]
    catch_up: CatchUp


_REGISTRY: dict[str, Projection] = {}
_BY_TYPE: dict[str, tuple[Projection, ...]] = {}


def register(name: str, event_types: Iterable[str], catch_up: CatchUp) -> None:
    """Register (or replace, by name) one projection's fold."""
    _REGISTRY[name] = Projection(name, frozenset(event_types), catch_up)
    by_type: dict[str, list[Projection]] = {}
    for projection in _REGISTRY.values():
        for event_type in projection.event_types:
            by_type.setdefault(event_type, []).append(projection)
    _BY_TYPE.clear()
    _BY_TYPE.update({event_type: tuple(found) for event_type, found in by_type.items()})


def registered() -> tuple[str, ...]:
    return tuple(_REGISTRY)


def folds_type(event_type: str) -> bool:
    return event_type in _BY_TYPE


async def fold_appended(conn: aiosqlite.Connection, event_type: str, tenant_id: str) -> None:
    """Bring every projection of ``event_type`` up to the log's end, in ``conn``'s open
    transaction. Other events cost one dict lookup."""
    for projection in _BY_TYPE.get(event_type, ()):
        await projection.catch_up(conn, tenant_id)


async def catch_up_all(db: Database, tenant_id: str) -> None:
    """Fold whatever the log holds beyond each projection's watermark (one write
    transaction per projection): the start-up pass of the API and the worker."""
    if not _REGISTRY:
        log.warning("no projection is registered; nothing to catch up")
    for projection in _REGISTRY.values():
        async with db.transaction() as conn:
            await projection.catch_up(conn, tenant_id)
