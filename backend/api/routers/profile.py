"""GET / PUT /v1/profile: the candidate profile every stage measures against."""

from __future__ import annotations

from fastapi import APIRouter, BackgroundTasks, Depends, Request

from backend.api.errors import error_responses
from backend.api.security import require_token
from backend.domain.model import CamelModel
from backend.domain.profile import CandidateProfile
from backend.runtime.faults import fault_point
from backend.store.profile import read_profile, save_profile

router = APIRouter(tags=["profile"], dependencies=[Depends(require_token)])


class ProfileEnvelope(CamelModel):
    revision: int
    changed: bool | None = None
    profile: CandidateProfile


@router.get("/v1/profile", response_model=ProfileEnvelope, responses=error_responses(401))
async def get_profile(request: Request) -> ProfileEnvelope:
    db = request.app.state.context.db
    async with db.transaction() as conn:
        stored = await read_profile(conn)
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
