"""The backstop of a lowered fit threshold.

A settings save that lowers ``minFitScore`` starts one ``PolicyRerunWorkflow`` for the
jobs the new threshold clears, right after the save. That start is lost when the API dies
between the save and the start, and a job that was still being prepared at that moment
(so the save left it out) may have had its Tailor skipped under the old threshold just
after. Nothing else would ever prepare those jobs. Each reconcile pass of the worker
therefore starts the same batch for the jobs that clear the current threshold and whose
preparation has not been started since their Tailor was skipped; a job whose preparation
then stops short (budget, a failure, a cancel) is that run's business, not this pass's."""

from __future__ import annotations

import logging

from temporalio.client import Client

from backend.config import AppPaths, load_settings
from backend.pipeline.policy_rerun import WORKFLOW_TYPE as POLICY_RERUN_TYPE
from backend.store.db import Database
from backend.store.run_records import has_running_run_of_type
from backend.store.staleness import undispatched_threshold_cleared_jobs
from backend.temporal.dispatch import Started, start_policy_rerun

log = logging.getLogger(__name__)


async def dispatch_threshold_cleared(db: Database, client: Client, paths: AppPaths
                                     ) -> Started | None:
    """Start the batch for the undispatched threshold-cleared jobs; None when there are none."""
    if await has_running_run_of_type(db, POLICY_RERUN_TYPE):
        # The save's own batch is starting its jobs' preparations right now: a second
        # batch for the ones it has not reached yet would race it for them. The next pass
        # looks again once it has closed.
        return None
    settings = load_settings(paths)
    job_ids = await undispatched_threshold_cleared_jobs(db, min_fit_score=settings.min_fit_score)
    if not job_ids:
        return None
    started = await start_policy_rerun(client, "threshold_cleared", job_ids,
                                       heartbeat_timeout_s=settings.stage_heartbeat_timeout_s)
    log.info("threshold backstop: %s jobs cleared by minFitScore %s were never dispatched;"
             " batch %s", len(job_ids), settings.min_fit_score, started.workflow_id)
    return started


async def dispatch_threshold_cleared_safely(db: Database, client: Client, paths: AppPaths) -> None:
    try:
        await dispatch_threshold_cleared(db, client, paths)
    except Exception:  # noqa: BLE001 - the next pass tries again
        log.exception("threshold backstop pass failed")

