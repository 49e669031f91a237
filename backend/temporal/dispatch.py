"""Starting preparation workflows from the API (per job or for a whole stage)."""

from __future__ import annotations

from dataclasses import dataclass

from temporalio.client import Client
from temporalio.exceptions import WorkflowAlreadyStartedError

from backend.config import PREP_TASK_QUEUE
from backend.domain.stages import STAGES
from backend.pipeline.policy_rerun import POLICY_RERUNS, WORKFLOW_TYPE, policy_rerun_workflow_id
from backend.temporal.contracts import PrepInput, prep_workflow_id
from backend.temporal.policy_contracts import PolicyRerunInput


@dataclass(frozen=True)
class Started:
    workflow_id: str
    first_execution_run_id: str
    already_running: bool


def stages_from(stage: str) -> list[str]:
    """A stage and everything downstream of it."""
    return list(STAGES[STAGES.index(stage):])


async def start_preparation(
    client: Client, job_id: str, *, stages: list[str], force: list[str] | None = None,
    heartbeat_timeout_s: int = 120,
) -> Started:
    workflow_id = prep_workflow_id(job_id)
    try:
        handle = await client.start_workflow(
            "JobPreparationWorkflow",
            PrepInput(job_id=job_id, idempotency_key=job_id, stages=stages,
                      force_stages=force or [], heartbeat_timeout_s=heartbeat_timeout_s),
            id=workflow_id,
            task_queue=PREP_TASK_QUEUE,
        )
    except WorkflowAlreadyStartedError as running:
        return Started(workflow_id, running.run_id, True)
    return Started(workflow_id, handle.first_execution_run_id, False)


async def start_policy_rerun(client: Client, action: str, job_ids: list[str], *,
                             heartbeat_timeout_s: int = 120) -> Started:
    """Start the ``PolicyRerunWorkflow`` batch that prepares ``job_ids`` for ``action``
    (one Temporal call: the fan-out happens in the workflow). While a batch of the same
    action and job set runs, its execution is returned (``already_running``)."""
    rerun = POLICY_RERUNS[action]
    workflow_id = policy_rerun_workflow_id(action, job_ids)
    try:
        handle = await client.start_workflow(
            WORKFLOW_TYPE,
            PolicyRerunInput(action=action, job_ids=job_ids, stages=rerun.stages(),
                             force_stages=list(rerun.force),
                             heartbeat_timeout_s=heartbeat_timeout_s),
            id=workflow_id, task_queue=PREP_TASK_QUEUE,
        )
    except WorkflowAlreadyStartedError as running:
        return Started(workflow_id, running.run_id, True)
    return Started(workflow_id, handle.first_execution_run_id, False)
