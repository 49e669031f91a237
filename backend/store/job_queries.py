"""Read side of jobs: filtered, sorted pages and one job's full detail."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Literal

from backend.config import TENANT_ID
from backend.store import materials
from backend.store.db import Database
from backend.store.stages import read_rows

SortKey = Literal["firstSeen", "score", "title", "company", "location", "postedAt"]
SORT_SQL = {
    "firstSeen": "j.first_seen_at", "score": "score", "title": "j.title COLLATE NOCASE",
    "company": "j.company COLLATE NOCASE", "location": "j.location COLLATE NOCASE",
    "postedAt": "j.posted_at",
}
UNMARKED = "none"  # user_status filter value: jobs neither applied nor skipped


@dataclass(frozen=True)
class JobFilter:
    q: str | None = None
    remote: str | None = None
    min_score: int | None = None
    stage: str | None = None
    stage_status: str | None = None
    user_status: str | None = None


LATEST_SCORE = (
    "(SELECT s.score FROM job_scores s WHERE s.job_id = j.job_id ORDER BY s.version DESC LIMIT 1)"
)


LATEST_LEDGER = ("(SELECT s.ledger_json FROM job_scores s WHERE s.job_id = j.job_id"
                 " ORDER BY s.version DESC LIMIT 1)")


def _where(filters: JobFilter) -> tuple[str, list]:
    clauses, params = ["j.tenant_id = ?"], [TENANT_ID]
    if filters.q:
        clauses.append("(j.title LIKE ? ESCAPE '\\' OR j.company LIKE ? ESCAPE '\\'"
                       " OR j.location LIKE ? ESCAPE '\\')")
        like = "%" + filters.q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        params += [like, like, like]
    if filters.remote:
        clauses.append("j.remote = ?")
        params.append(filters.remote)
    if filters.min_score is not None:
        clauses.append(f"{LATEST_SCORE} >= ?")
        params.append(filters.min_score)
    if filters.stage and filters.stage_status:
        clauses.append("EXISTS (SELECT 1 FROM job_stage_states t WHERE t.job_id = j.job_id"
                       " AND t.stage = ? AND t.status = ?)")
        params += [filters.stage, filters.stage_status]
    elif filters.stage_status:
        # Without a stage: any stage in that status (e.g. "failed" = needs attention).
        clauses.append("EXISTS (SELECT 1 FROM job_stage_states t WHERE t.job_id = j.job_id"
                       " AND t.status = ?)")
        params.append(filters.stage_status)
    if filters.user_status == UNMARKED:
        clauses.append("j.user_status IS NULL")
    elif filters.user_status:
        clauses.append("j.user_status = ?")
        params.append(filters.user_status)
    return " AND ".join(clauses), params


async def list_jobs(db: Database, filters: JobFilter, *, sort: SortKey, descending: bool,
                    limit: int, offset: int) -> tuple[int, list[dict]]:
    where, params = _where(filters)
    total = (await db.fetchone(f"SELECT COUNT(*) FROM jobs j WHERE {where}", params))[0]
    direction = "DESC" if descending else "ASC"
    rows = await db.fetchall(
        f"SELECT j.job_id, j.url, j.title, j.company, j.location, j.remote, j.salary_min,"
        f" j.salary_max, j.salary_currency, j.posted_at, j.first_seen_at, j.user_status,"
        f" {LATEST_SCORE} AS score, {LATEST_LEDGER} AS ledger_json,"
        f" (SELECT json_group_object(t.stage, t.status) FROM job_stage_states t"
        f"   WHERE t.job_id = j.job_id) AS stages_json"
        f" FROM jobs j WHERE {where}"
        f" ORDER BY {SORT_SQL[sort]} IS NULL, {SORT_SQL[sort]} {direction}, j.job_id"
        f" LIMIT ? OFFSET ?",
        [*params, limit, offset],
    )
    items = []
    for row in rows:
        item = dict(row)
        item["stages"] = json.loads(item.pop("stages_json") or "{}")
        ledger = item.pop("ledger_json")
        item["ledger"] = json.loads(ledger) if ledger else None
        items.append(item)
    return int(total), items


async def job_detail(db: Database, job_id: str) -> dict | None:
    row = await db.fetchone("SELECT * FROM jobs WHERE tenant_id = ? AND job_id = ?",
                            (TENANT_ID, job_id))
    if row is None:
        return None
    async with db.read_snapshot() as conn:
        stage_rows = await read_rows(conn, job_id)
        enrichment = await materials.read_enrichment(conn, job_id)
        score = await materials.latest_score(conn, job_id)
        resume = await materials.latest_material(conn, job_id, "resume")
        letter = await materials.latest_material(conn, job_id, "cover_letter")
        kept = {kind: await materials.kept_claims(conn, job_id, kind)
                for kind in ("resume", "cover_letter")}
        artifacts = await materials.latest_artifacts(conn, job_id)
        rejections = await materials.rejections(conn, job_id)
    detail = dict(row)
    detail["tags"] = json.loads(detail.pop("tags_json") or "[]")
    detail.update(
        stages=[vars(stage_row) for stage_row in stage_rows.values()],
        enrichment=vars(enrichment) if enrichment else None,
        score=vars(score) if score else None,
        resume={"generation": resume[0], "content": resume[1],
                "kept_claims": kept["resume"]} if resume else None,
        cover_letter={"generation": letter[0], "content": letter[1],
                      "kept_claims": kept["cover_letter"]} if letter else None,
        artifacts=artifacts,
        ats_check=materials.resume_ats_check(artifacts),
        material_rejections=rejections,
    )
    return detail
