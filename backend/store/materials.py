"""Canonical per-job results: enrichment, scores, materials and rendered artifacts."""

from __future__ import annotations

import json
from dataclasses import dataclass

import aiosqlite

from backend.config import TENANT_ID
from backend.domain import events as ev
from backend.domain.clock import utc_now_iso
from backend.store.events import append_event
from backend.store.profile import profile_revision as current_profile_revision


@dataclass(frozen=True)
class EnrichmentRow:
    current_status: str
    description_text: str | None
    description_html: str | None
    word_count: int | None
    confidence: str | None
    low_confidence_reason: str | None
    origin: str | None
    blocked_reason: str | None


async def read_enrichment(conn: aiosqlite.Connection, job_id: str) -> EnrichmentRow | None:
    cursor = await conn.execute(
        "SELECT current_status, description_text, description_html, word_count, confidence,"
        " low_confidence_reason, origin, blocked_reason FROM job_enrichments WHERE job_id = ?",
        (job_id,),
    )
    row = await cursor.fetchone()
    return EnrichmentRow(*row) if row else None


async def write_enrichment(conn: aiosqlite.Connection, job_id: str, row: EnrichmentRow) -> None:
    await conn.execute(
        "INSERT INTO job_enrichments (job_id, tenant_id, current_status, description_text,"
        " description_html, word_count, confidence, low_confidence_reason, origin,"
        " blocked_reason, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (job_id) DO UPDATE SET current_status = excluded.current_status,"
        " description_text = excluded.description_text,"
        " description_html = excluded.description_html, word_count = excluded.word_count,"
        " confidence = excluded.confidence,"
        " low_confidence_reason = excluded.low_confidence_reason, origin = excluded.origin,"
        " blocked_reason = excluded.blocked_reason, updated_at = excluded.updated_at",
        (job_id, TENANT_ID, row.current_status, row.description_text, row.description_html,
         row.word_count, row.confidence, row.low_confidence_reason, row.origin,
         row.blocked_reason, utc_now_iso()),
    )


@dataclass(frozen=True)
class ScoreRow:
    version: int
    score: int
    rationale: str
    matched: list[str]
    missing: list[str]
    provider: str
    model: str
    profile_revision: int
    created_at: str
    ledger: dict | None = None  # the FitLedger JSON; None for scores made before it


async def latest_score(conn: aiosqlite.Connection, job_id: str) -> ScoreRow | None:
    cursor = await conn.execute(
        "SELECT version, score, rationale, matched_json, missing_json, provider, model,"
        " profile_revision, created_at, ledger_json FROM job_scores WHERE job_id = ?"
        " ORDER BY version DESC LIMIT 1",
        (job_id,),
    )
    row = await cursor.fetchone()
    if row is None:
        return None
    return ScoreRow(row[0], row[1], row[2], json.loads(row[3]), json.loads(row[4]), *row[5:9],
                    ledger=json.loads(row[9]) if row[9] else None)


async def insert_score(conn, job_id: str, *, version: int, score: int, rationale: str,
                       matched: list[str], missing: list[str], provider: str, model: str,
                       profile_revision: int, workflow_id: str, run_id: str,
                       ledger: dict | None = None) -> None:
    await conn.execute(
        "INSERT INTO job_scores (tenant_id, job_id, version, score, rationale, matched_json,"
        " missing_json, provider, model, profile_revision, workflow_id, run_id, created_at,"
        " ledger_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (TENANT_ID, job_id, version, score, rationale, json.dumps(matched), json.dumps(missing),
         provider, model, profile_revision, workflow_id, run_id, utc_now_iso(),
         json.dumps(ledger) if ledger is not None else None),
    )


async def latest_material(conn, job_id: str, kind: str) -> tuple[int, dict] | None:
    cursor = await conn.execute(
        "SELECT generation, content_json FROM job_materials WHERE job_id = ? AND kind = ?"
        " ORDER BY generation DESC LIMIT 1",
        (job_id, kind),
    )
    row = await cursor.fetchone()
    return (int(row[0]), json.loads(row[1])) if row else None


