"""Activity rows as sentences: every registered event type, the generic fallback, and the
technical details that keep what the sentence leaves out. Qt-free."""

from __future__ import annotations

import pytest

from backend.domain.events import EVENT_TYPES
from desktop.presenters.activity import (
    GENERIC_SENTENCE,
    SENTENCES,
    Names,
    activity_line,
    technical_details,
)
from desktop.presenters.sources import source_name, source_names
from tests.desktop.sample_events import sample_events
from tests.plain_words import findings

REGISTERED = [cls.event_type for cls in EVENT_TYPES]
JOB = "job_" + "0" * 23 + "1"
NAMES = Names(job={JOB: "Senior Backend Engineer at Northwind"}.get,
              source={"gh-acme": "acme (Greenhouse)"}.get)
RUN = {"discoverWorkflowId": "discover-local",
       "discoverRunId": "0192f3a4-5b6c-7d8e-9f00-112233445566"}
# Sample values a sentence may show: what the user or the posting wrote.
SHOWN_FIELDS = {"title", "company", "location", "name", "email", "recipient", "host"}


def line(event_type: str, names: Names = NAMES, **payload):
    return activity_line(event_type, payload, names)


def test_every_registered_event_type_has_a_sentence():
    assert set(SENTENCES) == set(REGISTERED)


@pytest.mark.parametrize("event", sample_events(), ids=lambda event: event.type)
def test_each_sample_event_reads_as_a_plain_sentence(event):
    text = line(event.type, **event.payload).text
    assert text != GENERIC_SENTENCE, event.type
    assert findings(text) == [], text
    assert text[0].isupper() and not text.endswith("."), text
    # No identity, code or provider value of the payload leaks into the sentence.
    leaked = [key for key, value in event.payload.items()
              if isinstance(value, str) and value.startswith("sample-")
              and key not in SHOWN_FIELDS and value in text]
    assert leaked == [], (event.type, leaked, text)


def test_the_issue_examples():
    assert line("JobScored", jobId=JOB, score=82, rationale="…", version=1,
                provider="offline", model="offline-heuristic").text == \
        "Scored Senior Backend Engineer at Northwind: fit 82"
    completed = line("DiscoveryRunCompleted", **RUN, status="completed", jobsObserved=234,
                     jobsNew=234, familiesSucceeded=["demo_board"], familiesFailed=[])
    assert (completed.text, completed.tone) == ("Found 234 jobs on Demo board", "success")
    step = line("PipelineStepCompleted", **RUN, stepKind="enrichment_pass",
                itemKey="enrichment_pass", attempt=1,
                counts={"succeededCount": 230, "failedCount": 4})
    assert step.text == "Finished reading the job postings: 230 done, 4 failed"


def test_a_saved_edit_says_how_many_claims_the_user_kept():
    kept = line("CoverLetterGenerated", jobId=JOB, generation=3, provider="user", model="edit",
                keptClaims=["I have also used Spark for three years"])
    assert kept.text == ("Cover letter written for Senior Backend Engineer at Northwind "
                         "(version 3), with 1 claim your profile does not hold, kept by you")
    assert line("ResumeApproved", jobId=JOB, generation=1, provider="offline", model="rules",
                keptClaims=[]).text == "Tailored résumé ready for Senior Backend Engineer at Northwind"


def test_discovery_rows():
    assert line("DiscoveryRunStarted", **RUN, families=["demo_board", "gh-acme"],
                progressTotal=4).text == \
        "Started looking for jobs on Demo board and acme (Greenhouse)"
    assert line("JobDiscovered", **RUN, jobId=JOB, title="Data Engineer", company="Initech",
                location=None, remote="hybrid", sourceFamily="demo_board").text == \
        "Found Data Engineer at Initech (hybrid)"
    partial = line("DiscoveryRunCompleted", **RUN, status="completed_with_issues",
                   jobsObserved=12, jobsNew=3, familiesSucceeded=["demo_board"],
                   familiesFailed=[{"family": "gh-acme", "errorCode": "source_unavailable"}])
    assert partial.text == ("Found 12 jobs on Demo board, 3 of them new; acme (Greenhouse) "
                            "could not be searched: the site did not answer")
    assert partial.tone == "warning"
    assert line("DiscoveryRunFailed", **RUN, status="canceled", errorCode="canceled",
                familiesFailed=[]).text == "Looking for jobs was canceled"
    # A source the names do not know: its id without code marks, never "demo_board"-style.
    assert line("PipelineStepStarted", Names(), **RUN, stepKind="source_family",
                itemKey="family:my_board", attempt=1).text == "Started searching my board"


