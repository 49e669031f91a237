"""Plain words for the operations snapshot (``GET /v1/pipeline/operations``). Qt-free.

The Pipelines view shows what these functions return; tests call them directly. Rules
from the spec that live here, so one place decides them:

* while the selected run's history is being restored (coverage ``recovering`` /
  ``retrying``) nothing selected-run-specific is shown as a number: no counts, no
  percentage, no ETA;
* Cancel only while ``workflowStatus`` is ``in_progress`` and the phase is
  ``discovering`` or ``draining``;
* after a failed, completed-with-issues, closed-draining or incomplete-history run, a new
  Discover may be set up only when ``activeItemsTotal`` is exactly 0 (positive: work
  remains; null: the inventory is unavailable);
* unknown stays unknown: a null is "unknown" with its reason, never 0.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from desktop.presenters.runs import local_time_text

Snapshot = Mapping[str, Any]

STAGES = ("enrich", "score", "tailor", "cover", "pdf")
STAGE_LABELS = {"enrich": "Enrich", "score": "Score", "tailor": "Tailor", "cover": "Cover letter",
                "pdf": "PDF"}

PHASE_LABELS = {
    "discovering": "Discovering",
    "draining": "Finishing up",
    "completed": "Completed",
    "completed_with_issues": "Completed with issues",
    "failed": "Failed",
    "canceled": "Canceled",
}
PHASE_HINTS = {
    "discovering": "Fetching postings from your sources.",
    "draining": "Sources are done; found jobs are still being prepared.",
    "completed": "Every job of this run has been handled.",
    "completed_with_issues": "The run ended, but some sources or jobs failed.",
    "failed": "The run failed.",
    "canceled": "The run was stopped.",
}
PHASE_TONES = {"discovering": "busy", "draining": "busy", "completed": "ok",
               "completed_with_issues": "busy", "failed": "bad", "canceled": "idle"}
LIVE_PHASES = frozenset({"discovering", "draining"})

# The three scopes, in display order, with the user's words for them.
SCOPES = ("current_execution", "execution_sweep", "global_outside_execution")
SCOPE_LABELS = {
    "current_execution": "Found by this run",
    "execution_sweep": "Earlier jobs picked up by this run",
    "global_outside_execution": "All other jobs",
}
SELECTED_RUN_SCOPES = frozenset({"current_execution", "execution_sweep"})

# The twelve count fields of every scope block, in display order.
COUNT_FIELDS = ("eligible", "waiting", "processing", "succeeded", "skipped", "blocked", "failed",
                "exhausted", "canceled", "needsVerification", "stale", "unknown")
COUNT_LABELS = {
    "eligible": "In scope", "waiting": "Waiting", "processing": "Running",
    "succeeded": "Done", "skipped": "Skipped", "blocked": "Blocked", "failed": "Failed",
    "exhausted": "Gave up", "canceled": "Canceled", "needsVerification": "Checking",
    "stale": "Outdated", "unknown": "Unknown",
}
COUNT_HINTS = {
    "eligible": "Jobs in this scope",
    "waiting": "Pending or queued",
    "processing": "Running now",
    "blocked": "Held back by something to fix first, such as a missing profile",
    "needsVerification": "Marked running, but its run has ended: being verified",
    "stale": "Scored against an older profile",
    "exhausted": "Failed after every automatic retry",
    "unknown": "No stage record yet",
}

ETA_REASONS = {
    "no_work": "nothing is left to do",
    "worker_unavailable": "the worker is not running",
    "telemetry_stale": "the worker has not reported in recently",
    "coverage_not_ready": "the run's history is still being restored",
    "budget_exceeded": "today's spend limit is reached",
    "contention_unbounded": "too much other work is competing to estimate",
    "no_dispatch": "no work has started recently",
    "membership_open": "jobs are still being found",
    "insufficient_samples": "not enough finished jobs to learn from yet",
}
CONFIDENCE_LABELS = {"high": "high confidence", "medium": "medium confidence",
                     "low": "low confidence"}

FRESHNESS_TEXT = {
    "fresh_heartbeat": "Worker reporting",
    "heartbeat_expired": "Worker has not reported recently",
    "worker_stopped": "Worker stopped",
    "no_heartbeat": "No worker has reported yet",
    "telemetry_invalid": "Worker report unreadable",
}

RECONCILIATION_LABELS = {
    "enrichment_pass": "Enrichment pass",
    "preparation_fanout": "Handing jobs to preparation",
    "existing_backlog_sweep": "Picking up earlier jobs",
    "pdf_render": "Rendering PDFs",
}
RECONCILIATION_KINDS = ("enrichment_pass", "preparation_fanout", "existing_backlog_sweep")
STEP_STATUS_LABELS = {
    "waiting": "waiting", "queued": "queued", "running": "running", "succeeded": "done",
    "failed": "failed", "unknown": "unknown (no record)",
}
FAMILY_STATUS_LABELS = {"waiting": "waiting", "running": "running", "succeeded": "done",
                        "failed": "failed"}

POLL_LIVE_MS = 15_000
POLL_IDLE_MS = 60_000
STALE_AFTER_S = 10.0


# --------------------------------------------------------------------------- execution


def execution(snapshot: Snapshot) -> Mapping[str, Any] | None:
    return snapshot.get("execution")


def phase(snapshot: Snapshot) -> str | None:
    selected = execution(snapshot)
    return selected.get("phase") if selected else None


def phase_label(value: str | None) -> str:
    if value is None:
        return "No Discover run yet"
    return PHASE_LABELS.get(value, value.replace("_", " ").capitalize())


def phase_tone(value: str | None) -> str:
    return PHASE_TONES.get(value or "", "idle")


def poll_interval_ms(snapshot: Snapshot | None) -> int:
    """15 s while the selected run is discovering or draining, else 60 s."""
    if snapshot is not None and phase(snapshot) in LIVE_PHASES:
        return POLL_LIVE_MS
    return POLL_IDLE_MS


def can_cancel(snapshot: Snapshot) -> bool:
    selected = execution(snapshot)
    return bool(selected and selected.get("workflowStatus") == "in_progress"
                and selected.get("phase") in LIVE_PHASES)


# --------------------------------------------------------------------------- coverage


def coverage_status(snapshot: Snapshot) -> str | None:
    coverage = snapshot.get("projectionCoverage")
    return coverage.get("status") if coverage else None


def history_restoring(snapshot: Snapshot) -> bool:
    """True while selected-run counts, percentages and ETAs must stay hidden."""
    return coverage_status(snapshot) in ("recovering", "retrying")


def coverage_text(snapshot: Snapshot) -> str:
    coverage = snapshot.get("projectionCoverage")
    if coverage is None:
        return "No run selected; the worker is idle."
    status = coverage.get("status")
    if status == "ready":
        return "Run history complete and verified."
    if status == "recovering":
        if execution(snapshot) is None:
            return "Can't tell yet whether work is running (worker inventory unavailable or busy)."
        return "Run history being restored…"
    if status == "retrying":
        return "Run history being restored — retrying automatically."
    if status == "incomplete":
        members = _of(coverage.get("persistedMembers"), coverage.get("expectedMembers"))
        return (f"Run history is incomplete: older records ended early ({members} jobs "
                "recovered). What is missing is not guessed.")
    return f"Run history: {status or 'unknown'}"


def _of(have: Any, want: Any) -> str:
    if have is None:
        return "unknown"
    return f"{have}" if want is None else f"{have} of {want}"


# --------------------------------------------------------------------------- recovery gate


RecoveryKind = Literal["not_needed", "ready", "remaining_work", "inventory_unavailable"]


@dataclass(frozen=True)
class RecoveryGate:
    kind: RecoveryKind
    text: str

    @property
    def allows_new_run(self) -> bool:
        return self.kind in ("not_needed", "ready")


def needs_recovery_gate(snapshot: Snapshot) -> bool:
    """A failed, completed-with-issues, closed-draining or incomplete-history run: a new
    Discover is allowed only once fresh inventory proves nothing is still running."""
    selected = execution(snapshot)
    if selected is None:
        return False
    current = selected.get("phase")
    closed_draining = current == "draining" and selected.get("workflowStatus") != "in_progress"
    return (current in ("failed", "completed_with_issues") or closed_draining
            or coverage_status(snapshot) == "incomplete")


def recovery_gate(snapshot: Snapshot) -> RecoveryGate:
    if not needs_recovery_gate(snapshot):
        return RecoveryGate("not_needed", "")
    active = snapshot.get("activeItemsTotal")
    if active is None:
        return RecoveryGate("inventory_unavailable",
                            "Can't confirm that no work is still running (the worker's "
                            "inventory is unavailable). Wait for the worker to report in.")
    if active == 0:
        return RecoveryGate("ready", "No work is running. You can set up a new Discover run.")
    noun = "item is" if active == 1 else "items are"
    return RecoveryGate("remaining_work",
                        f"{active} work {noun} still running. Wait for them to finish "
                        "before starting a new Discover run.")


def discover_block_reason(snapshot: Snapshot | None) -> str | None:
    """Why the Discover launch controls are disabled, or None when they may submit."""
    if snapshot is None:
        return "Waiting for the pipeline status"
    if can_cancel(snapshot):
        return "A Discover run is already in progress"
    gate = recovery_gate(snapshot)
    if not gate.allows_new_run:
        return gate.text
    return None


# --------------------------------------------------------------------------- ETA


def _minutes(seconds: float, *, up: bool) -> int:
    value = seconds / 60
    return max(1, math.ceil(value)) if up else max(0, math.floor(value))


def duration_range_text(low_seconds: float, high_seconds: float) -> str:
    """``3–8 min`` under an hour, else ``1.5–2 h`` (low rounded down, high up)."""
    if high_seconds < 3600:
        low, high = _minutes(low_seconds, up=False), _minutes(high_seconds, up=True)
        return f"{low}–{high} min" if low != high else f"{high} min"
    low_h = math.floor(low_seconds / 1800) / 2
    high_h = math.ceil(high_seconds / 1800) / 2
    return f"{_hours(low_h)}–{_hours(high_h)} h"


def _hours(value: float) -> str:
    return f"{value:g}"


def eta_reason_text(eta: Mapping[str, Any] | None) -> str:
    if eta is None:
        return "unknown"
    reason = eta.get("reason")
    return ETA_REASONS.get(reason, (reason or "unknown").replace("_", " "))


def eta_text(eta: Mapping[str, Any] | None) -> str:
    """``a–b min (confidence)`` for a range, else ``No ETA: reason``."""
    if eta is None:
        return "No ETA: unknown"
    if eta.get("state") == "available":
        span = duration_range_text(eta["lowSeconds"], eta["highSeconds"])
        confidence = CONFIDENCE_LABELS.get(eta.get("confidence"), eta.get("confidence"))
        return f"{span} ({confidence})"
    return f"No ETA: {eta_reason_text(eta)}"


def overall_eta_text(snapshot: Snapshot) -> str:
    if history_restoring(snapshot) and execution(snapshot) is not None:
        return "No ETA: the run's history is still being restored"
    return eta_text(snapshot.get("overallEta"))


def stage_eta_rows(snapshot: Snapshot) -> list[tuple[str, str]]:
    """(stage label, ETA text) per stage; empty while history is being restored."""
    if history_restoring(snapshot):
        return []
    etas = snapshot.get("stageEtas") or {}
    return [(STAGE_LABELS.get(stage, stage), eta_text(etas[stage]))
            for stage in STAGES if stage in etas]


def stage_eta_short_rows(snapshot: Snapshot) -> list[tuple[str, str]]:
    """(stage label, short text): the range, or just "No ETA" (its reason is said once by
    ``stage_eta_reasons``), so the per-stage list stays narrow in a small window."""
    if history_restoring(snapshot):
        return []
    etas = snapshot.get("stageEtas") or {}
    return [(STAGE_LABELS.get(stage, stage),
             eta_text(etas[stage]) if (etas[stage] or {}).get("state") == "available"
             else "No ETA")
            for stage in STAGES if stage in etas]


def stage_eta_reasons(snapshot: Snapshot) -> list[str]:
    """The distinct reasons why stages have no ETA, in stage order."""
    if history_restoring(snapshot):
        return []
    etas = snapshot.get("stageEtas") or {}
    reasons: list[str] = []
    for stage in STAGES:
        if stage in etas and (etas[stage] or {}).get("state") != "available":
            reason = eta_reason_text(etas[stage])
            if reason not in reasons:
                reasons.append(reason)
    return reasons


# --------------------------------------------------------------------------- source families


@dataclass(frozen=True)
class FamilyProgress:
    value: int | None      # None: no bar value may be shown
    maximum: int | None
    text: str


def family_progress(snapshot: Snapshot) -> FamilyProgress:
    families = snapshot.get("sourceFamilies")
    if families is None:
        return FamilyProgress(None, None, "No Discover run yet.")
    if history_restoring(snapshot):
        return FamilyProgress(None, None, "Progress hidden while the run's history is restored.")
    current, total = families.get("progressCurrent"), families.get("progressTotal")
    if current is None or not total:
        return FamilyProgress(None, None, "Progress unknown.")
    planned = families.get("planned")
    done = (families.get("succeeded") or 0) + (families.get("failed") or 0)
    text = f"Step {current} of {total}"
    if planned is not None:
        text += f" · {done} of {planned} source{'s' if planned != 1 else ''} crawled"
    if families.get("failed"):
        text += f" ({families['failed']} failed)"
    return FamilyProgress(min(current, total), total, text)


def family_lines(snapshot: Snapshot,
                 source_name: Callable[[str], str] = lambda family: family) -> list[str]:
    """One line per source family; ``source_name`` turns a family's id into plain words."""
    families = snapshot.get("sourceFamilies")
    if families is None:
        return []
    restoring = history_restoring(snapshot)
    lines = []
    for item in families.get("families") or []:
        status = FAMILY_STATUS_LABELS.get(item.get("status"), item.get("status") or "unknown")
        line = f"{source_name(item.get('family') or '?')}: {status}"
        if not restoring and item.get("newJobs") is not None:
            line += f" — {item['newJobs']} new, {item.get('existingJobs') or 0} already known"
        lines.append(line)
    return lines