async def insert_material(conn, job_id: str, *, kind: str, generation: int, content: dict,
                          provider: str, model: str, profile_revision: int, workflow_id: str,
                          run_id: str) -> None:
    await conn.execute(
        "INSERT INTO job_materials (tenant_id, job_id, kind, generation, content_json, provider,"
        " model, profile_revision, workflow_id, run_id, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (TENANT_ID, job_id, kind, generation, json.dumps(content), provider, model,
         profile_revision, workflow_id, run_id, utc_now_iso()),
    )


PDF_KINDS = ("resume_pdf", "cover_letter_pdf")
RESUME_FILE_KINDS = ("resume_pdf", "resume_docx")  # the files the ATS check reads


async def insert_artifact(conn, job_id: str, *, kind: str, generation: int, path: str,
                          size: int, pages: int, sha256: str, ats_check: dict | None = None) -> None:
    await conn.execute(
        "INSERT INTO job_artifacts (tenant_id, job_id, kind, generation, path, bytes, pages,"
        " sha256, ats_check_json, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (job_id, kind, generation) DO UPDATE SET path = excluded.path,"
        " bytes = excluded.bytes, pages = excluded.pages, sha256 = excluded.sha256,"
        " ats_check_json = excluded.ats_check_json",
        (TENANT_ID, job_id, kind, generation, path, size, pages, sha256,
         json.dumps(ats_check) if ats_check is not None else None, utc_now_iso()),
    )


async def latest_artifacts(conn, job_id: str) -> list[dict]:
    """The latest file of each kind (PDFs and Word files); a résumé file with its
    ``atsCheck`` (None when it was rendered before the check)."""
    cursor = await conn.execute(
        "SELECT kind, generation, path, bytes, pages, sha256, created_at, ats_check_json"
        " FROM job_artifacts a"
        " WHERE job_id = ? AND generation = (SELECT MAX(generation) FROM job_artifacts b"
        "   WHERE b.job_id = a.job_id AND b.kind = a.kind) ORDER BY kind",
        (job_id,),
    )
    names = ("kind", "generation", "path", "bytes", "pages", "sha256", "createdAt")
    return [{**dict(zip(names, row[:-1], strict=True)),
             "atsCheck": json.loads(row[-1]) if row[-1] else None}
            for row in await cursor.fetchall()]


def resume_ats_check(artifacts: list[dict]) -> dict | None:
    """The check of the latest résumé's files together: ``{ok, missing}``; None when no
    file of it was checked."""
    resume_files = [a for a in artifacts if a["kind"] in RESUME_FILE_KINDS]
    newest = max((a["generation"] for a in resume_files), default=None)
    checks = [a["atsCheck"] for a in resume_files
              if a["generation"] == newest and a.get("atsCheck") is not None]
    if not checks:
        return None
    missing = list(dict.fromkeys(item for check in checks for item in check.get("missing") or []))
    return {"ok": all(check.get("ok") for check in checks) and not missing, "missing": missing}


MATERIAL_STAGE = {"resume": "tailor", "cover_letter": "cover"}
USER_PROVIDER = "user"


async def save_edited_material(conn, job_id: str, *, kind: str, content: dict,
                               profile_revision: int, kept_claims: list[dict] | None = None) -> int:
    """The user's own version as a new generation (never overwritten by a re-tailor unless
    they ask). The stage's result version moves with it, so the next generation a stage
    writes comes after the edit."""
    stage = MATERIAL_STAGE[kind]
    cursor = await conn.execute(
        "SELECT MAX(g) FROM (SELECT MAX(generation) AS g FROM job_materials WHERE job_id = ?"
        " AND kind = ? UNION ALL SELECT result_version FROM job_stage_states WHERE job_id = ?"
        " AND stage = ?)", (job_id, kind, job_id, stage))
    generation = int((await cursor.fetchone())[0] or 0) + 1
    await insert_material(conn, job_id, kind=kind, generation=generation, content=content,
                          provider=USER_PROVIDER, model="edit", profile_revision=profile_revision,
                          workflow_id=None, run_id=None)
    if kept_claims:
        await conn.execute(
            "UPDATE job_materials SET kept_claims_json = ? WHERE job_id = ? AND kind = ?"
            " AND generation = ?", (json.dumps(kept_claims), job_id, kind, generation))
    await conn.execute(
        "UPDATE job_stage_states SET result_version = ? WHERE job_id = ? AND stage = ?",
        (generation, job_id, stage))
    return generation


