"""Activity options, error helpers and the activity calls every run makes the same way,
shared by the workflows (sandbox-safe: imported through ``imports_passed_through``, and
every helper only schedules activities exactly as the workflows did inline, or, behind
:data:`LOCAL_BOOKKEEPING_PATCH`, runs the bookkeeping ones as local activities)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import timedelta
from types import TracebackType

from temporalio import workflow
from temporalio.common import Priority, RetryPolicy
from temporalio.exceptions import (
    ActivityError,
    ApplicationError,
    TimeoutError,
    is_cancelled_exception,
)

from backend.temporal.activities.spend import PreflightInput
from backend.temporal.contracts import RunRef, StageFailureInput, WorkflowLifecycleInput

NON_RETRYABLE = [
    "configuration", "authentication", "missing_input", "budget_exceeded",
    "source_payload_invalid", "source_budget_share_reached",
]

BOOKKEEPING = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5, non_retryable_error_types=NON_RETRYABLE),
}

# The spend preflight: a depleted budget is a clean fast failure (``budget_exceeded`` is
# non-retryable), but a worker that died mid-check or a timed-out attempt is retried — one
# lost attempt must never end a job's preparation (issue 20). Admission is idempotent per
# run, so a retried check never reserves twice.
PREFLIGHT = {
    "start_to_close_timeout": timedelta(seconds=10),
    "retry_policy": RetryPolicy(initial_interval=timedelta(seconds=1), backoff_coefficient=2.0,
                                maximum_interval=timedelta(seconds=10), maximum_attempts=4,
                                non_retryable_error_types=NON_RETRYABLE),
}

STAGE_MAX_ATTEMPTS = 4

# Depth first: a job's later stage goes ahead of other jobs' earlier ones in the task
# queue (Temporal's priority keys: 1 runs first, 3 is the default every other activity
# keeps). So the first high-fit job has its résumé, letter and PDFs within seconds of its
# score, instead of after the whole board's Enrich and Score — the first thing a job
# seeker can use, and the first measured Tailor/Cover/PDF durations the ETA needs.
STAGE_PRIORITY: dict[str, int] = {"enrich": 5, "score": 4, "tailor": 3, "cover": 2, "pdf": 1}


def stage_options(heartbeat_timeout_s: int = 120, stage: str | None = None) -> dict:
    """A stage attempt may run 10 minutes; a worker that stops heartbeating for the
    heartbeat timeout (2 minutes by default) is presumed dead and the stage retried.
    A pipeline stage also gets its place in the queue (:data:`STAGE_PRIORITY`)."""
    priority = {"priority": Priority(priority_key=STAGE_PRIORITY[stage])} if stage else {}
    return {
        **priority,
        "start_to_close_timeout": timedelta(minutes=10),
        "heartbeat_timeout": timedelta(seconds=heartbeat_timeout_s),
        "retry_policy": RetryPolicy(
            initial_interval=timedelta(seconds=2),
            backoff_coefficient=2.0,
            maximum_interval=timedelta(seconds=30),
            maximum_attempts=STAGE_MAX_ATTEMPTS,
            non_retryable_error_types=NON_RETRYABLE,
        ),
    }


def failure_code(error: ActivityError) -> tuple[str, bool]:
    """(bounded code, retryable) of a failed activity, from its typed cause."""
    cause = error.cause
    if isinstance(cause, TimeoutError):
        return "activity_timeout", True
    code = getattr(cause, "type", None) or "activity_failed"
    non_retryable = bool(getattr(cause, "non_retryable", False)) or code in NON_RETRYABLE
    return code, not non_retryable


def error_code_of(error: BaseException) -> str:
    """The bounded code a run ends with: a failed activity's typed cause, else the
    application error's own type."""
    if isinstance(error, ActivityError):
        return failure_code(error)[0]
    return getattr(error, "type", None) or "workflow_failed"


def run_failed(what: str, code: str) -> ApplicationError:
    """The terminal, non-retryable error a run raises after recording its failure."""
    return ApplicationError(f"{what} failed: {code}", type=code, non_retryable=True)


