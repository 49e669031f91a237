"""ContactResearchWorkflow (``contacts-{jobId}-{seq}``): supervised contact research for
one job. It runs only when the user starts it (no schedule, no automation): open the
task, the spend preflight (``check_spend_budget``, exactly as JobPreparationWorkflow),
research (read sources, extract candidates, commit them), close the task."""

from __future__ import annotations

from functools import partial

from temporalio import workflow

with workflow.unsafe.imports_passed_through():
    from backend.temporal.activities.contacts import (
        ContactCloseInput,
        ContactResearchOutcome,
        ContactTaskInput,
    )
    from backend.temporal.start_contracts import CONTACT_RESEARCH_WORKFLOW_TYPE, ContactResearchInput
    from backend.temporal.workflows.common import (
        BOOKKEEPING,
        check_spend,
        closing_on_error,
        current_run,
        stage_options,
    )

WORKFLOW_TYPE = CONTACT_RESEARCH_WORKFLOW_TYPE
PAID_CALLS = 1  # one candidate extraction


@workflow.defn(name=WORKFLOW_TYPE)
class ContactResearchWorkflow:
    @workflow.run
    async def run(self, input: ContactResearchInput) -> ContactResearchOutcome:
        run = current_run(WORKFLOW_TYPE)
        task = ContactTaskInput(run=run, job_id=input.job_id, task_id=input.task_id)
        await workflow.execute_activity("open_contact_research", task, **BOOKKEEPING)
        async with closing_on_error("contact research", partial(self._close, task)):
            await check_spend(run, PAID_CALLS)
            outcome = await workflow.execute_activity(
                "research_contact_candidates", task, result_type=ContactResearchOutcome,
                **stage_options())
        await self._close(task, "completed")
        return outcome

    async def _close(self, task: ContactTaskInput, outcome: str,
                     error_code: str | None = None) -> None:
        await workflow.execute_activity(
            "close_contact_research",
            ContactCloseInput(run=task.run, job_id=task.job_id, task_id=task.task_id,
                              outcome=outcome, error_code=error_code),
            **BOOKKEEPING)
