"""Plain words for the operations snapshot (``GET /v1/pipeline/operations``). Qt-free.

The one presenter of the one snapshot: ``summarize`` gives the run summary — the
Pipelines headline, its bar over the whole run, the ETA in words, the primary action —
and the tray tooltip (``RunSummary.tray_text``) and the notifications (``run_end_notice``,
``budget_notice``) are built from that same summary, so no two surfaces can disagree.
The rest of the module words the "Details" disclosure. Tests call these functions
directly. Rules from the spec that live here, so one place decides them:

* while the selected run's history is being restored (coverage ``recovering`` /
  ``retrying``) nothing selected-run-specific is shown as a number: no counts, no
  percentage, no ETA;
* Cancel only while ``workflowStatus`` is ``in_progress`` and the phase is
  ``discovering`` or ``draining``;
* after a failed, completed-with-issues, closed-draining or incomplete-history run, a new
  Discover may be set up only when ``activeItemsTotal`` is exactly 0 (positive: work
  remains; null: the inventory is unavailable);
* unknown stays unknown: a null is "unknown" with its reason, never 0; the bar shows a
  number only when the remaining work is known and measured, else it is busy (work
  moves, amount unknown) or still (nothing moves), with the reason.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Literal

from desktop.presenters.runs import local_time_text, parse_time

Snapshot = Mapping[str, Any]

STAGES = ("enrich", "score", "tailor", "cover", "pdf")
STAGE_LABELS = {"enrich": "Enrich", "score": "Score", "tailor": "Tailor", "cover": "Cover letter",
                "pdf": "PDF"}

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
    "processing": "Jobs of this scope recorded as running. What the worker executes right "
                  "now, for every scope, is under Worker capacity: Working on now",
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
    "budget_exceeded": "today's budget is used up",
    "contention_unbounded": "other work is competing for the worker",
    "no_dispatch": "nothing has started in the last few minutes",
    "membership_open": "jobs are still being found",
    "insufficient_samples": "not enough finished jobs to learn from yet",
}
# ``membership_open`` depends on the phase: while the sources run, jobs are still being
# found; once they are done the run may still add earlier jobs (its backlog sweep closes
# membership last), so "jobs are still being found" under "sources are done" read as a
# contradiction.
MEMBERSHIP_OPEN_BY_PHASE = {"discovering": "jobs are still being found",
                            "draining": "the list of jobs is not final yet"}
CONFIDENCE_LABELS = {"high": "high confidence", "medium": "medium confidence",
                     "low": "low confidence"}

FRESHNESS_TEXT = {
    "fresh_heartbeat": "Worker reporting",
    "heartbeat_expired": "Worker has not reported recently",
    "worker_stopped": "Worker stopped",
    "no_heartbeat": "No worker has reported yet",
    "telemetry_invalid": "Worker report unreadable",
    "planned_restart": "Worker restarting to free memory (nothing is lost)",
}

# Each job's details are fetched as soon as it is found (the Enrich counts); the
# enrichment pass and the PDF pass are final checks over the whole run that start only
# after the last job is in. "Enrichment pass: waiting" next to a climbing Enrich "Done"
# read as a contradiction, so the labels say what the step is and when it runs.
RECONCILIATION_LABELS = {
    "enrichment_pass": "Final check of job details",
    "preparation_fanout": "Handing jobs to preparation",
    "existing_backlog_sweep": "Picking up earlier jobs",
    "pdf_render": "Final check of PDFs",
}
FINAL_CHECKS = frozenset({"enrichment_pass", "pdf_render"})
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


def poll_interval_ms(snapshot: Snapshot | None) -> int:
    """15 s while the selected run is discovering or draining — or while coverage is
    being restored or nothing proves the worker idle yet (states that pass by themselves,
    with no event to say so) — else 60 s."""
    if snapshot is not None and (phase(snapshot) in LIVE_PHASES
                                 or coverage_status(snapshot) in ("recovering", "retrying")):
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
        return RecoveryGate("ready", _new_run_offer(snapshot))
    noun = "step is" if active == 1 else "steps are"
    return RecoveryGate("remaining_work",
                        f"{active} {noun} still running. Wait for them to finish "
                        "before starting a new Discover run.")


def _new_run_offer(snapshot: Snapshot) -> str:
    """The offer of a new run once nothing runs, unless it would mislead: while the closed
    run's jobs are still being prepared (between two steps nothing is in flight, but the
    work is not over) or while the budget holds them (a new run would not help)."""
    if execution(snapshot).get("phase") == "draining" or budget_paused(snapshot):
        return ""
    return "Nothing is running now: you can start a new Discover run."


RUN_IN_PROGRESS = "A Discover run is already in progress"


def discover_block_reason(snapshot: Snapshot | None) -> str | None:
    """Why the Discover launch controls are disabled, or None when they may submit."""
    if snapshot is None:
        return "Waiting for the pipeline status"
    if can_cancel(snapshot):
        return RUN_IN_PROGRESS
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


def reason_words(reason: str | None, current_phase: str | None = None) -> str:
    """A withheld estimate's reason in plain words (one table for every surface)."""
    if reason == "membership_open" and current_phase in MEMBERSHIP_OPEN_BY_PHASE:
        return MEMBERSHIP_OPEN_BY_PHASE[current_phase]
    return ETA_REASONS.get(reason, (reason or "unknown").replace("_", " "))


