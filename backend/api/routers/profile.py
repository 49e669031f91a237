"""The candidate profile every stage measures against.

GET / PUT /v1/profile read and save it. ``POST /v1/profile/import`` turns a résumé file
(or, with ``sample=true``, the bundled sample résumé, through the same path) into a
*draft* for the user to review: it saves nothing. ``GET /v1/profile/export`` gives the
résumé back as a JSON Resume document.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, BackgroundTasks, Depends, Query, Request
from pydantic import Field
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from backend.api.errors import ApiError, error_responses
from backend.api.security import require_token
from backend.domain.model import CamelModel
from backend.domain.profile import CandidateProfile
from backend.faults import fault_point
from backend.profile_import import MAX_BYTES
from backend.profile_import.confidence import DraftWarning, SectionConfidence, assess_import
from backend.profile_import.draft import draft_with_suggestions, sample_resume_file
from backend.profile_import.errors import ResumeImportError
from backend.profile_import.isolated import import_in_child
from backend.profile_import.preferences import PreferenceSuggestions
from backend.store.profile import read_profile, save_profile

router = APIRouter(tags=["profile"], dependencies=[Depends(require_token)])


class ProfileEnvelope(CamelModel):
    revision: int
    changed: bool | None = None
    profile: CandidateProfile


class ImportSource(CamelModel):
    file_name: str | None
    format: str
    pages: int | None
    characters: int


class ImportDraft(CamelModel):
    profile: CandidateProfile
    unplaced: list[str]
    source: ImportSource
    sections: list[SectionConfidence] = Field(
        default_factory=list, description="How sure the reading is, per section (contact, "
        "work, education, skills, languages): a level and a short note")
    warnings: list[DraftWarning] = Field(
        default_factory=list, description="What looks wrong with the draft, each with what "
        "to do about it; empty when nothing does")
    suggested_preferences: PreferenceSuggestions = Field(
        default_factory=PreferenceSuggestions, description="The preference values the draft "
        "took from the résumé (its Objective / Looking for part, else the latest title and "
        "city); a preference the user had already saved is kept and not listed")


async def _stored_profile(request: Request) -> tuple[int, CandidateProfile] | None:
    async with request.app.state.context.db.transaction() as conn:
        return await read_profile(conn)


@router.get("/v1/profile", response_model=ProfileEnvelope, responses=error_responses(401))
async def get_profile(request: Request) -> ProfileEnvelope:
    stored = await _stored_profile(request)
    if stored is None:
        return ProfileEnvelope(revision=0, profile=CandidateProfile())
    return ProfileEnvelope(revision=stored[0], profile=stored[1])


@router.put("/v1/profile", response_model=ProfileEnvelope, responses=error_responses(401, 422))
async def put_profile(profile: CandidateProfile, request: Request,
                      background: BackgroundTasks) -> ProfileEnvelope:
    """A normalized no-op save keeps the revision and records nothing. A genuine change
    commits its outbox row with the revision; every save then drains the outbox (after
    the response: the drain may await an older continuation)."""
    context = request.app.state.context
    async with context.db.transaction() as conn:
        revision, changed = await save_profile(conn, profile)
    background.add_task(_drain_after_save, request.app)
    return ProfileEnvelope(revision=revision, changed=changed, profile=profile)


async def _drain_after_save(app) -> None:
    # A crash here (committed, not dispatched) is what the startup drain recovers.
    fault_point(app.state.context.paths, "profile-outbox-after-commit")
    app.state.profile_drainer.kick()


# The form is read by the route (not by a File parameter) so the document can say exactly
# what it takes: one optional part named ``file``, a file or its text, other parts ignored.
# FastAPI would declare the part nullable and refuse a text part the document allowed.
RESUME_FORM = {"requestBody": {"required": False, "content": {"multipart/form-data": {
    "schema": {"type": "object", "title": "ResumeUpload", "properties": {"file": {
        "type": "string", "format": "binary",
        "description": "PDF, DOCX, text, Markdown or JSON Resume (a text part is read "
        "as the résumé's text); not needed with sample=true"}}}}}}}


def _has_body(request: Request) -> bool:
    length = request.headers.get("content-length")
    return (length is not None and length != "0") or "transfer-encoding" in request.headers


async def _uploaded_resume(request: Request) -> tuple[bytes, str | None, str | None] | None:
    """(bytes, file name, content type) of the ``file`` part, or None without one. A part
    that cannot be parsed is a 400 ``malformed_json`` (the one code for undecodable bodies)."""
    # Text parts may be as large as a résumé file; the import itself refuses more.
    async with request.form(max_files=1, max_fields=100, max_part_size=MAX_BYTES + 1) as form:
        part = form.get("file")
        if isinstance(part, UploadFile):
            return await part.read(MAX_BYTES + 1), part.filename, part.content_type
        if isinstance(part, str):
            return part.encode("utf-8"), None, None
        return None


@router.post("/v1/profile/import", response_model=ImportDraft, openapi_extra=RESUME_FORM,
             responses=error_responses(400, 401, 413, 415, 422))
async def import_profile(
    request: Request,
    sample: bool = Query(default=False, description="Import the bundled sample résumé instead"),
) -> ImportDraft:
    """A draft for review; nothing is saved. The user's current preferences are kept and
    empty ones are suggested from the résumé."""
    # A body is read (and refused when undecodable) even with sample=true: what the
    # document refuses, the route refuses.
    upload = await _uploaded_resume(request) if _has_body(request) else None
    if sample and upload is not None:
        raise ApiError(400, "file_with_sample",
                       "Import either your résumé file or the sample résumé, not both.")
    if sample:
        path = sample_resume_file()
        data, file_name, content_type = path.read_bytes(), path.name, "text/markdown"
    elif upload is None:
        raise ApiError(400, "file_required", "Choose a résumé file to import.")
    else:
        data, file_name, content_type = upload
    try:
        # In a child process with a memory cap and a deadline: the file is untrusted.
        result = await run_in_threadpool(import_in_child, data, file_name=file_name,
                                         content_type=content_type)
    except ResumeImportError as error:
        raise ApiError(error.http_status, error.code, str(error)) from None
    stored = await _stored_profile(request)
    draft, suggested = draft_with_suggestions(result, current=stored[1] if stored else None,
                                              file_name=file_name, sample=sample)
    assessment = assess_import(result)
    return ImportDraft(profile=draft, unplaced=result.unplaced, source=ImportSource(
        file_name=file_name, format=result.format, pages=result.pages,
        characters=result.characters), sections=assessment.sections,
        warnings=assessment.warnings, suggested_preferences=suggested)


@router.get("/v1/profile/export", responses=error_responses(401, 404, 422))
async def export_profile(
    request: Request, format: Literal["jsonresume"] = Query(default="jsonresume"),
) -> dict[str, Any]:
    stored = await _stored_profile(request)
    if stored is None:
        raise ApiError(404, "profile_missing", "No profile is saved yet.")
    return stored[1].resume.export()
