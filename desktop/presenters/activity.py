"""Activity rows as a job seeker's sentences. Qt-free: tests call ``activity_line`` directly.

One sentence per registered event type ("Scored Senior Backend Engineer at Northwind: fit
82", "Found 234 jobs on Demo board"); an unknown type still gets a safe generic sentence.
Event type names, workflow and run ids, reason codes and provider/model names never reach
the sentence: ``technical_details`` lists them, for the Activity view's "Technical
details". A reason code this module has no words for is left out of the sentence rather
than shown raw.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

from desktop.formatting import STAGE_REASON_WORDS
from desktop.presenters import applications as apps
from desktop.presenters.sources import FAMILY_NAMES

Tone = Literal["info", "success", "warning", "error"]
Payload = Mapping[str, Any]
Lookup = Callable[[str], str | None]  # an id -> its name, when known


def _unknown(_key: str) -> str | None:
    return None


@dataclass(frozen=True)
class Names:
    """What the sentences call jobs and sources: ``job("job_…")`` -> "Data Engineer at
    Northwind", ``source("gh-acme")`` -> "Acme (Greenhouse)"; None when not known."""

    job: Lookup = _unknown
    source: Lookup = _unknown


@dataclass(frozen=True)
class ActivityLine:
    text: str
    tone: Tone


# -- words for codes ---------------------------------------------------------------------------

# Reasons and error codes the backend records (bounded codes), in plain words. A code that
# is not here is left out of the sentence; "Technical details" still shows it.
REASON_WORDS: dict[str, str] = {
    **STAGE_REASON_WORDS,  # stage skip / block reasons, worded as in the Jobs view
    "user_applied": "you already applied",
    "already_prepared": "it is already prepared",
    # reading postings (the failure codes are in STAGE_REASON_WORDS: the Jobs view says them too)
    "empty": "the page has no text",
    "too_short": "the text is very short",
    "expired_posting": "the posting looks expired",
    "login_wall": "the page needs a login",
    "mostly_navigation": "the page is mostly menus and links",
    # sources
    "source_failed": "the source could not be read",
    "source_unavailable": "the site did not answer",
    "source_payload_invalid": "the site answered with something JobCtrl cannot read",
    "configuration": "its settings are not right",
    "checkpoint_incompatible": "earlier progress could not be reused",
    "planning_failed": "planning the search failed",
    # writing and money
    "budget_exceeded": "today's budget is used up",
    "source_budget_share_reached": "its job board has used its share of today's budget",
    "provider_unavailable": "the AI model could not be reached",
    "provider_response_invalid": "the AI model's answer could not be read",
    "authentication": "the AI model did not accept the key",
    "materials_unsupported_claim": "a draft said something your profile does not show",
    # runs
    "start_to_close_timeout": "it took too long",
    "heartbeat_timeout": "it stopped answering",
    "temporal_unavailable": "the background service could not be reached",
    "batch_deadline_exceeded": "it took too long",
    # applying
    "apply_target_unreachable": "the application page could not be reached",
    "apply_target_private": "the application link leads into your own network",
    "apply_target_unknown": "it is not known where to apply",
    "apply_materials_missing": "the résumé or letter PDF is missing",
    "apply_challenge_detected": "the site asks for a human check",
    "submit_outcome_unknown": "it is not known whether it was sent",
    "email_requires_approval": "sending email needs your approval",
    "approval_mismatch": "the email changed since you approved it",
    "smtp_unavailable": "the mail server could not be reached",
    "smtp_not_configured": "no email account is set up",
    "smtp_recipient_refused": "the mail server refused the address",
    "message_invalid": "the email could not be put together, so nothing was sent",
    "insecure_transport_not_confirmed":
        "the password or key would travel unencrypted and you have not agreed to that (Settings)",
    # saving files
    "disk_full": "the disk is full",
    "file_permission_denied": "JobCtrl may not write to its folder",
    "file_name_too_long": "the file name is too long for this disk",
    "file_io_failed": "a file could not be saved",
}


def reason_words(code: str | None) -> str | None:
    return REASON_WORDS.get(code) if code else None


def _because(code: str | None) -> str:
    """``": the site did not answer"``, or nothing for a code without words."""
    words = reason_words(code)
    return f": {words}" if words else ""


def _source(names: Names, source_id: str | None) -> str:
    if not source_id:
        return "a source"
    # An id that is a kind's name is that kind's one source (the bundled "demo_board").
    return names.source(source_id) or FAMILY_NAMES.get(source_id) or _readable_id(source_id)