async def kept_claims(conn, job_id: str, kind: str) -> list[dict]:
    """The claims the user kept in the latest generation of ``kind`` (``[]`` for none)."""
    cursor = await conn.execute(
        "SELECT kept_claims_json FROM job_materials WHERE job_id = ? AND kind = ?"
        " ORDER BY generation DESC LIMIT 1", (job_id, kind))
    row = await cursor.fetchone()
    return json.loads(row[0]) if row and row[0] else []


async def has_edits(conn, job_id: str) -> bool:
    """Is the latest résumé or letter one the user wrote?"""
    cursor = await conn.execute(
        "SELECT 1 FROM job_materials m WHERE m.job_id = ? AND m.provider = ? AND m.generation ="
        " (SELECT MAX(x.generation) FROM job_materials x WHERE x.job_id = m.job_id"
        "  AND x.kind = m.kind) LIMIT 1", (job_id, USER_PROVIDER))
    return await cursor.fetchone() is not None


async def record_rejection(conn, job_id: str, *, kind: str, error_code: str, claim: str) -> None:
    await conn.execute(
        "INSERT INTO material_rejections (tenant_id, job_id, kind, error_code, claim, created_at)"
        " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id, kind) DO UPDATE SET"
        " error_code = excluded.error_code, claim = excluded.claim, created_at = excluded.created_at",
        (TENANT_ID, job_id, kind, error_code, claim[:600], utc_now_iso()))


async def clear_rejection(conn, job_id: str, kind: str) -> None:
    await conn.execute("DELETE FROM material_rejections WHERE job_id = ? AND kind = ?",
                       (job_id, kind))


async def rejections(conn, job_id: str) -> list[dict]:
    cursor = await conn.execute(
        "SELECT kind, error_code, claim, created_at FROM material_rejections WHERE job_id = ?"
        " ORDER BY kind", (job_id,))
    names = ("kind", "errorCode", "claim", "createdAt")
    return [dict(zip(names, row, strict=True)) for row in await cursor.fetchall()]


# --- a stage's result and its event, written together in the caller's transaction -------

MATERIAL_EVENTS = {"resume": ev.ResumeApproved, "cover_letter": ev.CoverLetterGenerated}


@dataclass(frozen=True)
class RunIds:
    """The run that recorded a result (both None for a user's own action)."""

    workflow_id: str | None = None
    run_id: str | None = None

    def as_kwargs(self) -> dict[str, str | None]:
        return {"workflow_id": self.workflow_id, "run_id": self.run_id}


async def record_enriched(conn, job_id: str, row: EnrichmentRow, run: RunIds) -> None:
    await write_enrichment(conn, job_id, row)
    await append_event(conn, ev.JobEnriched(
        job_id=job_id, origin=row.origin, word_count=row.word_count,
        confidence=row.confidence, low_confidence_reason=row.low_confidence_reason,
        **run.as_kwargs()), job_id=job_id, **run.as_kwargs())


async def record_enrichment_blocked(conn, job_id: str, code: str, run: RunIds) -> None:
    await write_enrichment(conn, job_id, EnrichmentRow(
        current_status="blocked", description_text=None, description_html=None,
        word_count=None, confidence=None, low_confidence_reason=None, origin=None,
        blocked_reason=code))
    await append_event(conn, ev.EnrichmentFailed(
        job_id=job_id, error_code=code, blocked=True, **run.as_kwargs()),
        job_id=job_id, **run.as_kwargs())


