"""Apply activities: claim, execute one job's apply, and the run lifecycle.

Claiming re-reads ``apply_approval_required``, ``min_fit_score`` and
``apply_concurrency`` every time. Executing never submits a browser form: it checks the
page for challenges (fail closed) and parks a packet for manual completion. Email goes
out only through the user's SMTP account, only with an exact approval, and only once:
the submit intent is committed before the SMTP conversation starts, and a retry that
finds it does not send again."""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.apply.challenge import detect_challenge
from backend.apply.email_sender import (
    Application,
    SmtpSendError,
    application_body,
    application_subject,
    send_shielded,
)
from backend.apply.packet import ApplyPacket, approval_matches, build_packet
from backend.config import AppPaths, AppSettings, load_settings
from backend.domain import events as ev
from backend.domain.apply_targets import ApplyTarget, classify_target
from backend.domain.model import CamelModel
from backend.domain.profile import CandidateProfile
from backend.faults import fault_point
from backend.pipeline.access_grants import user_chosen_origins
from backend.pipeline.enrich import USER_AGENT
from backend.projections.apply_runs import read_state
from backend.secrets.store import SecretStore
from backend.sources.net_guard import AddressPolicy, PrivateAddressRefused, guarded_client
from backend.sources.page_fetch import PAGE_DEADLINE_S
from backend.store import applications
from backend.store import apply as store
from backend.store.db import Database
from backend.store.profile import read_profile
from backend.temporal.activities.heartbeating import heartbeating
from backend.temporal.activities.lifecycle import record_run_lifecycle
from backend.temporal.contracts import RunRef, WorkflowLifecycleInput

MAX_PAGE_BYTES = 2_000_000


class ClaimInput(CamelModel):
    run: RunRef
    poll: int = 0
    job_key: str | None = None


class ClaimResult(CamelModel):
    job_ids: list[str]


class ExecuteInput(CamelModel):
    run: RunRef
    job_id: str


class FailClaimInput(CamelModel):
    run: RunRef
    job_id: str
    error_code: str


class ApplyOutcome(CamelModel):
    job_id: str
    status: str
    code: str | None = None


@dataclass
class ApplyFacts:
    job: store.PreparedJob
    profile: CandidateProfile | None
    approval: store.Approval | None
    settings: AppSettings

    @property
    def target(self) -> ApplyTarget:
        return classify_target(self.job.apply_url, self.job.description_html)


class ApplyActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths

    # -- claim -----------------------------------------------------------------------------

    @activity.defn(name="claim_apply_jobs")
    async def claim_apply_jobs(self, input: ClaimInput) -> ClaimResult:
        settings = load_settings(self._paths)  # re-read at every claim, as the spec asks
        async with self._db.transaction() as conn:
            job_ids = await store.claim_jobs(
                conn, workflow_id=input.run.workflow_id, run_id=input.run.run_id,
                poll=input.poll, limit=1 if input.job_key else settings.apply_concurrency,
                approval_required=settings.apply_approval_required,
                min_fit_score=settings.min_fit_score, job_id=input.job_key)
        return ClaimResult(job_ids=job_ids)

    # -- execute ---------------------------------------------------------------------------

    @activity.defn(name="execute_apply")
    async def execute_apply(self, input: ExecuteInput) -> ApplyOutcome:
        async with heartbeating():
            return await self._execute(input)

    async def _execute(self, input: ExecuteInput) -> ApplyOutcome:
        async with self._db.transaction() as conn:
            state = await read_state(conn, input.job_id)
            if state is None or state.status != "in_progress" or state.run_id != input.run.run_id:
                # Already settled by this run's earlier attempt, or never ours.
                return ApplyOutcome(job_id=input.job_id,
                                    status=state.status if state else "unknown", code="not_owned")
            facts = await self._facts(conn, input.job_id)
        target = facts.target
        if target.kind == "unknown":
            return await self._fail(input, "apply_target_unknown", retryable=False)
        if not _exists(facts.job.resume_pdf) or not _exists(facts.job.cover_pdf):
            return await self._fail(input, "apply_materials_missing", retryable=False)
        packet = build_packet(target, resume_pdf=facts.job.resume_pdf,
                              cover_letter_pdf=facts.job.cover_pdf, profile=facts.profile)
        if target.kind == "browser_form":
            return await self._browser_form(input, facts, target, packet)
        return await self._email(input, facts, target, packet)

    async def _facts(self, conn, job_id: str) -> ApplyFacts:
        jobs = await store.prepared_jobs(conn, min_fit_score=0, job_id=job_id)
        if not jobs:
            raise ApplicationError("unknown job", type="missing_input", non_retryable=True)
        profile = await read_profile(conn)
        return ApplyFacts(job=jobs[0], profile=profile[1] if profile else None,
                          approval=await store.read_approval(conn, job_id),
                          settings=load_settings(self._paths))

    async def _browser_form(self, input: ExecuteInput, facts: ApplyFacts, target: ApplyTarget,
                            packet: ApplyPacket) -> ApplyOutcome:
        try:
            status, headers, html = await _fetch_page(
                target.url or "", user_chosen_origins(facts.settings))
        except PrivateAddressRefused:
            return await self._fail(input, "apply_target_private", retryable=False)
        except (httpx.HTTPError, TimeoutError):
            return await self._fail(input, "apply_target_unreachable", retryable=True)
        if detect_challenge(html, status=status, headers=headers) is not None:
            return await self._fail(input, "apply_challenge_detected", retryable=False)
        if status >= 400:
            return await self._fail(input, "apply_target_unreachable", retryable=True)
        # Never a final browser submission: the user completes the form and marks applied.
        return await self._park(input, target, packet, dry_run=facts.settings.apply_dry_run)

    async def _email(self, input: ExecuteInput, facts: ApplyFacts, target: ApplyTarget,
                     packet: ApplyPacket) -> ApplyOutcome:
        approval = facts.approval
        if approval is None or not approval_matches(packet, target, recipient=approval.recipient,
                                                    attachments=approval.attachments):
            reason = "email_requires_approval" if approval is None else "approval_mismatch"
            return await self._await_approval(input, reason)
        if facts.settings.apply_dry_run:
            return await self._park(input, target, packet, dry_run=True)
        async with self._db.transaction() as conn:
            intent = await store.read_intent(conn, input.job_id)
        if intent is not None and intent.status == "sent":
            return await self._submitted(input, intent.recipient, intent.message_id or "")
        if intent is not None:
            return await self._fail(input, "submit_outcome_unknown", retryable=False)
        smtp = facts.settings.smtp
        if not smtp.configured:
            return await self._fail(input, "smtp_not_configured", retryable=False)
        password = SecretStore(self._paths).get(smtp.password_secret) if smtp.password_secret \
            else None
        async with self._db.transaction() as conn:
            if not await self._still_owned(conn, input):
                return ApplyOutcome(job_id=input.job_id, status="released", code="not_owned")
            intent = await store.create_intent(
                conn, job_id=input.job_id, workflow_id=input.run.workflow_id,
                run_id=input.run.run_id, recipient=target.recipient or "",
                attachments=packet.attachments)
        fault_point(self._paths, "apply-after-submit-intent")
        application = Application(
            recipient=target.recipient or "",
            subject=application_subject(facts.job.title, facts.job.company),
            body=application_body(candidate=facts.profile.display_name() if facts.profile
                                  else "", title=facts.job.title, company=facts.job.company),
            attachments=packet.attachments, intent_key=intent.intent_key)
        try:
            message_id = await send_shielded(
                smtp, password, application,
                record_late=lambda send: self._record_send_after_cancel(
                    input, send, application.recipient))
        except SmtpSendError as error:
            return await self._send_failed(input, error)
        fault_point(self._paths, "apply-after-smtp-send")
        return await self._submitted(input, application.recipient, message_id)

    async def _record_send_after_cancel(self, input: ExecuteInput, send: asyncio.Future,
                                        recipient: str) -> None:
        """Canceled mid-send: wait for the SMTP conversation to end and record its outcome,
        so a sent email is known as sent."""
        try:
            message_id = await send
        except SmtpSendError as error:
            await self._send_failed(input, error)
            return
        await self._submitted(input, recipient, message_id)

    async def _send_failed(self, input: ExecuteInput, error: SmtpSendError) -> ApplyOutcome:
        if error.maybe_delivered:
            return await self._fail(input, "submit_outcome_unknown", retryable=False)
        async with self._db.transaction() as conn:
            await store.void_intent(conn, input.job_id)
        return await self._fail(input, error.code, retryable=error.code == "smtp_unavailable")

    # -- settling --------------------------------------------------------------------------

    async def _still_owned(self, conn, input: ExecuteInput) -> bool:
        state = await read_state(conn, input.job_id)
        return state is not None and state.status == "in_progress" \
            and state.run_id == input.run.run_id

    async def _settle(self, input: ExecuteInput, event: ev.DomainEvent, status: str,
                      code: str | None = None, *, user_applied: bool = False,
                      before=None) -> ApplyOutcome:
        async with self._db.transaction() as conn:
            if not await self._still_owned(conn, input):
                return ApplyOutcome(job_id=input.job_id, status="released", code="not_owned")
            if before is not None:
                await before(conn)
            # Ownership, checked in this transaction, makes the settle happen once per claim.
            await store.record_apply_event(conn, event)
            if user_applied:
                await mark_user_applied(conn, input.job_id, load_settings(self._paths),
                                        via="email", workflow_id=input.run.workflow_id,
                                        run_id=input.run.run_id)
        return ApplyOutcome(job_id=input.job_id, status=status, code=code)

    def _ids(self, input: ExecuteInput) -> dict:
        return {"job_id": input.job_id, "workflow_id": input.run.workflow_id,
                "run_id": input.run.run_id}

    async def _fail(self, input: ExecuteInput, code: str, *, retryable: bool) -> ApplyOutcome:
        return await self._settle(input, ev.ApplyFailed(**self._ids(input), error_code=code,
                                                        retryable=retryable), "failed", code)

    async def _park(self, input: ExecuteInput, target: ApplyTarget, packet: ApplyPacket, *,
                    dry_run: bool) -> ApplyOutcome:
        event = ev.ApplyPacketReady(
            **self._ids(input), target_kind=target.kind, target_url=packet.target_url,
            resume_pdf=packet.resume_pdf, cover_letter_pdf=packet.cover_letter_pdf,
            answers=packet.answers, dry_run=dry_run)
        return await self._settle(input, event, "awaiting_manual_completion",
                                  "dry_run" if dry_run else None)

    async def _await_approval(self, input: ExecuteInput, reason: str) -> ApplyOutcome:
        async def drop(conn) -> None:
            await store.drop_approval(conn, input.job_id)

        return await self._settle(input, ev.ApplyAwaitingApproval(**self._ids(input),
                                                                  reason=reason),
                                  "awaiting_approval", reason, before=drop)

    async def _submitted(self, input: ExecuteInput, recipient: str,
                         message_id: str) -> ApplyOutcome:
        async def sent(conn) -> None:
            await store.mark_intent_sent(conn, input.job_id, message_id)

        event = ev.ApplySubmitted(**self._ids(input), channel="email", recipient=recipient,
                                  message_id=message_id)
        return await self._settle(input, event, "applied", user_applied=True, before=sent)

    @activity.defn(name="fail_apply_claim")
    async def fail_apply_claim(self, input: FailClaimInput) -> ApplyOutcome:
        """The execute activity gave up: the job's claim ends as failed (if still held)."""
        code = input.error_code if _bounded(input.error_code) else "apply_failed"
        return await self._fail(ExecuteInput(run=input.run, job_id=input.job_id), code,
                                retryable=True)

    # -- lifecycle -------------------------------------------------------------------------

    @activity.defn(name="record_apply_lifecycle")
    async def record_apply_lifecycle(self, input: WorkflowLifecycleInput) -> None:
        async def release_claims(conn, input: WorkflowLifecycleInput) -> None:
            await store.release_run_claims(conn, workflow_id=input.run.workflow_id,
                                           run_id=input.run.run_id)
        await record_run_lifecycle(self._db, input, release_claims)


async def mark_user_applied(conn, job_id: str, settings: AppSettings, *, via: str,
                            workflow_id: str | None = None, run_id: str | None = None) -> None:
    """The job's own user status follows an application, so the Jobs view agrees, and the
    job appears on the application board."""
    await applications.set_user_status(conn, job_id, "applied", via=via,
                                       policy=applications.policy_from_settings(settings),
                                       workflow_id=workflow_id, run_id=run_id)


def _bounded(code: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}", code))


def _exists(path: str | None) -> bool:
    return bool(path) and Path(path).is_file()


async def _fetch_page(url: str, policy: AddressPolicy) -> tuple[int, dict, str]:
    """The application page, within PAGE_DEADLINE_S overall; the link comes from the posting,
    so the private-address guard checks every hop."""
    async with (
        asyncio.timeout(PAGE_DEADLINE_S),
        guarded_client(policy, timeout=20, follow_redirects=True, max_redirects=5,
                       headers={"User-Agent": USER_AGENT}) as client,
        client.stream("GET", url) as response,
    ):
        body = b""
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_PAGE_BYTES:
                break
        return response.status_code, dict(response.headers), body.decode(
            response.encoding or "utf-8", errors="replace")
