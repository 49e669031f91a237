"""What a starter needs to start or find a workflow — its type name, its id, its input —
without importing the workflow's module, which imports every activity it calls (and their
libraries). The API and the worker's loops start workflows from these; the workflow
modules re-export them. Pure data: safe inside the workflow sandbox.

Kept apart for start-up time: the API imported ~110 modules (~0.2 s of CPU) through the
workflow modules for these few names (bench/README.md, "Start-up after issue 18, session 5").
"""

from __future__ import annotations

from pydantic import Field

from backend.domain.model import CamelModel

APPLY_WORKFLOW_TYPE = "ApplyWorkflow"
APPLY_LOOP_WORKFLOW_ID = "apply-auto-local"
FOLLOW_UP_WORKFLOW_TYPE = "FollowUpEmailWorkflow"
CONTACT_RESEARCH_WORKFLOW_TYPE = "ContactResearchWorkflow"
DISCOVER_WORKFLOW_ID = "discover-local"


def apply_workflow_id(job_key: str) -> str:
    return f"apply-{job_key}"


class ApplyWorkflowInput(CamelModel):
    job_key: str | None = None
    continuous: bool = False
    auto_apply_loop: bool = False
    poll_interval_s: int = Field(default=3, ge=1, le=3600)
    heartbeat_timeout_s: int = Field(default=120, ge=5, le=600)


class FollowUpWorkflowInput(CamelModel):
    job_key: str
    round: int
    heartbeat_timeout_s: int = 120


class ContactResearchInput(CamelModel):
    """Input of ``ContactResearchWorkflow`` (id ``contacts-{jobId}-{seq}``)."""

    job_id: str
    task_id: str
