"""Sending one follow-up email through the user's own SMTP account, at most once.

The API committed the round's row ('requested', with the gated text) before the workflow
started. Here the row turns 'sending' in its own transaction before the SMTP conversation
begins (Apply's submit-intent rule): an attempt that finds 'sending' never sends again —
the earlier attempt may have delivered it — and the outcome stays unknown, never guessed.
Nothing reached the server (the connection failed): the round goes back to 'requested'
and Temporal retries."""

from __future__ import annotations

from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.apply.email_sender import Application, SmtpSendError, send_shielded
from backend.config import AppPaths, load_settings
from backend.domain.model import CamelModel
from backend.faults import fault_point
from backend.secrets.store import SecretStore
from backend.store import applications as store
from backend.store.db import Database
from backend.temporal.activities.heartbeating import heartbeating
from backend.temporal.activities.lifecycle import record_run_lifecycle
from backend.temporal.contracts import RunRef, WorkflowLifecycleInput

UNKNOWN = "submit_outcome_unknown"


class FollowUpEmailInput(CamelModel):
    run: RunRef
    job_id: str
    round: int


class FollowUpEmailOutcome(CamelModel):
    status: str  # sent | failed
    code: str | None = None


class FailFollowUpInput(CamelModel):
    run: RunRef
    job_id: str
    round: int
    error_code: str


class FollowUpActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths

    @activity.defn(name="send_follow_up_email")
    async def send_follow_up_email(self, input: FollowUpEmailInput) -> FollowUpEmailOutcome:
        async with heartbeating():
            return await self._send(input)

    async def _send(self, input: FollowUpEmailInput) -> FollowUpEmailOutcome:
        async with self._db.transaction() as conn:
            email = await store.read_follow_up_email(conn, input.job_id, input.round)
        if email is None:
            raise ApplicationError("no such follow-up email", type="missing_input",
                                   non_retryable=True)
        if email.status == "sent":
            return FollowUpEmailOutcome(status="sent")
        if email.status == "failed":
            return FollowUpEmailOutcome(status="failed", code=email.error_code)
        if email.status == "sending":
            # An earlier attempt began the conversation and never recorded its end.
            return await self._failed(email, input, UNKNOWN)
        smtp = load_settings(self._paths).smtp
        if not smtp.configured:
            return await self._failed(email, input, "smtp_not_configured")
        password = SecretStore(self._paths).get(smtp.password_secret) \
            if smtp.password_secret else None
        async with self._db.transaction() as conn:
            if not await store.begin_sending(conn, email, input.run.run_id):
                return FollowUpEmailOutcome(status="failed", code=UNKNOWN)
        fault_point(self._paths, "follow-up-after-submit-intent")
        message = Application(recipient=email.recipient, subject=email.subject, body=email.body,
                              attachments=[], intent_key=email.intent_key)
        try:
            message_id = await send_shielded(
                smtp, password, message,
                record_late=lambda send: self._record_late(email, input, send))
        except SmtpSendError as error:
            return await self._send_failed(email, input, error)
        fault_point(self._paths, "follow-up-after-smtp-send")
        async with self._db.transaction() as conn:
            await store.mark_follow_up_sent(conn, email, message_id=message_id,
                                            run_id=input.run.run_id)
        return FollowUpEmailOutcome(status="sent")

    async def _record_late(self, email: store.FollowUpEmail, input: FollowUpEmailInput,
                           send) -> None:
        """Canceled mid-send: record how the conversation ended, so a sent email is known."""
        try:
            message_id = send.result()
        except SmtpSendError as error:
            await self._send_failed(email, input, error, retry=False)
            return
        async with self._db.transaction() as conn:
            await store.mark_follow_up_sent(conn, email, message_id=message_id,
                                            run_id=input.run.run_id)

    async def _send_failed(self, email: store.FollowUpEmail, input: FollowUpEmailInput,
                           error: SmtpSendError, *, retry: bool = True) -> FollowUpEmailOutcome:
        if error.maybe_delivered:
            return await self._failed(email, input, UNKNOWN)
        if retry and error.code == "smtp_unavailable":
            async with self._db.transaction() as conn:
                await store.void_sending(conn, email)  # nothing reached the server
            raise ApplicationError("the mail server could not be reached",
                                   type="smtp_unavailable")
        return await self._failed(email, input, error.code)

    async def _failed(self, email: store.FollowUpEmail, input: FollowUpEmailInput,
                      code: str) -> FollowUpEmailOutcome:
        async with self._db.transaction() as conn:
            await store.mark_follow_up_failed(conn, email, error_code=code,
                                              run_id=input.run.run_id)
        return FollowUpEmailOutcome(status="failed", code=code)

    @activity.defn(name="fail_follow_up_email")
    async def fail_follow_up_email(self, input: FailFollowUpInput) -> FollowUpEmailOutcome:
        """The send activity gave up: a round still 'requested' fails with the code; one
        left 'sending' fails as unknown (it may have gone out)."""
        async with self._db.transaction() as conn:
            email = await store.read_follow_up_email(conn, input.job_id, input.round)
            if email is None or email.status not in store.LIVE_EMAIL_STATUSES:
                return FollowUpEmailOutcome(status=email.status if email else "failed")
            code = UNKNOWN if email.status == "sending" else input.error_code
            await store.mark_follow_up_failed(conn, email, error_code=code,
                                              run_id=input.run.run_id)
        return FollowUpEmailOutcome(status="failed", code=code)

    @activity.defn(name="record_follow_up_lifecycle")
    async def record_follow_up_lifecycle(self, input: WorkflowLifecycleInput) -> None:
        async def nothing_held(_conn, _input: WorkflowLifecycleInput) -> None:
            return None

        await record_run_lifecycle(self._db, input, nothing_held)