def resumed_text(snapshot: Snapshot) -> str | None:
    families = snapshot.get("sourceFamilies") or {}
    recovered = families.get("recoveredUnits")
    return f"{recovered} resumed" if recovered and recovered > 0 else None


PROVIDER_UNITS = {"page": "pages", "search": "searches"}
CONTINUATION_TEXT = {"more": "More results to fetch", "exhausted": "No more results",
                     "unknown": "Whether more results exist is unknown"}


def provider_lines(snapshot: Snapshot) -> list[str]:
    """Traversal facts of a broad-board provider; an unknown total stays unknown."""
    families = snapshot.get("sourceFamilies") or {}
    provider = families.get("providerProgress")
    if not provider:
        return []
    total = provider.get("totalUnits")
    units = f"{provider.get('completedUnits', 0)} of {total if total is not None else 'unknown'}"
    unit = PROVIDER_UNITS.get(provider.get("unit"), "units")
    lines = [f"{provider.get('provider') or 'Provider'}: "
             f"{provider.get('phase') or 'working'}, {units} {unit}"]
    if provider.get("rawItemsSeen") is not None:
        lines.append(f"{provider['rawItemsSeen']} listings seen")
    if provider.get("emittedJobs") is not None:
        lines.append(f"{provider['emittedJobs']} jobs passed on")
    continuation = CONTINUATION_TEXT.get(provider.get("continuation"))
    if continuation:
        lines.append(continuation)
    return lines


