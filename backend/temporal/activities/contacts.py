"""Contact research activities: open the task, research (read sources, extract
candidates with the configured model, commit them) and close the task.

Research reads the posting's stored text always and fetches only the public sources the
user opted into (``contactResearchSources``). Paid model calls are metered into the
``llm_spend`` ledger; the spend preflight (``check_spend_budget``) runs before research.
A retry that finds the task's candidates committed returns them without another call."""

from __future__ import annotations

import asyncio
import logging
from typing import Literal

import httpx
from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, AppSettings, load_settings
from backend.contacts import extract
from backend.domain.contact_policy import POSTING_TEXT, ContactSourceConfig, source_url
from backend.domain.contacts import SourceAttempt, SourceDocument
from backend.domain.model import CamelModel
from backend.llm.admission import Basis, readmit_call
from backend.llm.admission import release as release_reservation
from backend.llm.budget import BudgetExceededError
from backend.llm.rates import load_rates
from backend.pipeline import enrich as enrich_logic
from backend.pipeline.access_grants import user_chosen_origins
from backend.sources.net_guard import guarded_client
from backend.store import contacts as store
from backend.store import materials
from backend.store.db import Database
from backend.store.jobs import read_job
from backend.temporal.activities.heartbeating import heartbeating
from backend.temporal.activities.lifecycle import record_run_started, record_run_terminal
from backend.temporal.contracts import RunRef
from backend.temporal.llm_access import build_provider, typed_failure
from backend.temporal.start_contracts import ContactResearchInput  # noqa: F401 - re-exported

log = logging.getLogger(__name__)

FETCH_TIMEOUT_S = 20


class ContactTaskInput(CamelModel):
    run: RunRef
    job_id: str
    task_id: str


class ContactCloseInput(ContactTaskInput):
    outcome: Literal["completed", "failed", "canceled"]
    error_code: str | None = None


class ContactResearchOutcome(CamelModel):
    candidate_count: int
    source_attempts: list[SourceAttempt]
    reused: bool = False  # committed by an earlier attempt: no new call was made


def _missing(what: str) -> ApplicationError:
    return ApplicationError(what, type="missing_input", non_retryable=True)


class ContactActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths
        self._robots = enrich_logic.RobotsCache()

    async def _task(self, conn, task_id: str) -> store.TaskRow:
        task = await store.read_task(conn, task_id)
        if task is None:
            raise _missing("unknown contact research task")
        return task

    @activity.defn(name="open_contact_research")
    async def open_contact_research(self, input: ContactTaskInput) -> None:
        run = input.run
        async with self._db.transaction() as conn:
            task = await self._task(conn, input.task_id)
            await record_run_started(
                conn, run, job_id=input.job_id,
                input_summary={"jobId": input.job_id, "taskId": input.task_id})
            await store.mark_started(conn, task, run_id=run.run_id)

    @activity.defn(name="research_contact_candidates")
    async def research_contact_candidates(self, input: ContactTaskInput
                                          ) -> ContactResearchOutcome:
        async with self._db.transaction() as conn:
            task = await self._task(conn, input.task_id)
            job = await _job(conn, input.job_id)
            enrichment = await materials.read_enrichment(conn, input.job_id)
        if task.extracted_at is not None:
            return ContactResearchOutcome(candidate_count=task.candidate_count or 0,
                                          source_attempts=task.source_attempts, reused=True)
        settings = load_settings(self._paths)  # re-read: the source policy may have changed
        try:
            async with heartbeating():
                documents, attempts = await self._collect(job, enrichment, settings)
                async with self._db.transaction() as conn:
                    await store.save_source_attempts(conn, task.task_id, attempts)
                provider = build_provider(self._paths, self._db, settings)
                await self._readmit(input, settings, provider)
                candidates = await self._extract(provider, job, documents)
        except Exception as error:
            typed = typed_failure(error)
            if typed is None:
                raise
            raise typed from None
        async with self._db.transaction() as conn:
            current = await self._task(conn, input.task_id)
            committed = current.extracted_at is None and await store.commit_candidates(
                conn, current, company=job["company"], candidates=candidates,
                provider=provider.name, model=provider.model, run_id=input.run.run_id)
        if not committed and current.status in store.TERMINAL:
            # Canceled or terminated while we were extracting: the closed task keeps
            # what it had when it closed.
            log.info("contact research task %s closed (%s) during extraction; nothing kept",
                     current.task_id, current.status)
        return ContactResearchOutcome(candidate_count=len(candidates), source_attempts=attempts)

    async def _readmit(self, input: ContactTaskInput, settings, provider) -> None:
        """The run was admitted under one provider and model: a call under another one (the
        settings changed since) is admitted again first, or refused with the typed
        ``budget_exceeded`` before any call."""
        async with self._db.transaction() as conn:
            admission = await readmit_call(
                conn, settings, load_rates(self._paths), run_id=input.run.run_id,
                workflow_id=input.run.workflow_id, job_id=input.job_id, stage="contacts",
                basis=Basis.of(provider))
        if not admission.admitted:
            raise BudgetExceededError(admission.status)

    async def _extract(self, provider, job: dict, documents: list[SourceDocument]):
        if provider.is_offline:
            return extract.offline_candidates(documents)
        completion = await provider.complete(
            system=extract.CONTACT_SYSTEM,
            user=extract.contact_prompt(title=job["title"], company=job["company"],
                                        documents=documents),
            json_mode=True)
        return extract.parse_model_candidates(completion.text, documents)

    async def _collect(self, job: dict, enrichment, settings: AppSettings
                       ) -> tuple[list[SourceDocument], list[SourceAttempt]]:
        """The stored posting text, then each opted-in public source (nothing else)."""
        sources = settings.contact_research_sources
        text = _posting_text(job, enrichment)
        documents = [SourceDocument(POSTING_TEXT, job["url"], text)]
        attempts = [SourceAttempt(source_id=POSTING_TEXT, kind="posting_text", url=job["url"],
                                  status="used", chars=len(text))]
        if not sources:
            return documents, attempts
        async with guarded_client(  # the job's link comes from the posting: keep off the LAN
            user_chosen_origins(settings), timeout=FETCH_TIMEOUT_S,
            headers={"User-Agent": enrich_logic.USER_AGENT},
        ) as client:
            for source in sources:
                url = source_url(source, job_url=job["url"], company=job["company"])
                document, attempt = await self._fetch(client, source, url)
                attempts.append(attempt)
                if document is not None:
                    documents.append(document)
        return documents, attempts

    async def _fetch(self, client: httpx.AsyncClient, source: ContactSourceConfig, url: str
                     ) -> tuple[SourceDocument | None, SourceAttempt]:
        """One source; its failure is recorded as an attempt and never fails the research."""
        base = {"source_id": source.id, "kind": source.kind, "url": url}
        try:
            html = await enrich_logic.fetch_posting_page(url, client=client, robots=self._robots)
        except enrich_logic.EnrichBlocked as blocked:
            return None, SourceAttempt(**base, status="blocked", error_code=blocked.code)
        except enrich_logic.EnrichError as failed:
            return None, SourceAttempt(**base, status="failed", error_code=failed.code)
        text = await asyncio.to_thread(extract.page_text, html)
        return (SourceDocument(source.id, url, text),
                SourceAttempt(**base, status="fetched", chars=len(text)))

    @activity.defn(name="close_contact_research")
    async def close_contact_research(self, input: ContactCloseInput) -> None:
        run = input.run
        async with self._db.transaction() as conn:
            task = await self._task(conn, input.task_id)
            await release_reservation(conn, run.run_id)
            await store.finish_task(conn, task, run_id=run.run_id, outcome=input.outcome,
                                    error_code=input.error_code)
            await record_run_terminal(conn, run, outcome=input.outcome,
                                      error_code=input.error_code, job_id=input.job_id)


async def _job(conn, job_id: str) -> dict:
    job = await read_job(conn, job_id, _JOB_COLUMNS)
    if job is None:
        raise _missing("unknown job")
    return job


_JOB_COLUMNS = ("job_id", "url", "title", "company", "description_html")


def _posting_text(job: dict, enrichment) -> str:
    """The stored description: the enriched text when there is one, else the source's."""
    if enrichment is not None and enrichment.description_text:
        return enrichment.description_text
    if job["description_html"]:
        return extract.page_text(job["description_html"])
    return f"{job['title']} at {job['company']}"