# The steps an estimate lacks samples for (``stages`` of insufficient_samples).
STEP_WORDS = {"enrich": "fetching job details", "score": "scoring", "tailor": "tailoring résumés",
              "cover": "writing letters", "pdf": "making PDFs",
              "source_family": "searching sources"}


def eta_reason_text(eta: Mapping[str, Any] | None, current_phase: str | None = None) -> str:
    if eta is None:
        return "unknown"
    short = [STEP_WORDS[step] for step in eta.get("stages") or () if step in STEP_WORDS]
    if eta.get("reason") == "insufficient_samples" and short:
        # "Not enough finished jobs" next to "39 of 40 prepared" read as false: name the
        # steps that have run too rarely (often the good fits' letters and PDFs).
        listed = short[0] if len(short) == 1 else ", ".join(short[:-1]) + " and " + short[-1]
        return f"still measuring how long {listed} take{'s' if len(short) == 1 else ''}"
    return reason_words(eta.get("reason"), current_phase)


def eta_text(eta: Mapping[str, Any] | None, current_phase: str | None = None) -> str:
    """``a–b min (confidence)`` for a range, else ``No ETA: reason``."""
    if eta is None:
        return "No ETA: unknown"
    if eta.get("state") == "available":
        span = duration_range_text(eta["lowSeconds"], eta["highSeconds"])
        confidence = CONFIDENCE_LABELS.get(eta.get("confidence"), eta.get("confidence"))
        return f"{span} ({confidence})"
    return f"No ETA: {eta_reason_text(eta, current_phase)}"


def overall_eta_text(snapshot: Snapshot) -> str:
    """The whole run's estimate for Details, in the words the headline uses."""
    if history_restoring(snapshot) and execution(snapshot) is not None:
        return "No ETA: the run's history is still being restored"
    words = eta_words(snapshot.get("overallEta"))
    if words is not None:
        return f"Whole run: {words}"
    return f"No ETA: {eta_reason_text(snapshot.get('overallEta'), phase(snapshot))}"