# --------------------------------------------------------------------------- reconciliation


def reconciliation_lines(snapshot: Snapshot) -> list[tuple[str, str]]:
    """(label, status text) per reconciliation kind."""
    summary = snapshot.get("reconciliation")
    if summary is None:
        return []
    rows = []
    # The three spec kinds always (missing: unknown), then whatever else the API reports.
    kinds = [*RECONCILIATION_KINDS, *(k for k in summary if k not in RECONCILIATION_KINDS)]
    for kind in kinds:
        label = RECONCILIATION_LABELS.get(kind, kind.replace("_", " ").capitalize())
        value = summary.get(kind)
        if value is None:
            rows.append((label, "unknown"))
        elif isinstance(value, Mapping):
            rows.append((label, STEP_STATUS_LABELS.get(value.get("status"), "unknown")))
        else:
            rows.append((label, _steps_text(value)))
    return rows


def _steps_text(steps: list[Mapping[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for step in steps:
        status = step.get("status") or "unknown"
        counts[status] = counts.get(status, 0) + 1
    order = ("running", "queued", "succeeded", "failed", "unknown")
    parts = [f"{counts[s]} {STEP_STATUS_LABELS.get(s, s)}" for s in order if s in counts]
    parts += [f"{n} {s}" for s, n in counts.items() if s not in order]
    return ", ".join(parts) if parts else "none"


# --------------------------------------------------------------------------- scopes


def scope_counts(snapshot: Snapshot, scope: str) -> dict[str, dict[str, int]] | None:
    """The stage → twelve-field block of one scope; None when not shown (no run, or the
    selected run's history is being restored)."""
    blocks = (snapshot.get("scopes") or {}).get(scope)
    if blocks is None:
        return None
    if scope in SELECTED_RUN_SCOPES and history_restoring(snapshot):
        return None
    return {stage: dict(blocks[stage]) for stage in STAGES if stage in blocks}


def scope_unavailable_text(snapshot: Snapshot, scope: str) -> str:
    if scope in SELECTED_RUN_SCOPES and execution(snapshot) is None:
        return "No Discover run yet."
    if scope in SELECTED_RUN_SCOPES and history_restoring(snapshot):
        return "History being restored: counts hidden until it is verified."
    return "Not available."


def scope_remaining(blocks: Mapping[str, Mapping[str, int]]) -> int:
    return sum(block.get("waiting", 0) + block.get("processing", 0)
               + block.get("needsVerification", 0) for block in blocks.values())


# --------------------------------------------------------------------------- capacity


def freshness_text(snapshot: Snapshot) -> str:
    freshness = (snapshot.get("capacity") or {}).get("freshness") or snapshot.get("freshness")
    if not freshness:
        return "Worker status unknown"
    text = FRESHNESS_TEXT.get(freshness.get("reason"), freshness.get("reason") or "unknown")
    age = freshness.get("ageSeconds")
    if age is not None:
        text += f" ({age:.0f} s ago)"
    return text


def slots_text(snapshot: Snapshot) -> str:
    capacity = snapshot.get("capacity") or {}
    active, configured = capacity.get("activeSlots"), capacity.get("configuredSlots")
    if active is None or configured is None:
        return f"Slots in use: unknown ({freshness_text(snapshot).lower()})"
    return f"Slots in use: {active} of {configured}"


def active_items_text(snapshot: Snapshot) -> str:
    total = snapshot.get("activeItemsTotal")
    if total is None:
        return "Active items: unknown"
    text = f"Active items: {total}"
    if snapshot.get("activeItemsTruncated"):
        shown = len(snapshot.get("activeItems") or [])
        text += f" (showing the oldest {shown})"
    return text


ACTIVITY_WORDS = {
    "enrich_job": "Fetching job details", "score_job": "Scoring fit",
    "tailor_resume": "Tailoring a resume", "write_cover_letter": "Writing a cover letter",
    "render_pdfs": "Rendering PDFs", "check_spend_budget": "Checking today's budget",
    "plan_discovery": "Planning Discover", "discover_source_family": "Crawling a source",
    "plan_preparation": "Planning preparation", "finalize_discovery": "Finishing Discover",
    "record_family_failure": "Recording a source failure",
}
MAX_ACTIVE_LINES = 5


def active_item_lines(snapshot: Snapshot) -> list[str]:
    """The oldest few running activities in plain words (the API caps its list at 20)."""
    items = snapshot.get("activeItems") or []
    lines = []
    for item in items[:MAX_ACTIVE_LINES]:
        kind = item.get("activityType") or "?"
        line = f"{ACTIVITY_WORDS.get(kind, kind)} since {local_time_text(item.get('startedAt'))}"
        if (item.get("attempt") or 1) > 1:
            line += f" (attempt {item['attempt']})"
        lines.append(line)
    total = snapshot.get("activeItemsTotal")
    more = (total if total is not None else len(items)) - len(lines)
    if lines and more > 0:
        lines.append(f"…and {more} more")
    return lines


def active_stage_text(snapshot: Snapshot) -> str:
    counts = snapshot.get("activeStageCounts")
    if counts is None:
        return "Running by stage: unknown"
    busy = [f"{stage} {n}" for stage, n in counts.items() if n]
    return "Running by stage: " + (", ".join(busy) if busy else "nothing")


def task_queue_lines(snapshot: Snapshot) -> list[str]:
    """Approximate infrastructure observations, labeled so; never job counts."""
    queues = (snapshot.get("capacity") or {}).get("taskQueues") or {}
    lines = []
    for name, observation in queues.items():
        state = observation.get("state")
        if state == "supported":
            pollers = observation.get("pollers") or {}
            age = observation.get("approximateBacklogAgeSeconds")
            lines.append(
                f"{name} (approximate): backlog ~{observation.get('approximateBacklogCount')}"
                f", oldest ~{age:.0f} s, pollers {pollers.get('workflow', '?')} workflow / "
                f"{pollers.get('activity', '?')} activity")
        else:
            reason = (observation.get("reason") or "").replace("_", " ")
            lines.append(f"{name} (approximate): {state or 'unknown'}"
                         + (f" — {reason}" if reason else ""))
    return lines


# --------------------------------------------------------------------------- technical


def technical_rows(snapshot: Snapshot) -> list[tuple[str, str]]:
    """Identifiers and raw codes for the collapsed technical disclosure."""
    rows: list[tuple[str, str]] = []
    selected = execution(snapshot)
    if selected:
        rows += [("Workflow id", selected.get("discoverWorkflowId") or "—"),
                 ("Run id", selected.get("discoverRunId") or "—"),
                 ("Workflow status", selected.get("workflowStatus") or "—"),
                 ("Phase", selected.get("phase") or "—")]
    coverage = snapshot.get("projectionCoverage")
    if coverage:
        rows.append(("Coverage", coverage.get("status") or "—"))
        if coverage.get("errorCode"):
            rows.append(("Coverage code", coverage["errorCode"]))
        if coverage.get("mode"):
            rows.append(("Coverage mode", f"{coverage['mode']} (decoder "
                                          f"v{coverage.get('decoderVersion')})"))
    overall = snapshot.get("overallEta") or {}
    if overall.get("reason"):
        rows.append(("ETA reason code", overall["reason"]))
    rows.append(("Estimator", snapshot.get("etaEstimatorVersion") or "—"))
    for family in (snapshot.get("sourceFamilies") or {}).get("families") or []:
        if family.get("errorCode"):
            rows.append((f"Source {family.get('family')}", family["errorCode"]))
    return rows


def updated_text(snapshot: Snapshot) -> str:
    """``Updated 14:03:07`` in local time, from the snapshot's own timestamp."""
    return f"Updated {local_time_text(snapshot.get('generatedAt'))}"
