"""The ``job_events`` row as plain SQL, with no connection wrapper: the statement and its
parameters. :func:`backend.store.events.append_event` uses them on the aiosqlite writer;
the data steps of a migration (``store/data_migrations.py``) on its plain sqlite3
connection, inside the migration's transaction, before any :class:`Database` exists."""

from __future__ import annotations

from backend.config import TENANT_ID
from backend.domain.clock import utc_now_iso
from backend.domain.events import DomainEvent

EVENT_INSERT_SQL = (
    "INSERT INTO job_events (tenant_id, type, job_id, workflow_id, run_id, payload_json,"
    " dedupe_key, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    " ON CONFLICT DO NOTHING"
)


def event_params(event: DomainEvent, *, job_id: str | None = None,
                 workflow_id: str | None = None, run_id: str | None = None,
                 dedupe_key: str | None = None, tenant_id: str = TENANT_ID) -> tuple:
    """The row of ``EVENT_INSERT_SQL`` (also used by data steps on a plain sqlite3
    connection, which run inside a migration's transaction)."""
    return (tenant_id, event.event_type, job_id, workflow_id, run_id, event.payload_json(),
            dedupe_key, utc_now_iso())