# close(outcome, error_code=None): records a run's terminal outcome ("canceled" / "failed").
CloseRun = Callable[..., Awaitable[None]]
RUN_ERRORS = (asyncio.CancelledError, ActivityError, ApplicationError)


class closing_on_error:  # lower case: used like a function, ``async with closing_on_error(...)``
    """The end every run body shares: a cancellation records ``canceled`` (after
    ``on_cancel``) and propagates; any other failure records ``failed`` with its bounded
    code and ends the run with :func:`run_failed`. It schedules exactly the activities the
    workflows scheduled inline, in the same order, so histories replay unchanged. (A plain
    class, not an async generator, so nothing is left for a finalizer on eviction.)"""

    def __init__(self, what: str, close: CloseRun,
                 on_cancel: Callable[[], Awaitable[None]] | None = None) -> None:
        self._what, self._close, self._on_cancel = what, close, on_cancel

    async def __aenter__(self) -> None:
        return None

    async def __aexit__(self, error_type: type[BaseException] | None,
                        error: BaseException | None, traceback: TracebackType | None) -> bool:
        if error is None or not isinstance(error, RUN_ERRORS):
            return False
        if is_cancelled_exception(error):
            if self._on_cancel is not None:
                await self._on_cancel()
            await self._close("canceled")
            return False  # the cancellation propagates as it came
        code = error_code_of(error)
        await self._close("failed", code)
        raise run_failed(self._what, code) from None


def current_run(workflow_type: str) -> RunRef:
    info = workflow.info()
    return RunRef(workflow_id=info.workflow_id, run_id=info.run_id, workflow_type=workflow_type)


# A job's bookkeeping (its spend preflight and its two lifecycle records) may run as local
# activities: the same functions, run by the worker that holds the workflow task, instead of
# a round trip each through Temporal's task queue (three of a job's eight activities; every
# one is idempotent, so a workflow task retried after a lost worker may run it again, as a
# retried activity could). Only a workflow whose worker registers these activities opts in
# (``local=True``). A run recorded before this patch replays with the activities it scheduled.
LOCAL_BOOKKEEPING_PATCH = "local-bookkeeping-v1"


async def _bookkeeping(activity: str, arg: object, options: dict, *, local: bool,
                       result_type: type | None = None) -> object:
    if local and workflow.patched(LOCAL_BOOKKEEPING_PATCH):
        return await workflow.execute_local_activity(activity, arg, result_type=result_type,
                                                     **options)
    return await workflow.execute_activity(activity, arg, result_type=result_type, **options)


async def check_spend(run: RunRef, paid_calls: int, *, local: bool = False, **options) -> None:
    """The spend preflight (``check_spend_budget``; retried on infrastructure faults only)."""
    await _bookkeeping(
        "check_spend_budget",
        PreflightInput(workflow_id=run.workflow_id, run_id=run.run_id, paid_calls=paid_calls),
        {**options, **PREFLIGHT}, local=local)


async def record_lifecycle(run: RunRef, outcome: str, summary: dict,
                           error_code: str | None = None, job_id: str | None = None,
                           activity: str = "record_workflow_lifecycle", *,
                           local: bool = False) -> None:
    await _bookkeeping(
        activity,
        WorkflowLifecycleInput(run=run, job_id=job_id, outcome=outcome,
                               error_code=error_code, input_summary=summary),
        BOOKKEEPING, local=local)


async def reconcile_stage(run: RunRef, job_id: str, stage: str,
                          error: ActivityError) -> tuple[str, str]:
    """The mandatory step after a stage gave up: (failure code, the stage row's status,
    which is ``succeeded`` when the result was committed before the activity died)."""
    code, retryable = failure_code(error)
    status = await workflow.execute_activity(
        "reconcile_stage_failure",
        StageFailureInput(run=run, job_id=job_id, stage=stage, error_code=code,
                          retryable=retryable, attempts=STAGE_MAX_ATTEMPTS),
        result_type=str, **BOOKKEEPING)
    return code, status