def test_stage_rows_name_the_job_and_the_reason_in_words():
    assert line("StageStarted", jobId=JOB, stage="score", attempt=2).text == \
        "Started scoring Senior Backend Engineer at Northwind (try 2)"
    assert line("StageSkipped", jobId=JOB, stage="tailor", reason="below_min_fit_score").text == \
        "Skipped tailoring your résumé for Senior Backend Engineer at Northwind: " \
        "fit score below your minimum"
    assert line("StageFailed", jobId=JOB, stage="enrich", errorCode="ENRICH_POSTING_GONE",
                retryable=False).text == \
        "Reading the posting for Senior Backend Engineer at Northwind failed: " \
        "the posting is no longer online"
    assert line("StageCompleted", Names(), jobId="job_x", stage="pdf", durationMs=2500).text == \
        "Finished making the PDFs for a job in 2 s"


def test_a_code_without_words_is_left_out_not_shown():
    text = line("StageFailed", jobId=JOB, stage="score", errorCode="from_a_newer_backend",
                retryable=True).text
    assert text == "Scoring Senior Backend Engineer at Northwind failed; trying again"


def test_workflow_rows_use_the_run_names():
    prep = {"workflowId": f"prep-{JOB}-r1", "runId": "0192f3a4-5b6c-7d8e-9f00-112233445566",
            "workflowType": "JobPreparationWorkflow"}
    assert line("WorkflowStarted", **prep).text == \
        "Started preparing Senior Backend Engineer at Northwind"
    assert line("WorkflowCompleted", **prep).text == \
        "Finished preparing Senior Backend Engineer at Northwind"
    assert line("WorkflowFailed", **prep, errorCode="budget_exceeded").text == \
        "Preparing Senior Backend Engineer at Northwind failed: today's budget is used up"
    assert line("WorkflowStarted", workflowId="discover-local", runId="r",
                workflowType="DiscoverWorkflow").text == "Started the Discover run"
    assert line("WorkflowCancellationRequested", workflowId="discover-local", runId="r",
                workflowType="DiscoverWorkflow", requester="local_operator",
                sourceBoundary="request_intent", requestedAt="t").text == \
        "Asked to stop the Discover run"
    assert line("WorkflowReconciled", workflowId="discover-local", runId="r",
                workflowType="DiscoverWorkflow", verdict="reconciled_not_found").text == \
        "JobCtrl cannot confirm yet how the Discover run ended and checks again"
    assert line("WorkflowCompleted", workflowId="profile-continuation-3", runId="r",
                workflowType="PreparationContinuationWorkflow").text == \
        "Finished preparing the jobs waiting on a change"
    assert line("WorkflowStarted", workflowId="x", runId="r",
                workflowType="SomethingNewWorkflow").text == "Started a background task"


def test_unknown_types_and_malformed_payloads_get_the_generic_sentence():
    unknown = line("FromANewerBackend", foo="bar")
    assert (unknown.text, unknown.tone) == (GENERIC_SENTENCE, "info")
    broken = line("PdfRendered", jobId=JOB, kind="resume_pdf", pages="many", bytes=10)
    assert (broken.text, broken.tone) == (GENERIC_SENTENCE, "warning")
    assert findings(GENERIC_SENTENCE) == []


def test_technical_details_keep_type_ids_codes_and_model():
    details = dict(technical_details(7, "JobScored", {
        "jobId": JOB, "workflowId": "prep-x", "runId": "r-1", "score": 82,
        "provider": "offline", "model": "offline-heuristic", "location": None}))
    assert details["Event"] == "JobScored #7"
    assert (details["jobId"], details["workflowId"], details["runId"]) == (JOB, "prep-x", "r-1")
    assert (details["provider"], details["model"], details["score"]) == (
        "offline", "offline-heuristic", "82")
    assert "location" not in details  # absent facts are not listed


def test_source_names():
    assert source_name({"kind": "demo_board", "id": "demo_board"}) == "Demo board"
    assert source_name({"kind": "greenhouse", "id": "gh-acme", "boardToken": "acme"}) == \
        "acme (Greenhouse)"
    assert source_name({"kind": "lever", "id": "x", "company": "globex",
                        "companyName": "Globex Corp"}) == "Globex Corp (Lever)"
    assert source_name({"kind": "feed", "id": "f", "url": "https://example.org/jobs.rss"}) == \
        "jobs.rss (feed)"
    assert source_names([{"kind": "ashby", "id": "ashby-initech", "boardName": "initech"}]) == \
        {"ashby-initech": "initech (Ashby)"}