async def record_score(conn, job_id: str, run: RunIds, *, version: int, score: int,
                       rationale: str, matched: list[str], missing: list[str], provider: str,
                       model: str, profile_revision: int, ledger: dict | None) -> None:
    await insert_score(conn, job_id, version=version, score=score, rationale=rationale,
                       matched=matched, missing=missing, provider=provider, model=model,
                       profile_revision=profile_revision, ledger=ledger, **run.as_kwargs())
    await append_event(conn, ev.JobScored(
        job_id=job_id, score=score, rationale=rationale, version=version, provider=provider,
        model=model, **run.as_kwargs()), job_id=job_id, **run.as_kwargs())


async def record_material(conn, job_id: str, run: RunIds, *, kind: str, generation: int,
                          content: dict, provider: str, model: str,
                          profile_revision: int) -> None:
    """A written résumé or letter: a new generation, its old rejection cleared."""
    await insert_material(conn, job_id, kind=kind, generation=generation, content=content,
                          provider=provider, model=model, profile_revision=profile_revision,
                          **run.as_kwargs())
    await clear_rejection(conn, job_id, kind)
    await _material_event(conn, job_id, run, kind=kind, generation=generation,
                          provider=provider, model=model)


async def _material_event(conn, job_id: str, run: RunIds, *, kind: str, generation: int,
                          provider: str, model: str, kept_claims: list[str] | None = None) -> None:
    await append_event(conn, MATERIAL_EVENTS[kind](
        job_id=job_id, generation=generation, provider=provider, model=model,
        kept_claims=kept_claims or [], **run.as_kwargs()), job_id=job_id, **run.as_kwargs())


async def record_user_edit(db, job_id: str, *, kind: str, content: dict,
                           kept_claims: list[dict] | None = None) -> int:
    """The user's edit of the résumé or letter as a new generation, with its event, in one
    transaction; returns the generation. ``kept_claims`` (``{"claim", "why"}`` each): what
    the truthfulness gate named and the user chose to keep, recorded on the generation and
    in its event."""
    async with db.transaction() as conn:
        generation = await save_edited_material(
            conn, job_id, kind=kind, content=content,
            profile_revision=await current_profile_revision(conn), kept_claims=kept_claims)
        await clear_rejection(conn, job_id, kind)
        await _material_event(conn, job_id, RunIds(), kind=kind, generation=generation,
                              provider=USER_PROVIDER, model="edit",
                              kept_claims=[c["claim"] for c in kept_claims or []])
    return generation


async def record_artifact(conn, job_id: str, run: RunIds, *, kind: str, generation: int,
                          path: str, size: int, pages: int, sha256: str,
                          ats_check: dict | None = None) -> None:
    """A rendered file of a generation; a PDF with its ``PdfRendered`` event (the Word
    files rendered beside it need none of their own)."""
    await insert_artifact(conn, job_id, kind=kind, generation=generation, path=path,
                          size=size, pages=pages, sha256=sha256, ats_check=ats_check)
    if kind not in PDF_KINDS:
        return
    await append_event(conn, ev.PdfRendered(
        job_id=job_id, kind=kind, generation=generation, pages=pages, bytes=size,
        **run.as_kwargs()), job_id=job_id, **run.as_kwargs())


async def record_stage_failure_detail(conn, job_id: str, stage: str, error_code: str,
                                      run: RunIds) -> None:
    """The result-level fact of a stage that gave up, once per run: Enrich and Tailor
    have one; Score/Cover/PDF failures surface as StageFailed + WorkflowFailed only."""
    ids = run.as_kwargs()
    if stage == "enrich":
        event: ev.DomainEvent = ev.EnrichmentFailed(
            job_id=job_id, error_code=error_code, blocked=False, **ids)
    elif stage == "tailor":
        event = ev.ResumeFailed(job_id=job_id, error_code=error_code, **ids)
    else:
        return
    await append_event(conn, event, job_id=job_id, **ids,
                       dedupe_key=f"StageFailureDetail:{run.run_id}:{job_id}:{stage}")
