"""Plain words and the query for the Runs view (``GET /v1/workflow-runs``). Qt-free.

``RunsQuery`` is the view's whole query state (filters, sort, page); every change goes
through it, so the request the view sends is exactly ``query.params()``. Date filters
are local calendar days turned into UTC bounds: ``startedSince`` inclusive,
``startedBefore`` exclusive (the API's contract).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, Literal

from desktop.formatting import stage_reason_words
from desktop.presenters.activity import reason_words

Run = Mapping[str, Any]

STATUS_LABELS = {"running": "Running", "completed": "Completed", "failed": "Failed",
                 "canceled": "Canceled"}
STATUS_TONES = {"running": "busy", "completed": "ok", "failed": "bad", "canceled": "idle"}
TERMINAL = frozenset({"completed", "failed", "canceled"})

# Workflow types a user can filter by, with their names (the API's exact type strings).
WORKFLOW_TYPES = {
    "DiscoverWorkflow": "Discover run",
    "JobPreparationWorkflow": "Job preparation",
    "BatchStageWorkflow": "Selected jobs batch",
    "ApplyWorkflow": "Apply",
    "ContactResearchWorkflow": "Contact research",
    "FollowUpEmailWorkflow": "Follow-up email",
    "PolicyRerunWorkflow": "Stale work batch",
}
APPLY_LOOP_WORKFLOW_ID = "apply-auto-local"

# Table column → API sort key (None: not sortable on the server).
SortKey = Literal["startedAt", "closedAt", "durationMs", "workflowType", "status"]
PAGE_SIZES = (25, 50, 100, 200)

TIMELINE_TEXT = {
    "WorkflowStarted": "Run started",
    "WorkflowCompleted": "Run completed",
    "WorkflowFailed": "Run failed",
    "WorkflowCanceled": "Run canceled",
    "WorkflowReconciled": "Outcome confirmed from Temporal's history",
    "DiscoveryRunStarted": "Discover started",
    "DiscoveryRunCompleted": "Discover finished",
    "DiscoveryRunFailed": "Discover failed",
    "JobDiscovered": "Job found",
    "JobEnriched": "Job details fetched",
    "EnrichmentFailed": "Fetching job details failed",
    "JobScored": "Fit scored",
    "ResumeApproved": "Tailored resume ready",
    "ResumeFailed": "Resume tailoring failed",
    "CoverLetterGenerated": "Cover letter written",
    "PdfRendered": "PDFs rendered",
    "PipelineStepQueued": "Step queued",
    "PipelineStepStarted": "Step started",
    "PipelineStepCompleted": "Step done",
    "PipelineStepFailed": "Step failed",
}
STAGE_VERBS = {
    "StageStarted": "started", "StageCompleted": "done", "StageFailed": "failed",
    "StageExhausted": "gave up after retries", "StageReset": "reset", "StageBlocked": "blocked",
    "StageSkipped": "skipped", "StageCanceled": "canceled",
}
STAGE_NAMES = {"enrich": "Enrich", "score": "Score", "tailor": "Tailor", "cover": "Cover letter",
               "pdf": "PDF", "apply": "Apply", "discover": "Discover"}


@dataclass(frozen=True)
class RunsQuery:
    status: str | None = None
    workflow_type: str | None = None
    started_from: date | None = None   # local day, inclusive
    started_to: date | None = None     # local day, inclusive
    sort: SortKey = "startedAt"
    order: Literal["asc", "desc"] = "desc"
    limit: int = 50
    offset: int = 0

    def params(self, tz: tzinfo | None = None) -> dict[str, Any]:
        """Keyword arguments for ``ApiClient.workflow_runs`` (camelCase query names)."""
        params: dict[str, Any] = {"sort": self.sort, "order": self.order,
                                  "limit": self.limit, "offset": self.offset}
        if self.status:
            params["status"] = self.status
        if self.workflow_type:
            params["workflowType"] = self.workflow_type
        if self.started_from is not None:
            params["startedSince"] = local_day_start_utc(self.started_from, tz)
        if self.started_to is not None:
            params["startedBefore"] = local_day_start_utc(self.started_to + timedelta(days=1), tz)
        return params

    def filtered(self, **changes: Any) -> RunsQuery:
        """A filter or sort change starts again at the first page."""
        return replace(self, offset=0, **changes)

    def next_page(self, total: int) -> RunsQuery:
        return replace(self, offset=min(self.offset + self.limit, self.last_offset(total)))

    def previous_page(self) -> RunsQuery:
        return replace(self, offset=max(0, self.offset - self.limit))

    def last_offset(self, total: int) -> int:
        return max(0, (total - 1) // self.limit * self.limit)

    def has_next(self, total: int) -> bool:
        return self.offset + self.limit < total

    def has_previous(self) -> bool:
        return self.offset > 0


def local_day_start_utc(day: date, tz: tzinfo | None = None) -> str:
    """Midnight of ``day`` in the local (or given) zone, as a UTC ISO-8601 string."""
    naive = datetime.combine(day, time.min)
    # A naive datetime's astimezone() uses the local zone's offset on that very day (DST).
    start = naive.astimezone() if tz is None else naive.replace(tzinfo=tz)
    return start.astimezone(UTC).isoformat().replace("+00:00", "Z")


def page_text(query: RunsQuery, total: int, shown: int) -> str:
    if total == 0:
        return "No runs match"
    first = query.offset + 1
    return f"{first}–{query.offset + shown} of {total:,}"


# --------------------------------------------------------------------------- one run


def run_name(run: Run) -> str:
    if run.get("workflowId") == APPLY_LOOP_WORKFLOW_ID:
        return "Standing apply loop"
    return run.get("displayName") or WORKFLOW_TYPES.get(run.get("workflowType"), "Run")


def status_text(run: Run) -> str:
    status = run.get("status")
    label = STATUS_LABELS.get(status, (status or "unknown").replace("_", " ").capitalize())
    if status == "running" and run.get("cancelRequested"):
        return "Cancellation requested"
    return label


def status_tone(run: Run) -> str:
    return STATUS_TONES.get(run.get("status"), "idle")


def duration_text(ms: int | None, *, running: bool = False) -> str:
    if ms is None:
        return "still running" if running else "—"
    seconds = ms / 1000
    if seconds < 60:
        return f"{seconds:.1f} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {rest:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def local_time_text(value: str | None, *, now: datetime | None = None) -> str:
    """``14:03:07`` today, else ``28 Nov 14:03`` (local time); ``—`` when unknown."""
    moment = parse_time(value)
    if moment is None:
        return "—"
    local = moment.astimezone()
    today = (now or datetime.now().astimezone()).date()
    if local.date() == today:
        return local.strftime("%H:%M:%S")
    return local.strftime("%d %b %H:%M")


def related_job_text(run: Run) -> str:
    job = run.get("relatedJob")
    if not job:
        return "—"
    return f"{job.get('title') or 'Untitled'} · {job.get('company') or '?'}"


def cancel_state(run: Run) -> Literal["available", "requested", "terminal"]:
    """Cancel is offered while running; once asked, "cancellation requested" stays until
    the terminal state arrives (the request is not the outcome)."""
    if run.get("status") in TERMINAL:
        return "terminal"
    if run.get("cancelRequested") or run.get("cancelRequestedAt"):
        return "requested"
    return "available"


def timeline_text(entry: Mapping[str, Any]) -> str:
    kind = entry.get("type", "")
    stage = STAGE_NAMES.get(entry.get("stage"), entry.get("stage"))
    if kind in STAGE_VERBS:
        text = f"{stage or 'Stage'}: {STAGE_VERBS[kind]}"
    elif kind == "WorkflowCancellationRequested":
        text = _cancel_request_text(entry)
    else:
        text = TIMELINE_TEXT.get(kind, kind)
    reason = entry.get("reason")
    if reason and kind != "WorkflowCancellationRequested":
        text += f" — {stage_reason_words(reason)}"
    # An error code in words when it has them; the raw code is in Technical details.
    words = reason_words(entry.get("errorCode"))
    if words:
        text += f" — {words}"
    return text


REQUESTER_WORDS = {"local_operator": "you", "temporal_cli": "the Temporal command line",
                   "jobctrl_api": "JobCtrl"}


def _requester_words(requester: str | None) -> str:
    """Who asked, in words; another tool's identity (``worker@host``) stays as it is."""
    if not requester or requester == "unknown":
        return "someone outside JobCtrl"
    return REQUESTER_WORDS.get(requester) or requester.replace("_", " ")