def stage_eta_rows(snapshot: Snapshot) -> list[tuple[str, str]]:
    """(stage label, ETA text) per stage; empty while history is being restored."""
    if history_restoring(snapshot):
        return []
    etas = snapshot.get("stageEtas") or {}
    return [(STAGE_LABELS.get(stage, stage), eta_text(etas[stage], phase(snapshot)))
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
            reason = eta_reason_text(etas[stage], phase(snapshot))
            if reason not in reasons:
                reasons.append(reason)
    return reasons


# --------------------------------------------------------------------------- source families


def sources_text(snapshot: Snapshot) -> str:
    """``1 of 2 sources searched (1 failed)``: the planned family crawls only — never
    whole-run progress (that is the run summary's bar)."""
    families = snapshot.get("sourceFamilies")
    if families is None:
        return "No Discover run yet."
    planned = families.get("planned")
    if planned is None:
        return "Sources: unknown."
    done = (families.get("succeeded") or 0) + (families.get("failed") or 0)
    text = f"{done} of {planned} source{'s' if planned != 1 else ''} searched"
    if families.get("failed"):
        text += f" ({families['failed']} failed)"
    return text


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
        if not restoring and item.get("skippedOverCap"):
            left_out = int(item["skippedOverCap"])
            line += (f" ({left_out:,} more posting{'s' if left_out != 1 else ''} left out:"
                     " more than one search takes from a board)")
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
            status = value.get("status")
            words = STEP_STATUS_LABELS.get(status, "unknown")
            if status == "waiting" and kind in FINAL_CHECKS:
                words = "runs once every job is in"
            rows.append((label, words))
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


def freshness_text(snapshot: Snapshot, now: datetime | None = None) -> str:
    """``Worker reporting (last report 3 s ago)``: the age is counted from the heartbeat's
    own time to ``now``, so a view that re-renders it every second shows it ticking."""
    freshness = (snapshot.get("capacity") or {}).get("freshness") or snapshot.get("freshness")
    if not freshness:
        return "Worker status unknown"
    text = FRESHNESS_TEXT.get(freshness.get("reason"), freshness.get("reason") or "unknown")
    ago = seconds_ago_text(freshness.get("newestHeartbeatAt"), now)
    if ago is None and freshness.get("ageSeconds") is not None:
        ago = f"{freshness['ageSeconds']:.0f} s ago"  # no timestamp: the snapshot's age
    return f"{text} (last report {ago})" if ago else text


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


ACTIVE_STAGE_LABELS = {**STAGE_LABELS, "discover": "Discover", "preflight": "Budget check"}


def active_stage_text(snapshot: Snapshot) -> str:
    """What the worker executes right now, by stage, across every scope. It can differ
    from a scope's "Marked running" count: a batch step (such as the final PDF check)
    works on jobs whose rows are not marked running, other scopes share the worker, and
    the worker reports every few seconds while the counts are read now."""
    counts = snapshot.get("activeStageCounts")
    if counts is None:
        return "Working on now: unknown"
    busy = [f"{ACTIVE_STAGE_LABELS.get(stage, stage)} {n}" for stage, n in counts.items() if n]
    return ("Working on now (every scope, at the worker's last report): "
            + (", ".join(busy) if busy else "nothing"))


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


def updated_text(snapshot: Snapshot, now: datetime | None = None) -> str:
    """``Updated 4 s ago`` from the snapshot's own timestamp (ticks when re-rendered)."""
    ago = seconds_ago_text(snapshot.get("generatedAt"), now)
    return f"Updated {ago}" if ago else "Updated: unknown"


# --------------------------------------------------------------------------- the run summary
#
# The one honest line at the top of Pipelines: what the run is doing in words, one bar over
# the whole run, the ETA in words, the primary action. The tray tooltip and the
# notifications take their words from the same RunSummary, so no two surfaces can disagree.

STAGE_ACTIVITIES = {"enrich": "enrich_job", "score": "score_job", "tailor": "tailor_resume",
                    "cover": "write_cover_letter", "pdf": "render_pdfs"}
SOURCE_ACTIVITY = "discover_source_family"
MIN_WEIGHT_S = 0.01  # a measured duration that rounds to 0 s still moves the bar
# Per-job rows that took worker time (skipped and blocked rows took none).
RAN_FIELDS = ("succeeded", "failed", "exhausted", "canceled", "stale")
PENDING_FIELDS = ("waiting", "processing", "needsVerification")
SETTLED_PHASES = frozenset({"completed", "completed_with_issues"})

# backend/sources/errors.py's bounded codes.
SOURCE_ERROR_WORDS = {
    "source_payload_invalid": "its answer could not be read",
    "source_unavailable": "it could not be reached",
    "configuration": "its settings need fixing",
    "checkpoint_incompatible": "its saved search position no longer fits",
    "source_failed": "it failed",
}

Tone = Literal["ok", "busy", "bad", "idle"]
ProgressKind = Literal["value", "busy", "none"]
RunState = Literal["loading", "checking", "recovering", "idle", "discovering", "preparing",
                   "paused_budget", "waiting_for_worker", "finished", "finished_with_issues",
                   "failed", "canceled"]


@dataclass(frozen=True)
class RunProgress:
    """One bar over the whole run. ``value``: ``fraction`` of the run's measured work is
    done; ``busy``: work moves but how much remains is unknown (``text`` says why);
    ``none``: nothing is moving (``text`` says why, or is empty when there is no run)."""

    kind: ProgressKind
    fraction: float | None = None
    text: str = ""


@dataclass(frozen=True)
class RunSummary:
    state: RunState
    headline: str                 # "Preparing 135 of 234 new jobs · about 2–3 min left"
    detail: str                   # one sentence under it
    progress: RunProgress
    tone: Tone
    eta: str | None = None        # "about 2–3 min left", when a defended range exists
    no_eta: str | None = None     # "No time estimate yet: …" while live without one
    can_cancel: bool = False      # the primary action is Cancel (else Discover)

    @property
    def tray_text(self) -> str:
        """The tooltip's second half: the headline, plus why there is no estimate while
        work moves (a paused or restoring headline already says why)."""
        if self.no_eta and self.state in ("discovering", "preparing"):
            return f"{self.headline} · {self.no_eta[0].lower()}{self.no_eta[1:]}"
        return self.headline


@dataclass(frozen=True)
class Notice:
    """A notification: the same words the window shows."""

    key: str                      # once per key (a run id and its ending, a spend day)
    title: str
    text: str
    level: Literal["info", "warning", "critical"]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _plural(count: int, one: str, many: str | None = None) -> str:
    return f"{count:,} {one if count == 1 else (many or one + 's')}"


def selected_stage_counts(snapshot: Snapshot) -> dict[str, dict[str, int]]:
    """Per stage, the selected run's two cohorts (found by it, swept into it) added up."""
    scopes = snapshot.get("scopes") or {}
    totals: dict[str, dict[str, int]] = {}
    for stage in STAGES:
        merged = dict.fromkeys(COUNT_FIELDS, 0)
        for scope in ("current_execution", "execution_sweep"):
            block = (scopes.get(scope) or {}).get(stage) or {}
            for field in COUNT_FIELDS:
                merged[field] += int(block.get(field) or 0)
        totals[stage] = merged
    return totals


def _pending(counts: Mapping[str, int]) -> int:
    return sum(counts[field] for field in PENDING_FIELDS)


def jobs_in_run(snapshot: Snapshot) -> int:
    """Jobs in the selected run (both cohorts): every job is in scope of every stage."""
    return selected_stage_counts(snapshot)["enrich"]["eligible"]


def jobs_prepared(snapshot: Snapshot) -> int:
    """Jobs with nothing left to do in any stage (done, skipped, held back or given up)."""
    counts = selected_stage_counts(snapshot)
    return min(c["eligible"] - _pending(c) - c["unknown"] for c in counts.values())


def measured_seconds(snapshot: Snapshot, activity: str) -> float | None:
    """The worker's measured typical (p50) duration of one activity, None if unmeasured."""
    summaries = (snapshot.get("capacity") or {}).get("durationSummaries") or {}
    summary = summaries.get(activity) or {}
    if not summary.get("count"):
        return None
    return max(float(summary.get("p50Seconds") or 0.0), MIN_WEIGHT_S)


@dataclass(frozen=True)
class RunWork:
    """Worker-seconds of the selected run, done and left, priced at measured durations."""

    done: float
    left: float
    unmeasured: tuple[str, ...]   # steps with work left but no measured duration yet

    @property
    def fraction(self) -> float | None:
        if self.unmeasured or self.done + self.left <= 0:
            return None
        return self.done / (self.done + self.left)


def run_work(snapshot: Snapshot) -> RunWork:
    """Each source family and each per-job stage that ran or still has to run, at the
    worker's measured p50 for it; half of what runs now counts as done, so the bar moves
    when work starts as well as when it ends. Skipped and blocked rows cost nothing."""
    done = left = 0.0
    unmeasured: list[str] = []
    families = snapshot.get("sourceFamilies") or {}
    crawled = (families.get("succeeded") or 0) + (families.get("failed") or 0)
    weight = measured_seconds(snapshot, SOURCE_ACTIVITY)
    if weight is None:
        if families.get("remaining"):
            unmeasured.append("sources")
    else:
        done += crawled * weight
        left += (families.get("remaining") or 0) * weight
    for stage, counts in selected_stage_counts(snapshot).items():
        weight = measured_seconds(snapshot, STAGE_ACTIVITIES[stage])
        running = counts["processing"]
        if weight is None:
            if _pending(counts):
                unmeasured.append(stage)
            continue
        done += weight * (sum(counts[field] for field in RAN_FIELDS) + running / 2)
        left += weight * (_pending(counts) - running / 2)
    return RunWork(done, left, tuple(unmeasured))


def eta_words(eta: Mapping[str, Any] | None) -> str | None:
    """``about 2–3 min left`` / ``under a minute left`` for a defended range, else None."""
    if not eta or eta.get("state") != "available":
        return None
    low, high = float(eta["lowSeconds"]), float(eta["highSeconds"])
    if high <= 60:
        return "under a minute left"
    if low < 60:
        return f"up to {duration_range_text(high, high)} left"
    return f"about {duration_range_text(low, high)} left"


DISPATCH_RECENCY_S = 300  # pipeline-eta-v1's "recent dispatch" window


def no_eta_words(snapshot: Snapshot) -> str:
    """``No time estimate yet: …`` with the estimator's reason in plain words."""
    eta = snapshot.get("overallEta")
    if eta is None:
        return "No time estimate yet: the worker's status is not known yet"
    if eta.get("reason") == "no_dispatch" and _run_age_s(snapshot) < DISPATCH_RECENCY_S:
        # A run minutes old has no "last few minutes" without dispatch to speak of.
        return "No time estimate yet: waiting for the first steps to start"
    if eta.get("reason") == "budget_exceeded" and not budget_used_up(snapshot):
        return "No time estimate yet: today's budget can't cover the next job"
    if eta.get("reason") == "no_work" and execution(snapshot):
        # The run is still open with nothing left in it: its last checks, not a wait.
        return "Nothing is left to prepare; the run ends after its last checks"
    return f"No time estimate yet: {eta_reason_text(eta, phase(snapshot))}"


def _run_age_s(snapshot: Snapshot) -> float:
    started = parse_time((execution(snapshot) or {}).get("startedAt"))
    generated = parse_time(snapshot.get("generatedAt"))
    if started is None or generated is None:
        return math.inf
    return (generated - started).total_seconds()


def _worker_down(snapshot: Snapshot) -> str | None:
    """Why the worker cannot be counted on right now, or None while it reports."""
    freshness = (snapshot.get("capacity") or {}).get("freshness") or snapshot.get("freshness")
    if not freshness or freshness.get("state") == "fresh":
        return None
    return {"heartbeat_expired": "The worker has not reported in recently; JobCtrl "
                                 "restarts it if it stopped.",
            "worker_stopped": "The worker has stopped; JobCtrl restarts it.",
            # Only while idle; a command waits for it. Said plainly if a run shows it.
            "planned_restart": "The worker is restarting to free memory; it is back in"
                               " a few seconds.",
            "no_heartbeat": "The worker has not reported yet.",
            "telemetry_invalid": "The worker's report could not be read."}.get(
        freshness.get("reason"), "The worker is not reporting.")


def _clock_text(value: str | None) -> str:
    moment = parse_time(value)
    return moment.astimezone().strftime("%H:%M") if moment else "the daily reset"


def budget_used_up(snapshot: Snapshot) -> bool:
    return bool((snapshot.get("budget") or {}).get("exhausted"))


def budget_holds_jobs(snapshot: Snapshot) -> bool:
    """The ceiling refused jobs that still wait: the budget left could not cover them,
    whether or not today's spend has literally reached the ceiling."""
    return (snapshot.get("budgetHaltedPreparations") or 0) > 0


def budget_paused(snapshot: Snapshot) -> bool:
    """Today's budget is used up (or too low for the next job) while the selected run
    still has work waiting."""
    if budget_holds_jobs(snapshot):
        return True
    if not budget_used_up(snapshot):
        return False
    reason = (snapshot.get("overallEta") or {}).get("reason")
    return reason == "budget_exceeded" or any(
        _pending(c) for c in selected_stage_counts(snapshot).values())


def budget_headline(snapshot: Snapshot) -> str:
    resets = _clock_text((snapshot.get("budget") or {}).get("resetsAt"))
    state = "is used up" if budget_used_up(snapshot) else "can't cover the next job"
    return f"Paused: today's budget {state} — resumes at {resets}"


def _found_text(snapshot: Snapshot) -> str:
    """``234 new jobs``, or ``240 jobs (234 new)`` when some were known before."""
    families = (snapshot.get("sourceFamilies") or {}).get("families") or []
    new = sum(int(f.get("newJobs") or 0) for f in families)
    total = jobs_in_run(snapshot)
    if total <= new:
        return _plural(new, "new job")
    return f"{_plural(total, 'job')} ({new:,} new)"


def _jobs_noun(snapshot: Snapshot) -> str:
    """``new jobs`` when every job in the run is new, else ``jobs``."""
    families = (snapshot.get("sourceFamilies") or {}).get("families") or []
    new = sum(int(f.get("newJobs") or 0) for f in families)
    return "new jobs" if jobs_in_run(snapshot) <= new else "jobs"


def _sources_text(snapshot: Snapshot) -> str:
    families = snapshot.get("sourceFamilies") or {}
    planned = families.get("planned") or 0
    crawled = (families.get("succeeded") or 0) + (families.get("failed") or 0)
    return f"{crawled} of {_plural(planned, 'source')} done"


def summarize(snapshot: Snapshot | None) -> RunSummary:
    """Everything the top of Pipelines, the tray and the notifications say about the run.
    Its words do not age; the relative times ("3 s ago") are rendered separately."""
    if snapshot is None:
        return RunSummary("loading", "Checking what is running…", "",
                          RunProgress("busy", text="Waiting for the pipeline status"), "idle")
    selected = execution(snapshot)
    if selected is None:
        return _no_run(snapshot)
    if history_restoring(snapshot):
        return _restoring(snapshot)
    current = selected.get("phase")
    if current in LIVE_PHASES:
        return _live(snapshot, current)
    return _ended(snapshot, current)


def _no_run(snapshot: Snapshot) -> RunSummary:
    if coverage_status(snapshot) in ("recovering", "retrying"):
        # Not a Discover run (none is selected): the worker is busy with other work, such
        # as preparing jobs after a profile change, or it has not reported yet.
        why = _worker_down(snapshot) or "The worker is busy with other work."
        return RunSummary("checking", "Checking whether anything is still running…", why,
                          RunProgress("busy", text="Checking"), "busy")
    return RunSummary("idle", "Ready to find jobs",
                      "Press Discover to search your sources for new postings.",
                      RunProgress("none"), "idle")


def _restoring(snapshot: Snapshot) -> RunSummary:
    retrying = coverage_status(snapshot) == "retrying"
    detail = ("This run's records are being rebuilt from its history"
              + (", retrying automatically" if retrying else "")
              + ". Counts and time estimates come back once they are checked.")
    return RunSummary("recovering", "Restoring this run's history…", detail,
                      RunProgress("busy", text="Restoring history"), "busy",
                      no_eta=no_eta_words({**snapshot, "overallEta": {
                          "reason": "coverage_not_ready"}}),
                      can_cancel=can_cancel(snapshot))


def _live(snapshot: Snapshot, current: str) -> RunSummary:
    cancel = can_cancel(snapshot)
    if budget_paused(snapshot):
        waiting = jobs_in_run(snapshot) - jobs_prepared(snapshot)
        return RunSummary(
            "paused_budget", budget_headline(snapshot),
            f"{_plural(waiting, 'job')} wait for scoring and writing. They continue by "
            "themselves then, or sooner if you raise the daily budget in Settings.",
            _bar(snapshot, paused="Paused"), "busy", no_eta=no_eta_words(snapshot),
            can_cancel=cancel)
    if current == "discovering":
        return _discovering(snapshot, cancel)
    return _preparing(snapshot, cancel)


def _discovering(snapshot: Snapshot, cancel: bool) -> RunSummary:
    families = snapshot.get("sourceFamilies") or {}
    headline = f"Finding jobs on {_plural(families.get('planned') or 0, 'source')}"
    found = jobs_in_run(snapshot)
    detail = f"{_sources_text(snapshot)} · {_plural(found, 'job')} found so far"
    if found:
        detail += f" · {jobs_prepared(snapshot):,} prepared"
    down = _worker_down(snapshot)
    if down:
        return RunSummary("waiting_for_worker", headline + " — waiting for the worker",
                          down, RunProgress("none", text="Waiting for the worker"), "busy",
                          no_eta=no_eta_words(snapshot), can_cancel=cancel)
    # How many jobs the sources hold is unknown until they answer: no number to show.
    return RunSummary("discovering", headline, detail,
                      RunProgress("busy", text="The total is known once the sources answer"),
                      "busy", no_eta=no_eta_words(snapshot), can_cancel=cancel)


def _preparing(snapshot: Snapshot, cancel: bool) -> RunSummary:
    total, prepared = jobs_in_run(snapshot), jobs_prepared(snapshot)
    if total and prepared >= total:  # every job is ready; the run's last checks remain
        every = "the job is" if total == 1 else f"all {total:,} {_jobs_noun(snapshot)} are"
        base = f"Finishing up: {every} prepared"
    elif total:
        base = f"Preparing {prepared:,} of {total:,} {_jobs_noun(snapshot)}"
    else:
        base = "Finishing up"
    down = _worker_down(snapshot)
    if down:
        return RunSummary("waiting_for_worker", base + " — waiting for the worker", down,
                          RunProgress("none", text="Waiting for the worker"), "busy",
                          no_eta=no_eta_words(snapshot), can_cancel=cancel)
    eta = eta_words(snapshot.get("overallEta"))
    headline = f"{base} · {eta}" if eta else base
    no_eta = None if eta else no_eta_words(snapshot)
    detail = (no_eta + "." if no_eta else
              "Scoring each job against your profile and writing a résumé and letter for "
              "the good fits. An estimate from recent work, not a promise.")
    interrupted = int(snapshot.get("interruptedPreparations") or 0)
    if interrupted:  # until the worker starts them again, never "done"
        detail = (f"{_plural(interrupted, 'job')} will be retried: their preparation was "
                  f"interrupted. {detail}")
    return RunSummary("preparing", headline, detail, _bar(snapshot), "busy", eta=eta,
                      no_eta=no_eta, can_cancel=cancel)


def _bar(snapshot: Snapshot, *, paused: str | None = None) -> RunProgress:
    work = run_work(snapshot)
    if work.fraction is None:
        text = "Still measuring how long each step takes" if work.unmeasured else "Starting"
        return RunProgress("none" if paused else "busy", text=paused or text)
    percent = f"{math.floor(work.fraction * 100)}%"
    return RunProgress("value", work.fraction, f"{paused} at {percent}" if paused else percent)


def _ended(snapshot: Snapshot, current: str | None) -> RunSummary:
    # What blocks the next Discover (the recovery gate) is said next to the button.
    if current in SETTLED_PHASES:
        return _finished(snapshot, current)
    if current == "canceled":
        kept = jobs_in_run(snapshot)
        detail = "It was stopped before it finished."
        if kept:
            detail += (" The job it found is kept." if kept == 1
                       else f" The {kept:,} jobs it found are kept.")
        return RunSummary("canceled", "Discover canceled", detail,
                          RunProgress("none"), "idle")
    return RunSummary("failed", "Discover failed", _failure_text(snapshot),
                      RunProgress("none"), "bad")


def _finished(snapshot: Snapshot, current: str) -> RunSummary:
    detail = _outcome_text(snapshot)
    if current == "completed":
        return RunSummary("finished", f"Discover finished: {_found_text(snapshot)}",
                          detail, RunProgress("value", 1.0, "Done"), "ok")
    return RunSummary("finished_with_issues",
                      f"Discover finished with problems: {_found_text(snapshot)}",
                      f"{detail} {_problems_text(snapshot)}",
                      RunProgress("value", 1.0, "Done"), "busy")


def _outcome_text(snapshot: Snapshot) -> str:
    """What the run left to review: jobs with a résumé and letter, and the poor fits."""
    counts = selected_stage_counts(snapshot)
    ready, below = counts["pdf"]["succeeded"], counts["tailor"]["skipped"]
    total = jobs_in_run(snapshot)
    if ready and below:
        return (f"{_plural(ready, 'job has', 'jobs have')} a résumé and letter ready to "
                f"review; {below:,} {'is' if below == 1 else 'are'} below your fit threshold.")
    if ready:
        return f"{_plural(ready, 'job has', 'jobs have')} a résumé and letter ready to review."
    if below and below == total:
        return ("None was a good enough fit to write for: "
                f"{'it is' if total == 1 else f'all {total:,} are'} below your fit threshold.")
    if below:
        return f"No résumé or letter was written; {below:,} below your fit threshold."
    return "No résumé or letter was written."


def _problems_text(snapshot: Snapshot) -> str:
    families = snapshot.get("sourceFamilies") or {}
    parts = []
    if families.get("failed"):
        parts.append(f"{_plural(families['failed'], 'source')} could not be read")
    failed = sum(c["failed"] + c["exhausted"] for c in selected_stage_counts(snapshot).values())
    if failed:
        parts.append(f"{_plural(failed, 'step')} failed for some jobs (see Jobs)")
    return ("; ".join(parts) + ".") if parts else "Some steps did not finish."


def _failure_text(snapshot: Snapshot) -> str:
    families = [f for f in (snapshot.get("sourceFamilies") or {}).get("families") or []
                if f.get("status") == "failed"]
    if len(families) == 1:
        why = SOURCE_ERROR_WORDS.get(families[0].get("errorCode") or "", "it failed")
        return f"No jobs were found: the source could not be searched ({why})."
    if families:
        return f"No jobs were found: none of the {len(families)} sources could be searched."
    return "The run stopped with an error; the Runs tab has the details."


# --------------------------------------------------------------------------- notifications


def run_end_notice(snapshot: Snapshot) -> Notice | None:
    """The notification for a run that has ended, in the window's words; None while live."""
    selected = execution(snapshot)
    if selected is None or history_restoring(snapshot):
        return None
    summary = summarize(snapshot)
    if summary.state not in ("finished", "finished_with_issues", "failed", "canceled"):
        return None
    level = {"finished": "info", "finished_with_issues": "warning", "failed": "critical",
             "canceled": "info"}[summary.state]
    title, _, rest = summary.headline.partition(": ")
    text = f"{rest[0].upper()}{rest[1:]}. {summary.detail}" if rest else summary.detail
    return Notice(f"run:{selected.get('discoverRunId')}", title, text, level)


def budget_notice(snapshot: Snapshot) -> Notice | None:
    """Today's budget used up: once per spend day, in the headline's words."""
    budget = snapshot.get("budget") or {}
    if not budget_used_up(snapshot) and not budget_holds_jobs(snapshot):
        return None
    resets = _clock_text(budget.get("resetsAt"))
    text = (f"Spent {money_text(budget.get('spentUsd'))} of "
            f"{money_text(budget.get('ceilingUsd'))}. Scoring and writing wait until "
            f"{resets}, or until you raise the daily budget in Settings.")
    if budget_paused(snapshot):
        title = budget_headline(snapshot).partition(" — ")[0]
    else:
        title = "Today's budget is used up"
    return Notice(f"budget:{budget.get('day')}", title, text, "warning")


def money_text(value: Any) -> str:
    if value is None:
        return "an unknown amount"
    return f"${Decimal(str(value)):,.2f}"


# --------------------------------------------------------------------------- relative times


def seconds_ago_text(value: str | None, now: datetime | None = None) -> str | None:
    """``3 s ago`` / ``2 min ago`` from an ISO timestamp, None when unknown."""
    moment = parse_time(value)
    if moment is None:
        return None
    age = max(0.0, ((now or _utc_now()) - moment).total_seconds())
    if age < 90:
        return f"{age:.0f} s ago"
    if age < 5400:
        return f"{age / 60:.0f} min ago"
    return f"{age / 3600:.0f} h ago"


def newer(candidate: Snapshot | None, than: Snapshot | None) -> bool:
    """Whether ``candidate`` was generated after ``than`` (the window and the tray each
    fetch the snapshot; both show whichever is newest, so they say the same)."""
    if candidate is None:
        return False
    if than is None:
        return True
    new, old = parse_time(candidate.get("generatedAt")), parse_time(than.get("generatedAt"))
    return new is not None and (old is None or new > old)
