"""Activity options and error helpers shared by the workflows (sandbox-safe)."""

from __future__ import annotations

from datetime import timedelta

from temporalio.common import RetryPolicy
from temporalio.exceptions import ActivityError, TimeoutError

NON_RETRYABLE = [
    "configuration", "authentication", "missing_input", "budget_exceeded",
    "source_payload_invalid",
]

BOOKKEEPING = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=5, non_retryable_error_types=NON_RETRYABLE),
}

# The spend preflight: one attempt, so a depleted budget is a clean fast failure.
PREFLIGHT = {
    "start_to_close_timeout": timedelta(seconds=30),
    "retry_policy": RetryPolicy(maximum_attempts=1),
}

STAGE_MAX_ATTEMPTS = 4


def stage_options(heartbeat_timeout_s: int = 120) -> dict:
    """A stage attempt may run 10 minutes; a worker that stops heartbeating for the
    heartbeat timeout (2 minutes by default) is presumed dead and the stage retried."""
    return {
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