def _readable_id(value: str) -> str:
    """A source id the user chose or JobCtrl generated ("gh-acme"), without code marks."""
    return value.replace("_", " ")


def _sources(names: Names, source_ids: Iterable[str]) -> str:
    labels = [_source(names, source_id) for source_id in source_ids]
    if not labels:
        return "no sources"
    if len(labels) <= 3:
        return _and(labels)
    return f"{len(labels)} sources"


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def _job(names: Names, p: Payload) -> str:
    job_id = p.get("jobId")
    return (names.job(job_id) if job_id else None) or "a job"


def _count(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def _duration(ms: int | None) -> str:
    if ms is None:
        return ""
    if ms < 1000:
        return " in under a second"
    seconds = ms / 1000
    if seconds < 60:
        return f" in {seconds:.0f} s"
    return f" in {seconds / 60:.0f} min"


# -- discovery ---------------------------------------------------------------------------------


def _discovery_started(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Started looking for jobs on {_sources(n, p.get('families') or [])}", "info"


def job_label(p: Payload) -> str | None:
    """``Senior Backend Engineer at Acme Robotics`` from a JobDiscovered payload."""
    if p.get("title") and p.get("company"):
        return f"{p['title']} at {p['company']}"
    return None


REMOTE_WORDS = {"remote": "remote", "hybrid": "hybrid", "onsite": "on site"}


def _job_discovered(p: Payload, _n: Names) -> tuple[str, Tone]:
    label = job_label(p) or p.get("title") or "a job"
    where = p.get("location") or REMOTE_WORDS.get(str(p.get("remote")))
    return f"Found {label}" + (f" ({where})" if where else ""), "info"


def _failed_sources(p: Payload, n: Names) -> str:
    """"; Greenhouse could not be searched: the site did not answer" (one reason when one
    source failed; the reasons of several are in Technical details)."""
    failed = p.get("familiesFailed") or []
    if not failed:
        return ""
    if len(failed) == 1:
        only = failed[0]
        return (f"; {_source(n, only.get('family'))} could not be searched"
                f"{_because(only.get('errorCode'))}")
    return f"; {_and([_source(n, item.get('family')) for item in failed])} could not be searched"


def _discovery_completed(p: Payload, n: Names) -> tuple[str, Tone]:
    seen, new = int(p.get("jobsObserved") or 0), int(p.get("jobsNew") or 0)
    where = _sources(n, p.get("familiesSucceeded") or [])
    text = f"Found {_count(seen, 'job')} on {where}"
    if new != seen:
        text += f", {new:,} of them new"
    failed = _failed_sources(p, n)
    return text + failed, "warning" if failed else "success"


def _discovery_failed(p: Payload, n: Names) -> tuple[str, Tone]:
    if p.get("status") == "canceled":
        return "Looking for jobs was canceled", "warning"
    return f"Looking for jobs failed{_because(p.get('errorCode'))}{_failed_sources(p, n)}", "error"


# -- runs (workflows) ------------------------------------------------------------------------

# What a run does, with its job when the workflow id names one ("preparing {job}").
RUN_DOING = {
    "DiscoverWorkflow": "the Discover run",
    "JobPreparationWorkflow": "preparing {job}",
    "BatchStageWorkflow": "the batch of selected jobs",
    "ApplyWorkflow": "applying to {job}",
    "ContactResearchWorkflow": "looking for contacts for {job}",
    "PolicyRerunWorkflow": "redoing outdated work",
    "PreparationContinuationWorkflow": "preparing the jobs waiting on a change",
}
# A job id inside a workflow id (``prep-job_…``): the run is about that job.
_JOB_ID_LENGTH = len("job_") + 24


def _run_doing(p: Payload, n: Names) -> str:
    template = RUN_DOING.get(str(p.get("workflowType")), "a background task")
    workflow_id = str(p.get("workflowId") or "")
    start = workflow_id.find("job_")
    label = n.job(workflow_id[start:start + _JOB_ID_LENGTH]) if start >= 0 else None
    return template.format(job=label or "a job")


def _run_started(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Started {_run_doing(p, n)}", "info"


def _run_completed(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Finished {_run_doing(p, n)}", "success"


def _run_failed(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"{_cap(_run_doing(p, n))} failed{_because(p.get('errorCode'))}", "error"


def _run_canceled(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Stopped {_run_doing(p, n)}", "warning"


def _cancellation_requested(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Asked to stop {_run_doing(p, n)}", "warning"


def _reconciled(p: Payload, n: Names) -> tuple[str, Tone]:
    doing = _run_doing(p, n)
    if p.get("verdict") == "reconciled_not_found":
        return f"JobCtrl cannot confirm yet how {doing} ended and checks again", "warning"
    return f"JobCtrl confirmed how {doing} ended", "info"


# -- per-job steps -----------------------------------------------------------------------------

# What each stage does, with the job in it: "scoring Data Engineer at Northwind".
STAGE_DOING = {
    "enrich": "reading the posting for {job}",
    "score": "scoring {job}",
    "tailor": "tailoring your résumé for {job}",
    "cover": "writing the cover letter for {job}",
    "pdf": "making the PDFs for {job}",
}
RESET_WHY = {
    "retry_stage": "you asked to try again",
    "rescore": "you asked to score it again",
    "retailor": "you asked to tailor it again",
    "run_stage": "you asked to run it",
    "upstream_succeeded": "the step before it finished",
}


def _doing(p: Payload, n: Names) -> str:
    template = STAGE_DOING.get(str(p.get("stage")), "working on {job}")
    return template.format(job=_job(n, p))


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _stage_started(p: Payload, n: Names) -> tuple[str, Tone]:
    attempt = int(p.get("attempt") or 1)
    again = f" (try {attempt})" if attempt > 1 else ""
    return f"Started {_doing(p, n)}{again}", "info"


def _stage_completed(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Finished {_doing(p, n)}{_duration(p.get('durationMs'))}", "success"


def _stage_failed(p: Payload, n: Names) -> tuple[str, Tone]:
    then = "; trying again" if p.get("retryable") else ""
    return f"{_cap(_doing(p, n))} failed{_because(p.get('errorCode'))}{then}", "error"


def _stage_exhausted(p: Payload, n: Names) -> tuple[str, Tone]:
    tries = _count(int(p.get("attempts") or 0), "try", "tries")
    return f"Gave up {_doing(p, n)} after {tries}{_because(p.get('errorCode'))}", "error"


def _stage_reset(p: Payload, n: Names) -> tuple[str, Tone]:
    why = RESET_WHY.get(str(p.get("source")))
    return f"{_cap(_doing(p, n))} will run again" + (f": {why}" if why else ""), "info"


def _stage_blocked(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"{_cap(_doing(p, n))} is on hold{_because(p.get('reason'))}", "warning"


def _stage_skipped(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Skipped {_doing(p, n)}{_because(p.get('reason'))}", "info"


def _stage_canceled(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Stopped {_doing(p, n)}", "warning"


def _job_enriched(p: Payload, n: Names) -> tuple[str, Tone]:
    words = _count(int(p.get("wordCount") or 0), "word")
    text = f"Read the posting for {_job(n, p)}: {words}"
    if p.get("confidence") == "high":
        return text, "success"
    why = reason_words(p.get("lowConfidenceReason")) or "too little to write from"
    return f"{text}, but {why}", "warning"


def _enrichment_failed(p: Payload, n: Names) -> tuple[str, Tone]:
    later = "; the next steps wait" if p.get("blocked") else ""
    return f"Could not read the posting for {_job(n, p)}{_because(p.get('errorCode'))}{later}", \
        "error"


def _job_scored(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Scored {_job(n, p)}: fit {p.get('score', '?')}", "success"


def _version(p: Payload) -> str:
    generation = int(p.get("generation") or 1)
    return f" (version {generation})" if generation > 1 else ""


def _kept(p: Payload) -> str:
    """A user's edit saved with claims the profile does not hold, which the user kept."""
    kept = p.get("keptClaims")
    count = len(kept) if isinstance(kept, list) else 0
    if not count:
        return ""
    return f", with {count} claim{'s' * (count != 1)} your profile does not hold, kept by you"


def _resume_approved(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Tailored résumé ready for {_job(n, p)}{_version(p)}{_kept(p)}", "success"


def _resume_failed(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Could not tailor the résumé for {_job(n, p)}{_because(p.get('errorCode'))}", "error"


def _cover_letter(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Cover letter written for {_job(n, p)}{_version(p)}{_kept(p)}", "success"


def _pdf_rendered(p: Payload, n: Names) -> tuple[str, Tone]:
    kind = {"resume_pdf": "Résumé", "cover_letter_pdf": "Cover letter"}.get(str(p.get("kind")),
                                                                          "A")
    pages = p.get("pages")
    size = int(p.get("bytes") or 0)
    facts = [] if pages is None else [_count(int(pages), "page")]
    facts.append(f"{max(1, round(size / 1024))} KB")
    return f"{kind} PDF made for {_job(n, p)}: {', '.join(facts)}", "success"


def _user_status(p: Payload, n: Names) -> tuple[str, Tone]:
    status = p.get("userStatus")
    if status == "applied":
        return f"Marked {_job(n, p)} as applied", "info"
    if status == "skipped":
        return f"Skipped {_job(n, p)}", "info"
    return f"Cleared the mark on {_job(n, p)}", "info"


# -- profile, budget, conditions ---------------------------------------------------------------


def _profile_updated(_p: Payload, _n: Names) -> tuple[str, Tone]:
    return "Your profile was saved", "info"


def _continuation(_p: Payload, _n: Names) -> tuple[str, Tone]:
    return "Your profile changed: jobs are prepared again with it", "info"


def _budget_resumed(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Today's budget has room again: preparing {_job(n, p)} continues", "info"


def _batch_budget_resumed(p: Payload, _n: Names) -> tuple[str, Tone]:
    count = _count(len(p.get("jobIds") or []), "job")
    return f"Today's budget has room again: the selected batch of {count} continues", "info"


def _contact_budget_resumed(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Today's budget has room again: looking for contacts at {_job(n, p)} continues", "info"


# -- after applying: the application board (desktop/presenters/applications.py words) ------

def _application(p: Payload, n: Names) -> str:
    if p.get("title") and p.get("company"):
        return f"{p['title']} at {p['company']}"
    return _job(n, p)


def _application_tracked(p: Payload, n: Names) -> tuple[str, Tone]:
    how = apps.VIA_TEXT.get(p.get("via") or "", "applied")
    return f"Added to your application board: {_application(p, n)} ({how})", "success"


def _application_untracked(p: Payload, n: Names) -> tuple[str, Tone]:
    return (f"Removed from your application board: {_job(n, p)} (its applied mark was"
            " cleared)"), "info"


def _outcome_recorded(p: Payload, n: Names) -> tuple[str, Tone]:
    text = (f"Moved {_job(n, p)} to {apps.stage_label(p.get('stage'))}"
            f" ({apps.day_text(p.get('date'))})")
    tone: Tone = "success" if p.get("stage") in ("heard_back", "interviewing", "offer") \
        else "info"
    return text, tone  # the note is the user's own, shown on the board's card


def _outcome_undone(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Undid the last move of {_job(n, p)}", "info"


def _follow_up(verb: str):
    def describe(p: Payload, n: Names) -> tuple[str, Tone]:
        when = f" {apps.day_text(p['dueOn'])}" if p.get("dueOn") else ""
        how = " (follow-up email sent)" if p.get("via") == "email_sent" else ""
        return f"Follow-up for {_job(n, p)} {verb}{when}{how}", "info"

    return describe


def _follow_up_email(what: str, tone: Tone):
    def describe(p: Payload, n: Names) -> tuple[str, Tone]:
        to = f" to {p['recipient']}" if p.get("recipient") else ""
        why = apps.EMAIL_FAILURE_WORDS.get(p.get("errorCode") or "", "")
        return f"Follow-up email{to} for {_job(n, p)} {what}" + (f": {why}" if why else ""), tone

    return describe


def _interview_scheduled(p: Payload, n: Names) -> tuple[str, Tone]:
    return (f"Interview (round {p.get('round', '?')}) for {_job(n, p)}:"
            f" {apps.interview_time_text(p.get('startsAt'))}"), "info"


def _interview_canceled(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Interview for {_job(n, p)} canceled", "info"


def _interrupted_resumed(p: Payload, n: Names) -> tuple[str, Tone]:
    return (f"Preparing {_job(n, p)} was interrupted (the app's worker stopped): it starts"
            " again"), "info"


def _condition_resolved(p: Payload, _n: Names) -> tuple[str, Tone]:
    count = _count(int(p.get("jobCount") or 0), "job")
    return f"You allowed reading postings on {p.get('host') or 'a site'}: {count} continue", \
        "info"


# -- Discover's own steps ----------------------------------------------------------------------

STEP_DOING = {
    "source_planning": "planning the search",
    "enrichment_pass": "reading the job postings",
    "preparation_fanout": "handing jobs over for preparation",
    "existing_backlog_sweep": "picking up earlier unfinished jobs",
    "pdf_render": "making PDFs",
}


def _step_doing(p: Payload, n: Names) -> str:
    kind, item = str(p.get("stepKind")), str(p.get("itemKey") or "")
    if kind == "source_family":
        return f"searching {_source(n, item.removeprefix('family:'))}"
    if kind == "preparation_fanout" and item.startswith("fanout:family:"):
        return f"handing jobs from {_source(n, item.removeprefix('fanout:family:'))} over " \
               "for preparation"
    return STEP_DOING.get(kind, "a step of the run")


def _step_counts(counts: Payload) -> str:
    """The counts a finished step reports, as words ("234 jobs, 234 new")."""
    parts: list[str] = []
    if counts.get("observedJobs") is not None:
        parts.append(_count(int(counts["observedJobs"]), "job"))
        if counts.get("newJobs") is not None:
            parts.append(f"{int(counts['newJobs']):,} new")
    elif counts.get("newJobs") is not None:
        parts.append(f"{_count(int(counts['newJobs']), 'new job')}")
    if counts.get("familyCount") is not None:
        parts.append(_count(int(counts["familyCount"]), "source"))
    for key, words in (("sweptCount", "picked up"), ("plannedCount", "to prepare"),
                       ("succeededCount", "done"), ("failedCount", "failed"),
                       ("blockedCount", "on hold"), ("skippedCount", "skipped"),
                       ("deferredCount", "left for later")):
        if counts.get(key):
            parts.append(f"{int(counts[key]):,} {words}")
    return ", ".join(parts)


def _step(what: str, tone: Tone) -> Callable[[Payload, Names], tuple[str, Tone]]:
    def describe(p: Payload, n: Names) -> tuple[str, Tone]:
        doing = _step_doing(p, n)
        if what == "queued":
            return f"Up next: {doing}", tone
        if what == "started":
            return f"Started {doing}", tone
        if what == "completed":
            counts = _step_counts(p.get("counts") or {})
            return f"Finished {doing}" + (f": {counts}" if counts else ""), tone
        then = "; trying again" if p.get("retryable") else ""
        return f"{_cap(doing)} failed{_because(p.get('errorCode'))}{then}", tone

    return describe


# -- applying and contacts ---------------------------------------------------------------------


def _apply_approved(p: Payload, n: Names) -> tuple[str, Tone]:
    to = f" by email to {p['recipient']}" if p.get("recipient") else ""
    return f"You approved applying to {_job(n, p)}{to}", "info"


def _apply_rejected(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"You decided not to apply to {_job(n, p)}", "info"


def _apply_started(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Started the application for {_job(n, p)}", "info"


def _apply_awaiting(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"The application for {_job(n, p)} waits for your approval{_because(p.get('reason'))}", \
        "warning"


def _apply_packet(p: Payload, n: Names) -> tuple[str, Tone]:
    if p.get("dryRun"):
        return f"Application for {_job(n, p)} prepared as a trial: nothing was sent", "success"
    where = "send it" if p.get("targetKind") == "email" else "finish it on the company's site"
    return f"Application for {_job(n, p)} is ready: {where}", "success"


def _apply_submitted(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Sent the application for {_job(n, p)} to {p.get('recipient') or 'the employer'}", \
        "success"


def _apply_marked(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Marked {_job(n, p)} as applied", "success"


def _apply_failed(p: Payload, n: Names) -> tuple[str, Tone]:
    then = "; trying again" if p.get("retryable") else ""
    return f"The application for {_job(n, p)} failed{_because(p.get('errorCode'))}{then}", "error"


def _apply_canceled(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"The application for {_job(n, p)} was canceled", "warning"


def _contacts_requested(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Asked to find contacts for {_job(n, p)}", "info"


def _contacts_started(p: Payload, n: Names) -> tuple[str, Tone]:
    return f"Looking for contacts for {_job(n, p)}", "info"


def _contact_found(p: Payload, n: Names) -> tuple[str, Tone]:
    who = p.get("name") or p.get("email") or "someone"
    role = f", {p['title']}" if p.get("title") else ""
    sure = f" ({p['confidencePct']}% sure)" if p.get("confidencePct") is not None else ""
    return f"Found a contact for {_job(n, p)}: {who}{role}{sure}", "info"


def _contacts_completed(p: Payload, n: Names) -> tuple[str, Tone]:
    found = _count(int(p.get("candidateCount") or 0), "person", "people")
    return f"Finished looking for contacts for {_job(n, p)}: {found} found", "success"


def _contacts_failed(p: Payload, n: Names) -> tuple[str, Tone]:
    if p.get("status") == "canceled":
        return f"Stopped looking for contacts for {_job(n, p)}", "warning"
    return f"Looking for contacts for {_job(n, p)} failed{_because(p.get('errorCode'))}", "error"


SENTENCES: dict[str, Callable[[Payload, Names], tuple[str, Tone]]] = {
    "DiscoveryRunStarted": _discovery_started,
    "JobDiscovered": _job_discovered,
    "DiscoveryRunCompleted": _discovery_completed,
    "DiscoveryRunFailed": _discovery_failed,
    "WorkflowStarted": _run_started,
    "WorkflowCompleted": _run_completed,
    "WorkflowFailed": _run_failed,
    "WorkflowCanceled": _run_canceled,
    "WorkflowCancellationRequested": _cancellation_requested,
    "WorkflowReconciled": _reconciled,
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
    "ResumeApproved": _resume_approved,
    "ResumeFailed": _resume_failed,
    "CoverLetterGenerated": _cover_letter,
    "PdfRendered": _pdf_rendered,
    "JobUserStatusChanged": _user_status,
    "CandidateProfileUpdated": _profile_updated,
    "ProfileContinuationIntended": _continuation,
    "EnrichConditionResolved": _condition_resolved,
    "PreparationBudgetResumed": _budget_resumed,
    "PreparationInterruptedResumed": _interrupted_resumed,
    "ApplicationTracked": _application_tracked,
    "ApplicationUntracked": _application_untracked,
    "ApplicationOutcomeRecorded": _outcome_recorded,
    "ApplicationOutcomeUndone": _outcome_undone,
    "FollowUpScheduled": _follow_up("due"),
    "FollowUpSnoozed": _follow_up("moved to"),
    "FollowUpDone": _follow_up("done"),
    "FollowUpEmailRequested": _follow_up_email("is being sent", "info"),
    "FollowUpEmailSent": _follow_up_email("sent", "success"),
    "FollowUpEmailFailed": _follow_up_email("not sent", "error"),
    "InterviewScheduled": _interview_scheduled,
    "InterviewCanceled": _interview_canceled,
    "BatchBudgetResumed": _batch_budget_resumed,
    "ContactResearchBudgetResumed": _contact_budget_resumed,
    "PipelineStepQueued": _step("queued", "info"),
    "PipelineStepStarted": _step("started", "info"),
    "PipelineStepCompleted": _step("completed", "success"),
    "PipelineStepFailed": _step("failed", "error"),
    "ApplyApproved": _apply_approved,
    "ApplyRejected": _apply_rejected,
    "ApplyStarted": _apply_started,
    "ApplyAwaitingApproval": _apply_awaiting,
    "ApplyPacketReady": _apply_packet,
    "ApplySubmitted": _apply_submitted,
    "ApplyMarkedApplied": _apply_marked,
    "ApplyFailed": _apply_failed,
    "ApplyCanceled": _apply_canceled,
    "ContactResearchRequested": _contacts_requested,
    "ContactResearchStarted": _contacts_started,
    "ContactCandidateFound": _contact_found,
    "ContactResearchCompleted": _contacts_completed,
    "ContactResearchFailed": _contacts_failed,
}

GENERIC_SENTENCE = "JobCtrl recorded an update this version has no words for"


def technical_details(event_id: int, event_type: str, payload: Payload) -> tuple[tuple[str, str], ...]:
    """Everything the sentence leaves out, for a support conversation."""
    rows = [("Event", f"{event_type} #{event_id}")]
    for key in sorted(payload):
        value = payload[key]
        if value is None or value == [] or value == {}:
            continue
        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        rows.append((key, text))
    return tuple(rows)


def activity_line(event_type: str, payload: Payload, names: Names = Names()) -> ActivityLine:
    """The sentence for one event; a type or payload this version cannot read gets a safe
    generic sentence (never the raw type name). ``technical_details`` has the rest."""
    describe = SENTENCES.get(event_type)
    if describe is None:
        return ActivityLine(GENERIC_SENTENCE, "info")
    try:
        text, tone = describe(payload, names)
    except (TypeError, ValueError, AttributeError, KeyError):  # a malformed payload
        return ActivityLine(GENERIC_SENTENCE, "warning")
    return ActivityLine(text, tone)


def occurred_text(payload: Payload) -> str | None:
    """"At 14:03:12" in the user's local time, from the event's ``occurredAt``."""
    stamp = payload.get("occurredAt")
    if not stamp:
        return None
    try:
        when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).astimezone()
    except ValueError:
        return None
    return f"At {when:%H:%M:%S} on {when:%a %d %b}"
