"""Which jobs' results are stale under the current policy, and which selected jobs exist.

A score is stale when it was computed against an older candidate-profile revision than the
saved one (the profile is the scoring policy's input: titles, skills, must-haves,
deal-breakers, salary floor). Tailored materials are stale the same way, and a job whose
Tailor was skipped as ``below_min_fit_score`` is current-policy work once its latest score
meets today's ``minFitScore``.

Only jobs the user has not marked (applied / skipped) and that nobody is preparing right
now are returned: a bulk policy action never races a running preparation.
"""

from __future__ import annotations

from backend.config import TENANT_ID
from backend.domain.stages import BELOW_MIN_FIT_SCORE
from backend.store.db import Database

# The latest score / resume of a job (the highest version / generation).
_LATEST_SCORE = ("sc.version = (SELECT MAX(x.version) FROM job_scores x"
                 " WHERE x.job_id = sc.job_id)")
_LATEST_RESUME = ("m.kind = 'resume' AND m.generation = (SELECT MAX(x.generation)"
                  " FROM job_materials x WHERE x.job_id = m.job_id AND x.kind = 'resume')")
# A job whose latest résumé or letter the user wrote is never re-tailored in bulk: only the
# user's own "Re-tailor" (after confirming) replaces their edits.
_NO_USER_EDITS = (
    "NOT EXISTS (SELECT 1 FROM job_materials u WHERE u.job_id = j.job_id AND u.provider = 'user'"
    " AND u.generation = (SELECT MAX(x.generation) FROM job_materials x"
    " WHERE x.job_id = u.job_id AND x.kind = u.kind))")
_IDLE_UNMARKED = (
    "j.tenant_id = ? AND j.user_status IS NULL AND NOT EXISTS (SELECT 1 FROM job_stage_states a"
    " WHERE a.job_id = j.job_id AND a.status IN ('queued', 'running'))")


async def stale_score_jobs(db: Database) -> list[str]:
    rows = await db.fetchall(
        "SELECT j.job_id FROM jobs j JOIN job_scores sc ON sc.job_id = j.job_id"
        " JOIN candidate_profiles p ON p.tenant_id = j.tenant_id"
        f" WHERE {_IDLE_UNMARKED} AND {_LATEST_SCORE} AND sc.profile_revision < p.revision"
        " ORDER BY j.job_id",
        (TENANT_ID,),
    )
    return [row[0] for row in rows]


_THRESHOLD_CLEARED = (
    "SELECT j.job_id FROM jobs j JOIN job_stage_states s ON s.job_id = j.job_id"
    " AND s.stage = 'tailor' AND s.status = 'skipped' AND s.blocked_reason = ?"
    " JOIN job_scores sc ON sc.job_id = j.job_id"
    f" WHERE {_IDLE_UNMARKED} AND {_LATEST_SCORE} AND sc.score >= ?")


# Tailor would run for the job (at or above the threshold, or prepared anyway): a job below
# it is not stale work, a re-tailor would only be skipped and leave it stale for ever.
_TAILOR_WOULD_RUN = (
    "(j.prepare_anyway_at IS NOT NULL OR (SELECT sc.score FROM job_scores sc"
    f" WHERE sc.job_id = j.job_id AND {_LATEST_SCORE}) >= ?)")


async def stale_material_jobs(db: Database, *, min_fit_score: int) -> list[str]:
    """Jobs whose tailored resume predates the saved profile and that Tailor would run for
    under the current threshold, plus jobs whose Tailor was skipped below the fit threshold
    but whose latest score now meets it."""
    rows = await db.fetchall(
        "SELECT j.job_id FROM jobs j JOIN job_materials m ON m.job_id = j.job_id"
        " JOIN candidate_profiles p ON p.tenant_id = j.tenant_id"
        f" WHERE {_IDLE_UNMARKED} AND {_LATEST_RESUME} AND m.profile_revision < p.revision"
        f" AND {_NO_USER_EDITS} AND {_TAILOR_WOULD_RUN} UNION {_THRESHOLD_CLEARED} ORDER BY 1",
        (TENANT_ID, min_fit_score, BELOW_MIN_FIT_SCORE, TENANT_ID, min_fit_score),
    )
    return [row[0] for row in rows]


async def threshold_cleared_jobs(db: Database, *, min_fit_score: int) -> list[str]:
    """Jobs skipped below an older, higher threshold that ``min_fit_score`` now clears."""
    rows = await db.fetchall(f"{_THRESHOLD_CLEARED} ORDER BY 1",
                             (BELOW_MIN_FIT_SCORE, TENANT_ID, min_fit_score))
    return [row[0] for row in rows]


# No preparation of the job has started since its Tailor was skipped: nothing was ever
# dispatched for the threshold that now clears it.
_NOT_DISPATCHED_SINCE_SKIP = (
    "NOT EXISTS (SELECT 1 FROM job_events w WHERE w.tenant_id = j.tenant_id"
    " AND w.job_id = j.job_id AND w.type = 'WorkflowStarted' AND w.workflow_id = 'prep-' || j.job_id"
    " AND w.id > (SELECT COALESCE(MAX(k.id), 0) FROM job_events k WHERE k.tenant_id = j.tenant_id"
    " AND k.job_id = j.job_id AND k.type = 'StageSkipped'"
    " AND json_extract(k.payload_json, '$.stage') = 'tailor'))")


async def undispatched_threshold_cleared_jobs(db: Database, *, min_fit_score: int) -> list[str]:
    """Threshold-cleared jobs (:func:`threshold_cleared_jobs`) no preparation has been
    started for since their Tailor was skipped: the work a lowered threshold implies that
    was never dispatched (the save died before it, or the job was busy at that moment)."""
    rows = await db.fetchall(f"{_THRESHOLD_CLEARED} AND {_NOT_DISPATCHED_SINCE_SKIP} ORDER BY 1",
                             (BELOW_MIN_FIT_SCORE, TENANT_ID, min_fit_score))
    return [row[0] for row in rows]


async def existing_jobs(db: Database, job_ids: list[str]) -> set[str]:
    if not job_ids:
        return set()
    marks = ", ".join("?" for _ in job_ids)
    rows = await db.fetchall(
        f"SELECT job_id FROM jobs WHERE tenant_id = ? AND job_id IN ({marks})",
        (TENANT_ID, *job_ids))
    return {row[0] for row in rows}


async def busy_jobs(db: Database, job_ids: list[str]) -> set[str]:
    """Of ``job_ids``, the ones with a stage queued or running right now."""
    if not job_ids:
        return set()
    marks = ", ".join("?" for _ in job_ids)
    rows = await db.fetchall(
        "SELECT DISTINCT job_id FROM job_stage_states WHERE tenant_id = ?"
        f" AND status IN ('queued', 'running') AND job_id IN ({marks})",
        (TENANT_ID, *job_ids))
    return {row[0] for row in rows}
