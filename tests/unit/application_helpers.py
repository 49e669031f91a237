"""Shared set-up of the application-board tests: stored jobs and applied ones."""

from __future__ import annotations

from zoneinfo import ZoneInfo

from backend.store import applications as store
from backend.store import materials

LOS_ANGELES = ZoneInfo("America/Los_Angeles")


def job_key(n: int) -> str:
    return f"job_{n:024x}"


async def add_job(db, n: int, *, title: str = "Backend Engineer", company: str = "Acme",
                  source: str = "demo_board", score: int | None = None,
                  description: str = "<p>Build APIs.</p>") -> str:
    key = job_key(n)
    async with db.transaction() as conn:
        await conn.execute(
            "INSERT INTO jobs (job_id, tenant_id, canonical_url, url, title, company,"
            " description_html, first_source, first_seen_at, last_seen_at) VALUES"
            " (?, 'local', ?, ?, ?, ?, ?, ?, '2026-01-01T00:00:00.000Z',"
            " '2026-01-01T00:00:00.000Z')",
            (key, f"https://acme.example/{n}", f"https://acme.example/{n}", title, company,
             description, source))
        if score is not None:
            await materials.insert_score(conn, key, version=1, score=score, rationale="r",
                                         matched=[], missing=[], provider="offline", model="m",
                                         profile_revision=1, workflow_id="w", run_id="r")
    return key


async def apply_job(db, key: str, *, applied_at: str = "2026-03-02T17:00:00.000Z",
                    zone=LOS_ANGELES, template: str | None = "classic", days: int = 7):
    policy = store.TrackingPolicy(zone=zone, follow_up_after_days=days,
                                  resume_template=template)
    async with db.transaction() as conn:
        return await store.track_application(conn, key, via="job_action", policy=policy,
                                             applied_at=applied_at)