def _cancel_request_text(entry: Mapping[str, Any]) -> str:
    boundary = entry.get("sourceBoundary")
    requester = _requester_words(entry.get("requester"))
    if boundary == "request_intent":
        text = f"Cancellation requested by {requester}"
    elif boundary == "temporal_history":
        text = f"Cancellation recorded in Temporal's history (by {requester})"
    elif boundary == "recovered_temporal_history":
        text = f"Cancellation restored from earlier Temporal history (by {requester})"
    else:
        text = f"Cancellation requested by {requester}"
    if entry.get("reason"):
        text += f": {entry['reason']}"
    return text


def diagnostics_lines(run: Run) -> list[str]:
    diagnostics = run.get("failureDiagnostics") or {}
    code = diagnostics.get("errorCode")
    if not code and run.get("status") != "failed":
        return []
    lines = [f"Error: {(code or 'unknown').replace('_', ' ')}"]
    if diagnostics.get("automaticRetryable"):
        lines.append("Temporal is retrying this automatically.")
    elif run.get("status") == "running":
        lines.append("Not retried automatically.")
    if diagnostics.get("manualRecoveryAvailable"):
        lines.append("You can retry the failed stage from the job's page.")
    return lines


def technical_rows(run: Run) -> list[tuple[str, str]]:
    technical = run.get("technical") or {}
    rows = [("Workflow id", technical.get("workflowId") or run.get("workflowId") or "—"),
            ("Run id", technical.get("runId") or run.get("runId") or "—"),
            ("Workflow type", run.get("workflowType") or "—"),
            ("Raw error code", technical.get("rawErrorCode") or "—")]
    if run.get("cancelRequestedAt"):
        rows.append(("Cancel requested at", run["cancelRequestedAt"]))
    codes = sorted({entry["errorCode"] for entry in run.get("timeline") or []
                    if entry.get("errorCode")})
    reasons = sorted({entry["reason"] for entry in run.get("timeline") or []
                      if entry.get("reason")})
    if codes:
        rows.append(("Timeline error codes", ", ".join(codes)))
    if reasons:
        rows.append(("Timeline reason codes", ", ".join(reasons)))
    return rows
