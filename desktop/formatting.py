"""Readable text for events, API answers and errors. Qt-free, so tests read it directly.

One describer per registered event type (a test checks every type in
``backend.domain.events.EVENT_TYPES`` has one); an unknown type still gets a generic row.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import httpx

from desktop.client import ApiRequestError, ApiUnavailable, StreamedEvent
from desktop.presenters import applications as apps

Tone = Literal["info", "success", "warning", "error"]
Payload = dict[str, Any]
JobLabels = Callable[[str], str | None]  # job id -> "Title at Company", when known


def short_id(value: str | None, length: int = 8) -> str:
    """Run ids are long UUIDs; the first characters identify one in a list."""
    if not value:
        return "?"
    return value if len(value) <= length else f"{value[:length]}…"


def _families_failed(payload: Payload) -> str:
    failed = payload.get("familiesFailed") or []
    return ", ".join(f"{item.get('family')} ({item.get('errorCode')})" for item in failed)


def _discovery_started(p: Payload) -> tuple[str, Tone]:
    families = p.get("families") or []
    sources = f"{len(families)} source{'s' if len(families) != 1 else ''}"
    if families:
        sources += f": {', '.join(families)}"
    return f"run {short_id(p.get('discoverRunId'))} started with {sources}", "info"


def _job_discovered(p: Payload) -> tuple[str, Tone]:
    where = p.get("location") or p.get("remote") or "location unknown"
    return f"{p.get('title') or 'Untitled'} at {p.get('company') or '?'} ({where})", "info"


def _discovery_completed(p: Payload) -> tuple[str, Tone]:
    text = f"{p.get('jobsNew', 0)} new of {p.get('jobsObserved', 0)} seen"
    failed = _families_failed(p)
    if failed:
        return f"{text}; sources failed: {failed}", "warning"
    return text, "success"


def _discovery_failed(p: Payload) -> tuple[str, Tone]:
    text = f"{p.get('status', 'failed')}: {p.get('errorCode', '?')}"
    failed = _families_failed(p)
    return (f"{text}; sources failed: {failed}" if failed else text), "error"


JOB_ID_IN_WORKFLOW_ID = re.compile(r"job_[0-9a-f]{24}")


def _workflow(p: Payload, labels: JobLabels, verb: str) -> str:
    """``JobPreparationWorkflow for Data Engineer at Northwind completed (run 01a2…)``
    when the workflow id names a job whose title is known; else the workflow id."""
    workflow_id = p.get("workflowId", "?")
    match = JOB_ID_IN_WORKFLOW_ID.search(workflow_id)
    label = labels(match.group(0)) if match else None
    subject = f"for {label}" if label else workflow_id
    return f"{p.get('workflowType', 'Workflow')} {subject} {verb} (run {short_id(p.get('runId'))})"


def _workflow_started(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _workflow(p, labels, "started"), "info"


def _workflow_completed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _workflow(p, labels, "completed"), "success"


def _workflow_failed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return f"{_workflow(p, labels, 'failed')}: {p.get('errorCode', '?')}", "error"


def _workflow_canceled(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _workflow(p, labels, "canceled"), "warning"


def _cancellation_requested(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    text = f"{_workflow(p, labels, 'cancellation requested')} by {p.get('requester', '?')}"
    if p.get("reason"):
        text += f": {p['reason']}"
    return text, "warning"


# -- per-job events: "score for Senior Engineer at Acme" when the title is known ------------


def _job(p: Payload, labels: JobLabels) -> str:
    job_id = p.get("jobId") or "?"
    return labels(job_id) or short_id(job_id, 12)


def _stage(p: Payload, labels: JobLabels, text: str) -> str:
    return f"{p.get('stage', '?')} for {_job(p, labels)}{text}"


def _stage_started(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _stage(p, labels, f" (attempt {p.get('attempt', '?')})"), "info"


def _stage_completed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    ms = p.get("durationMs")
    return _stage(p, labels, f" in {_duration(ms)}" if ms is not None else ""), "success"


def _duration(ms: int) -> str:
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def _stage_failed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    again = "will retry" if p.get("retryable") else "not retryable"
    return _stage(p, labels, f": {p.get('errorCode', '?')} ({again})"), "error"


def _stage_exhausted(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _stage(p, labels, f": {p.get('errorCode', '?')} after {p.get('attempts', '?')}"
                             " attempts"), "error"


def _stage_reset(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _stage(p, labels, f" reset by {p.get('source', '?')} (was"
                             f" {p.get('previousStatus', '?')})"), "info"


# Why a stage did not run (backend/domain/stages.py's bounded reasons), in plain words.
STAGE_REASON_WORDS = {
    "blocked_by_enrich": "the job's details could not be read",
    "ENRICH_LOW_CONFIDENCE": "the posting's text is too thin to write from",
    "ENRICH_ROBOTS_DISALLOWED": "the site asks tools not to read it",
    "upstream_not_succeeded": "an earlier stage did not finish",
    "upstream_active": "an earlier stage is still running",
    "below_min_fit_score": "fit score below your minimum",
    "profile_missing": "no profile saved yet (Settings)",
    "user_skipped": "you skipped this job",
}


def stage_reason_words(reason: str | None) -> str:
    """A stage's skip or block reason for the user; an unknown code stays as it is."""
    if not reason:
        return "no reason given"
    return STAGE_REASON_WORDS.get(reason, reason)


def _stage_blocked(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _stage(p, labels, f": {stage_reason_words(p.get('reason'))}"), "warning"


def _stage_skipped(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _stage(p, labels, f": {stage_reason_words(p.get('reason'))}"), "info"


def _stage_canceled(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return _stage(p, labels, ""), "warning"


def _job_enriched(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    text = (f"{_job(p, labels)}: {p.get('wordCount', 0):,} words from the {p.get('origin', '?')},"
            f" {p.get('confidence', '?')} confidence")
    if p.get("lowConfidenceReason"):
        text += f" ({p['lowConfidenceReason']})"
    return text, "success" if p.get("confidence") == "high" else "warning"


def _enrichment_failed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    blocked = "; later stages blocked" if p.get("blocked") else ""
    return f"{_job(p, labels)}: {p.get('errorCode', '?')}{blocked}", "error"


def _job_scored(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return (f"{_job(p, labels)} scored {p.get('score', '?')}"
            f" ({p.get('provider', '?')}/{p.get('model', '?')})"), "success"


def _generated(what: str) -> Callable[[Payload, JobLabels], tuple[str, Tone]]:
    def describe(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
        return (f"{what} #{p.get('generation', '?')} for {_job(p, labels)}"
                f" ({p.get('provider', '?')}/{p.get('model', '?')})"), "success"

    return describe


def _resume_failed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return f"résumé for {_job(p, labels)}: {p.get('errorCode', '?')}", "error"


def _pdf_rendered(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    kind = {"resume_pdf": "résumé", "cover_letter_pdf": "cover letter"}.get(
        p.get("kind"), p.get("kind", "?"))
    size = p.get("bytes") or 0
    pages = p.get("pages")
    pages_text = "? pages" if pages is None else f"{pages} page{'' if pages == 1 else 's'}"
    return (f"{kind} PDF for {_job(p, labels)}: {pages_text},"
            f" {size / 1024:.0f} KB"), "success"


def _user_status_changed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    status = p.get("userStatus")
    text = f"{_job(p, labels)} marked {status}" if status else f"{_job(p, labels)}: mark cleared"
    return text, "info"


def _profile_updated(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return f"candidate profile saved (revision {p.get('revision', '?')})", "info"


def _continuation_intended(p: Payload) -> tuple[str, Tone]:
    folded = p.get("coalescedRevisions") or []
    extra = f", covering revisions {', '.join(map(str, folded))}" if folded else ""
    return (f"profile revision {p.get('revision', '?')}: preparation continues as"
            f" {p.get('workflowId', '?')}{extra}"), "info"


def _budget_resumed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return (f"budget has room again: preparing {_job(p, labels)} continues as"
            f" {p.get('workflowId', '?')}"), "info"


def _interrupted_resumed(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return (f"preparing {_job(p, labels)} was interrupted (its worker stopped) and starts"
            " again"), "info"


def _enrich_condition_resolved(p: Payload) -> tuple[str, Tone]:
    return (f"{p.get('code', '?')} resolved for {p.get('host', '?')}: "
            f"{p.get('jobCount', '?')} blocked job(s) continue as {p.get('workflowId', '?')}"), "info"


def _reconciled(p: Payload) -> tuple[str, Tone]:
    run = f"{p.get('workflowType', '?')} run {str(p.get('runId', '?'))[:8]}…"
    if p.get("verdict") == "reconciled_not_found":
        return f"{run}: Temporal cannot find it right now (provisional)", "warning"
    return f"{run}: history reachable again ({p.get('observedStatus') or '?'})", "info"


def _pipeline_step(what: str, tone: Tone) -> Callable[[Payload], tuple[str, Tone]]:
    def describe(p: Payload) -> tuple[str, Tone]:
        step = f"{p.get('stepKind', '?')} {p.get('itemKey', '')}".strip()
        detail = ""
        if p.get("errorCode"):
            detail = f": {p['errorCode']}" + (" (will retry)" if p.get("retryable") else "")
        elif p.get("durationMs") is not None:
            detail = f" in {p['durationMs']:,} ms"
        return f"{step} {what} (attempt {p.get('attempt', '?')}){detail}", tone

    return describe


def _apply(text: str, tone: Tone) -> Callable[[Payload, JobLabels], tuple[str, Tone]]:
    """Apply lifecycle rows: ``apply for <job>: <text>`` plus the event's detail."""

    def describe(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
        detail = p.get("errorCode") or p.get("reason") or p.get("recipient") or ""
        if p.get("dryRun"):
            detail = "dry run, nothing sent"
        if p.get("targetKind") and not detail:
            detail = str(p["targetKind"]).replace("_", " ")
        return f"apply for {_job(p, labels)}: {text}" + (f" ({detail})" if detail else ""), tone

    return describe


def _contact(what: str, tone: Tone) -> Callable[[Payload, JobLabels], tuple[str, Tone]]:
    def describe(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
        text = f"contact research for {_job(p, labels)} {p.get('status') or what}"
        if p.get("candidateCount") is not None:
            text += f": {p['candidateCount']} candidate{'s' if p['candidateCount'] != 1 else ''}"
        if p.get("errorCode"):
            text += f": {p['errorCode']}"
        return text, tone

    return describe


def _contact_found(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    who = p.get("name") or p.get("email") or "a contact"
    role = f", {p['title']}" if p.get("title") else ""
    return (f"contact for {_job(p, labels)}: {who}{role}"
            f" ({p.get('confidencePct', '?')}% confidence)"), "info"


def _application(p: Payload, labels: JobLabels) -> str:
    if p.get("title") and p.get("company"):
        return f"{p['title']} at {p['company']}"
    return _job(p, labels)


def _application_tracked(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    how = apps.VIA_TEXT.get(p.get("via") or "", "applied")
    return f"{_application(p, labels)} is on your application board ({how})", "success"


def _application_untracked(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return (f"{_job(p, labels)} left your application board (its applied mark was"
            " cleared)"), "info"


def _outcome_recorded(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    text = (f"{_job(p, labels)} moved to {apps.stage_label(p.get('stage'))}"
            f" ({apps.day_text(p.get('date'))})")
    tone: Tone = "success" if p.get("stage") in ("heard_back", "interviewing", "offer") \
        else "info"
    return text + (f": {p['note']}" if p.get("note") else ""), tone


def _outcome_undone(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return f"{_job(p, labels)}: last move undone", "info"


def _follow_up(verb: str) -> Callable[[Payload, JobLabels], tuple[str, Tone]]:
    def describe(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
        when = f" {apps.day_text(p['dueOn'])}" if p.get("dueOn") else ""
        how = " (follow-up email sent)" if p.get("via") == "email_sent" else ""
        return f"follow-up for {_job(p, labels)} {verb}{when}{how}", "info"

    return describe


def _follow_up_email(p: Payload, labels: JobLabels, what: str, tone: Tone) -> tuple[str, Tone]:
    to = f" to {p['recipient']}" if p.get("recipient") else ""
    why = apps.EMAIL_FAILURE_WORDS.get(p.get("errorCode") or "", "")
    return f"follow-up email{to} for {_job(p, labels)} {what}" + (f": {why}" if why else ""), tone


def _interview_scheduled(p: Payload, labels: JobLabels) -> tuple[str, Tone]:
    return (f"interview (round {p.get('round', '?')}) for {_job(p, labels)}:"
            f" {apps.interview_time_text(p.get('startsAt'))}"), "info"


def _payload_only(
    describer: Callable[[Payload], tuple[str, Tone]],
) -> Callable[[Payload, JobLabels], tuple[str, Tone]]:
    return lambda p, _labels: describer(p)


DESCRIBERS: dict[str, Callable[[Payload, JobLabels], tuple[str, Tone]]] = {
    "DiscoveryRunStarted": _payload_only(_discovery_started),
    "JobDiscovered": _payload_only(_job_discovered),
    "DiscoveryRunCompleted": _payload_only(_discovery_completed),
    "DiscoveryRunFailed": _payload_only(_discovery_failed),
    "WorkflowStarted": _workflow_started,
    "WorkflowCompleted": _workflow_completed,
    "WorkflowFailed": _workflow_failed,
    "WorkflowCanceled": _workflow_canceled,
    "WorkflowCancellationRequested": _cancellation_requested,
    "StageStarted": _stage_started,
    "StageCompleted": _stage_completed,
    "StageFailed": _stage_failed,
    "StageExhausted": _stage_exhausted,
    "StageReset": _stage_reset,
    "StageBlocked": _stage_blocked,
    "StageSkipped": _stage_skipped,
    "StageCanceled": _stage_canceled,
    "JobEnriched": _job_enriched,
    "EnrichmentFailed": _enrichment_failed,
    "JobScored": _job_scored,
    "ResumeApproved": _generated("résumé"),
    "ResumeFailed": _resume_failed,
    "CoverLetterGenerated": _generated("cover letter"),
    "PdfRendered": _pdf_rendered,
    "JobUserStatusChanged": _user_status_changed,
    "CandidateProfileUpdated": _profile_updated,
    "ProfileContinuationIntended": _payload_only(_continuation_intended),
    "EnrichConditionResolved": _payload_only(_enrich_condition_resolved),
    "PreparationBudgetResumed": _budget_resumed,
    "PreparationInterruptedResumed": _interrupted_resumed,
    "WorkflowReconciled": _payload_only(_reconciled),
    "PipelineStepQueued": _payload_only(_pipeline_step("queued", "info")),
    "PipelineStepStarted": _payload_only(_pipeline_step("started", "info")),
    "PipelineStepCompleted": _payload_only(_pipeline_step("completed", "success")),
    "PipelineStepFailed": _payload_only(_pipeline_step("failed", "error")),
    "ApplyApproved": _apply("approved", "info"),
    "ApplyRejected": _apply("rejected", "info"),
    "ApplyStarted": _apply("started", "info"),
    "ApplyAwaitingApproval": _apply("waiting for approval", "warning"),
    "ApplyPacketReady": _apply("packet ready, finish it by hand", "success"),
    "ApplySubmitted": _apply("email sent", "success"),
    "ApplyMarkedApplied": _apply("marked applied", "success"),
    "ApplyFailed": _apply("failed", "error"),
    "ApplyCanceled": _apply("canceled", "warning"),
    "ContactResearchRequested": _contact("requested", "info"),
    "ContactResearchStarted": _contact("started", "info"),
    "ContactCandidateFound": _contact_found,
    "ContactResearchCompleted": _contact("completed", "success"),
    "ContactResearchFailed": _contact("failed", "error"),
    "ApplicationTracked": _application_tracked,
    "ApplicationUntracked": _application_untracked,
    "ApplicationOutcomeRecorded": _outcome_recorded,
    "ApplicationOutcomeUndone": _outcome_undone,
    "FollowUpScheduled": _follow_up("due on"),
    "FollowUpSnoozed": _follow_up("moved to"),
    "FollowUpDone": _follow_up("done"),
    "FollowUpEmailRequested": lambda p, labels: _follow_up_email(p, labels, "is being sent",
                                                                 "info"),
    "FollowUpEmailSent": lambda p, labels: _follow_up_email(p, labels, "sent", "success"),
    "FollowUpEmailFailed": lambda p, labels: _follow_up_email(p, labels, "not sent", "error"),
    "InterviewScheduled": _interview_scheduled,
    "InterviewCanceled": lambda p, labels: (f"interview for {_job(p, labels)} canceled",
                                            "info"),
}


def job_label(payload: Payload) -> str | None:
    """``Senior Backend Engineer at Acme Robotics`` from a JobDiscovered payload."""
    if payload.get("title") and payload.get("company"):
        return f"{payload['title']} at {payload['company']}"
    return None


@dataclass(frozen=True)
class EventText:
    text: str
    tone: Tone


def _no_labels(_job_id: str) -> str | None:
    return None


def describe_event(event: StreamedEvent, job_labels: JobLabels = _no_labels) -> EventText:
    """``#123 JobDiscovered — Senior Backend Engineer at Acme Robotics (Berlin)``.

    ``job_labels`` names a job id (e.g. from the JobDiscovered events seen so far), so
    per-job rows read ``score for Senior Backend Engineer at Acme`` instead of an id.
    """
    describer = DESCRIBERS.get(event.type)
    if describer is None:
        return EventText(f"#{event.id} {event.type}", "info")
    try:
        summary, tone = describer(event.payload, job_labels)
    except Exception:  # noqa: BLE001 - a malformed payload must not break the list
        return EventText(f"#{event.id} {event.type} (unreadable payload)", "warning")
    return EventText(f"#{event.id} {event.type} — {summary}", tone)


# -- API answers ---------------------------------------------------------------------------

ERROR_TITLES = {
    "worker_runtime_unavailable": "Worker not running",
    "unauthorized": "Not authorized",
    "forbidden": "Not authorized",
    # The application board's refusals.
    "smtp_not_configured": "No email account set up",
    "follow_up_claim_unsupported": "Not sent",
    "follow_up_email_in_progress": "Still sending",
    "application_same_stage": "Already there",
    "outcome_in_future": "Date in the future",
    "outcome_before_applying": "Date before you applied",
}


def describe_api_error(error: BaseException) -> str:
    if isinstance(error, ApiRequestError):
        title = ERROR_TITLES.get(error.code) or error.code.replace("_", " ").capitalize()
        return f"{title}: {error.message}"
    if isinstance(error, ApiUnavailable):
        return str(error)
    if isinstance(error, httpx.TransportError):
        return f"API not reachable ({type(error).__name__}); is it running?"
    return f"Unexpected error: {error}"


def describe_accepted(accepted: Payload) -> str:
    run = accepted.get("firstExecutionRunId") or accepted.get("runId")
    if accepted.get("alreadyRunning"):
        return f"Discover is already running — run {run}"
    return f"Discover started — run {run}"


# -- money of a posting --------------------------------------------------------------------

CURRENCY_SYMBOLS = {"EUR": "€", "USD": "$", "GBP": "£", "JPY": "¥", "INR": "₹"}


def _amount(value: int, compact: bool) -> str:
    if compact:
        thousands = value / 1000
        return f"{thousands:,.0f}k" if thousands == int(thousands) else f"{thousands:,.1f}k"
    return f"{value:,}"


def salary_range_text(low: int | None, high: int | None, currency: str | None) -> str:
    """"€70k–90k", "$120k–150k", "from £60k", "up to CHF 95k"; blank when unknown (a
    missing or zero bound is unknown, never "0")."""
    low, high = (low or None), (high or None)
    if low is None and high is None:
        return ""
    code = (currency or "").upper()
    symbol = CURRENCY_SYMBOLS.get(code, f"{code} " if code else "")
    compact = all(value % 100 == 0 for value in (low, high) if value is not None)
    if low is not None and high is not None and low != high:
        return f"{symbol}{_amount(low, compact)}–{_amount(high, compact)}"
    if low is not None and high is not None:
        return f"{symbol}{_amount(low, compact)}"
    if low is not None:
        return f"from {symbol}{_amount(low, compact)}"
    return f"up to {symbol}{_amount(high, compact)}"
