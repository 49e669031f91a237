"""Per-job stage activities: Enrich, Score, Tailor, Cover, PDF.

Every stage runs the same way: decide pickup and claim ownership (one transaction), do
the I/O (page fetch, model call, rendering) outside any transaction, then commit the
result, the stage transition and its events together — only if this run still owns the
stage. A retry of the same run that finds its result already committed does nothing.

Score, Tailor and Cover import their logic (``backend.pipeline``'s fit rules, writers and
truth gate) when they first run, not when the worker starts: the worker is ready sooner,
and the first job pays the import once (tests/integration/test_start_order.py).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

from temporalio import activity
from temporalio.exceptions import ApplicationError

from backend.config import AppPaths, AppSettings, load_settings
from backend.domain.fit import FitLedger
from backend.domain.profile import CandidateProfile
from backend.faults import fault_point
from backend.llm.admission import SOURCE_SHARE_REACHED, Basis, admit_source_call, readmit_call
from backend.llm.base import ChatProvider
from backend.llm.budget import BudgetExceededError, SourceShareReachedError
from backend.llm.rates import load_rates
from backend.pipeline import enrich as enrich_logic
from backend.pipeline.access_grants import GrantedRobots, user_chosen_origins
from backend.pipeline.documents import CoverLetterDoc, ResumeDoc
from backend.pipeline.eligibility import (
    EnrichmentFacts,
    PickupFacts,
    StageFacts,
    decide_pickup,
)
from backend.sources.net_guard import guarded_client
from backend.store import materials, stages
from backend.store.condition_jobs import granted_hosts
from backend.store.db import Database
from backend.store.jobs import read_job
from backend.store.profile import read_profile
from backend.temporal.activities.heartbeating import heartbeating
from backend.temporal.activities.lifecycle import record_run_lifecycle
from backend.temporal.contracts import (
    RunRef,
    StageFailureInput,
    StageInput,
    StageOutcome,
    WorkflowLifecycleInput,
)
from backend.temporal.llm_access import build_provider, typed_failure

if TYPE_CHECKING:
    from backend.pipeline import score as score_logic

Commit = Callable[["object", int], Awaitable[None]]  # (conn, new result version)
PAID_STAGES = ("score", "tailor", "cover")  # the stages that may call a paid model


class BlockStage(Exception):
    """The stage cannot run for a typed reason (e.g. robots.txt); not a failure."""

    def __init__(self, reason: str, commit: Callable | None = None):
        super().__init__(reason)
        self.reason = reason
        self.commit = commit


@dataclass
class JobFacts:
    job: dict
    profile_revision: int
    profile: CandidateProfile | None
    enrichment: materials.EnrichmentRow | None
    score: materials.ScoreRow | None
    settings: AppSettings
    # Paid stages: the provider the stage was admitted for (built once, before the claim).
    provider: ChatProvider | None = None
    # The job's stage rows as the claim read them (the PDF stage names its folder after
    # the next generation), and the stored materials a stage renders or builds on — read
    # in the claim's transaction, not in one more of their own.
    rows: dict[str, stages.StageRow] | None = None
    stored: dict[str, tuple[int, dict] | None] | None = None

    def job_text(self) -> score_logic.JobText:
        from backend.pipeline import score as score_logic

        return score_logic.JobText(
            title=self.job["title"], company=self.job["company"], location=self.job["location"],
            remote=self.job["remote"],
            description=(self.enrichment.description_text if self.enrichment else "") or "",
            salary_min=self.job["salary_min"], salary_max=self.job["salary_max"],
            salary_currency=self.job["salary_currency"],
        )

    def score_result(self) -> score_logic.ScoreResult:
        from backend.pipeline import score as score_logic

        s = self.score
        ledger = FitLedger.model_validate(s.ledger) if s.ledger else None
        return score_logic.ScoreResult(s.score, s.rationale, s.matched, s.missing, ledger)


def _owner(run: RunRef) -> stages.Owner:
    return stages.Owner(run.workflow_id, run.run_id, activity.info().attempt)


def _run_ids(run: RunRef) -> materials.RunIds:
    return materials.RunIds(run.workflow_id, run.run_id)


class PreparationActivities:
    def __init__(self, db: Database, paths: AppPaths):
        self._db = db
        self._paths = paths
        self._robots = enrich_logic.RobotsCache()

    # -- the shared stage runner -----------------------------------------------------------

    async def _facts(self, conn, job_id: str, settings: AppSettings) -> JobFacts:
        job = await read_job(conn, job_id)
        if job is None:
            raise ApplicationError("unknown job", type="missing_input", non_retryable=True)
        stored_profile = await read_profile(conn)
        return JobFacts(
            job=job,
            profile_revision=stored_profile[0] if stored_profile else 0,
            profile=stored_profile[1] if stored_profile else None,
            enrichment=await materials.read_enrichment(conn, job_id),
            score=await materials.latest_score(conn, job_id),
            settings=settings,
        )

    async def _decide(self, conn, input: StageInput, facts: JobFacts):
        rows = facts.rows = await stages.ensured_rows(conn, input.job_id)
        enrichment = facts.enrichment
        return decide_pickup(PickupFacts(
            stage=input.stage,
            states={name: StageFacts(r.status, r.owner_run_id, r.blocked_reason)
                    for name, r in rows.items()},
            enrichment=EnrichmentFacts(
                enrichment.current_status, bool(enrichment.description_text),
                enrichment.confidence, enrichment.blocked_reason,
            ) if enrichment else None,
            latest_score=facts.score.score if facts.score else None,
            min_fit_score=facts.settings.min_fit_score,
            has_profile=facts.profile is not None and not facts.profile.is_empty(),
            user_status=facts.job["user_status"],
            force=input.force,
            current_run_id=input.run.run_id,
            prepare_anyway=facts.job.get("prepare_anyway_at") is not None,
        ))

    async def _run_stage(
        self, input: StageInput, work: Callable[[JobFacts], Awaitable[Commit]]
    ) -> StageOutcome:
        owner = _owner(input.run)
        settings = load_settings(self._paths)
        provider, unusable = self._stage_provider(input.stage, settings)
        admission = None
        async with self._db.transaction() as conn:
            facts = await self._facts(conn, input.job_id, settings)
            facts.provider = provider
            decision = await self._decide(conn, input, facts)
            if decision.kind == "run":
                await stages.claim(conn, input.job_id, input.stage, owner, rows=facts.rows)
                facts.stored = await _stored_inputs(conn, input.job_id, input.stage)
                if provider is not None and not provider.is_offline:
                    # An offline call costs nothing: no re-admission to read or reserve.
                    admission = await self._admit_source(conn, settings, provider, facts.job)
                    if admission.admitted:
                        admission = await self._readmit(conn, input, settings, provider)
            elif decision.kind in ("blocked", "skipped"):
                await stages.settle(conn, input.job_id, input.stage, status=decision.kind,
                                    reason=decision.reason, owner=owner)
        if decision.kind != "run":
            status = "succeeded" if decision.kind == "done" else decision.kind
            return StageOutcome(stage=input.stage, status=status, reason=decision.reason)
        try:
            async with heartbeating():
                if unusable is not None:  # e.g. a paid provider without its key
                    raise unusable
                if admission is not None and not admission.admitted:
                    # Not admitted (its source used its share of the day, or the model
                    # the settings name now does not fit): no call; the job resumes
                    # through the budget-resume path once there is room.
                    if admission.reason == SOURCE_SHARE_REACHED:
                        raise SourceShareReachedError(
                            admission.status, settings.max_source_share_of_daily_budget)
                    raise BudgetExceededError(admission.status)
                commit = await work(facts)
        except BlockStage as block:
            return await self._block(input, owner, block)
        except Exception as error:
            typed = typed_failure(error)
            if typed is None:
                raise
            raise typed from None
        async with self._db.transaction() as conn:
            # One read of the rows for the ownership check, the new version and the
            # completion (the result commit writes no stage row).
            rows = await stages.read_rows(conn, input.job_id)
            if not await stages.still_owned(conn, input.job_id, input.stage, owner, rows=rows):
                return StageOutcome(stage=input.stage, status="deferred", reason="ownership_lost")
            await commit(conn, rows[input.stage].result_version + 1)
            await stages.complete(conn, input.job_id, input.stage, owner, rows=rows)
            # A death here, written but not committed, must lose the whole result.
            fault_point(self._paths, f"in-commit-{input.stage}")
        fault_point(self._paths, f"after-commit-{input.stage}")
        return StageOutcome(stage=input.stage, status="succeeded")

    def _stage_provider(self, stage: str, settings: AppSettings
                        ) -> tuple[ChatProvider | None, Exception | None]:
        """The provider a paid stage will call, from the settings of this moment, or the
        typed reason there is none (raised once the stage is claimed, as a failure)."""
        if stage not in PAID_STAGES:
            return None, None
        try:
            return build_provider(self._paths, self._db, settings), None
        except Exception as error:  # noqa: BLE001 - typed ones fail the stage, others raise
            if typed_failure(error) is None:
                raise
            return None, error

    async def _admit_source(self, conn, settings: AppSettings, provider: ChatProvider,
                            job: dict):
        """The job's source may spend at most its share of the day's ceiling: refused
        (``source_budget_share_reached``) when one more call would pass it. Admitted, the
        provider counts its calls against that source."""
        source = job.get("first_source")
        if hasattr(provider, "source"):  # the metered provider of a paid model
            provider.source = source
        return await admit_source_call(conn, settings, load_rates(self._paths), source=source,
                                       basis=Basis.of(provider))

    async def _readmit(self, conn, input: StageInput, settings: AppSettings,
                       provider: ChatProvider):
        """The run was admitted under one provider and model; a call under another one (the
        settings changed mid-run) is admitted again first, in the claim's transaction."""
        return await readmit_call(
            conn, settings, load_rates(self._paths), run_id=input.run.run_id,
            workflow_id=input.run.workflow_id, job_id=input.job_id, stage=input.stage,
            basis=Basis.of(provider))

    async def _block(self, input: StageInput, owner, block: BlockStage) -> StageOutcome:
        async with self._db.transaction() as conn:
            if block.commit is not None:
                await block.commit(conn)
            await stages.settle(conn, input.job_id, input.stage, status="blocked",
                                reason=block.reason, owner=owner)
        return StageOutcome(stage=input.stage, status="blocked", reason=block.reason)

    # -- Enrich ----------------------------------------------------------------------------

    @activity.defn(name="enrich_job")
    async def enrich_job(self, input: StageInput) -> StageOutcome:
        return await self._run_stage(input, lambda facts: self._enrich(input, facts))

    async def _enrich(self, input: StageInput, facts: JobFacts) -> Commit:
        # HTML parsing is CPU work: keep it off the worker's event loop.
        extraction = await asyncio.to_thread(
            enrich_logic.description_from_source, facts.job["description_html"])
        origin = "source"
        if extraction is None or extraction.confidence != "high":
            async with self._db.transaction() as conn:
                # Hosts the user allowed (resolving ENRICH_ROBOTS_DISALLOWED) skip robots.
                granted = await granted_hosts(conn)
            robots = GrantedRobots(self._robots, granted)
            try:
                # The posting chose this link: the guard keeps it off the user's own network.
                async with guarded_client(
                    user_chosen_origins(facts.settings, granted),
                    timeout=20, headers={"User-Agent": enrich_logic.USER_AGENT}
                ) as client:
                    html = await enrich_logic.fetch_posting_page(
                        facts.job["url"], client=client, robots=robots)
                extraction = await asyncio.to_thread(enrich_logic.extract_description, html)
                origin = "page"
            except enrich_logic.EnrichBlocked as blocked:
                raise BlockStage(blocked.code, self._enrichment_blocked(input, blocked.code)) from None

        async def commit(conn, version: int) -> None:
            await materials.record_enriched(conn, input.job_id, materials.EnrichmentRow(
                current_status="enriched", description_text=extraction.text,
                description_html=extraction.html, word_count=extraction.word_count,
                confidence=extraction.confidence, low_confidence_reason=extraction.reason,
                origin=origin, blocked_reason=None,
            ), _run_ids(input.run))

        return commit

    def _enrichment_blocked(self, input: StageInput, code: str):
        async def commit(conn) -> None:
            await materials.record_enrichment_blocked(conn, input.job_id, code,
                                                      _run_ids(input.run))

        return commit

    # -- Score -----------------------------------------------------------------------------

    @activity.defn(name="score_job")
    async def score_job(self, input: StageInput) -> StageOutcome:
        return await self._run_stage(input, lambda facts: self._score(input, facts))

    async def _score(self, input: StageInput, facts: JobFacts) -> Commit:
        from backend.pipeline import score as score_logic

        provider = facts.provider
        today = date.today()
        if provider.is_offline:
            result = score_logic.offline_score(facts.profile, facts.job_text(), today=today)
        else:
            ledger = await score_logic.model_ledger(_completer(provider), facts.profile,
                                                    facts.job_text(), today=today)
            result = score_logic.result_from_ledger(ledger)
        ledger_json = result.ledger.model_dump(mode="json", by_alias=True) if result.ledger else None

        async def commit(conn, version: int) -> None:
            await materials.record_score(
                conn, input.job_id, _run_ids(input.run), version=version, score=result.score,
                rationale=result.rationale, matched=result.matched, missing=result.missing,
                provider=provider.name, model=provider.model,
                profile_revision=facts.profile_revision, ledger=ledger_json)

        return commit

    # -- Tailor ----------------------------------------------------------------------------

    @activity.defn(name="tailor_resume")
    async def tailor_resume(self, input: StageInput) -> StageOutcome:
        return await self._run_stage(input, lambda facts: self._tailor(input, facts))

    async def _tailor(self, input: StageInput, facts: JobFacts) -> Commit:
        from backend.pipeline import job_materials
        from backend.pipeline import tailor as tailor_logic

        provider = facts.provider
        job, fit = facts.job_text(), facts.score_result()
        async with self._rejections_recorded(input.job_id, "resume"):
            if provider.is_offline:
                resume = job_materials.offline_resume(facts.profile, job, fit)
            else:
                resume = job_materials.gated_resume(await tailor_logic.model_tailor(
                    _completer(provider), facts.profile, job, fit), facts.profile, fit, job)
        return self._material_commit(input, facts, provider, "resume", resume.model_dump(
            mode="json", by_alias=True))

    @asynccontextmanager
    async def _rejections_recorded(self, job_id: str, kind: str):
        """A writer's output the truthfulness gate refused: the claim is kept for the job
        detail ("it claimed ...") before the typed, non-retried failure goes on."""
        from backend.pipeline import truth

        try:
            yield
        except truth.UnsupportedClaim as rejected:
            async with self._db.transaction() as conn:
                await materials.record_rejection(conn, job_id, kind=kind, error_code=rejected.code,
                                                 claim=rejected.claim)
            raise

    def _material_commit(self, input, facts, provider, kind, content) -> Commit:
        async def commit(conn, version: int) -> None:
            await materials.record_material(
                conn, input.job_id, _run_ids(input.run), kind=kind, generation=version,
                content=content, provider=provider.name, model=provider.model,
                profile_revision=facts.profile_revision)

        return commit

    # -- Cover -----------------------------------------------------------------------------

    @activity.defn(name="write_cover_letter")
    async def write_cover_letter(self, input: StageInput) -> StageOutcome:
        return await self._run_stage(input, lambda facts: self._cover(input, facts))

    async def _cover(self, input: StageInput, facts: JobFacts) -> Commit:
        from backend.pipeline import cover as cover_logic
        from backend.pipeline import job_materials

        stored = facts.stored["resume"]
        if stored is None:
            raise ApplicationError("no tailored resume", type="missing_input", non_retryable=True)
        resume = ResumeDoc.model_validate(stored[1])
        provider = facts.provider
        job, fit, today = facts.job_text(), facts.score_result(), date.today()
        async with self._rejections_recorded(input.job_id, "cover_letter"):
            if provider.is_offline:
                letter = job_materials.offline_letter(facts.profile, job, fit, resume, today)
            else:
                letter = job_materials.gated_letter(await cover_logic.model_cover(
                    _completer(provider), facts.profile, job, fit, resume, today,
                    letter_language=facts.settings.materials.letter_language),
                    facts.profile, fit, job, today=today)
        return self._material_commit(input, facts, provider, "cover_letter",
                                     letter.model_dump(mode="json", by_alias=True))

    # -- PDF -------------------------------------------------------------------------------

    @activity.defn(name="render_pdfs")
    async def render_pdfs(self, input: StageInput) -> StageOutcome:
        return await self._run_stage(input, lambda facts: self._pdf(input, facts))

    async def _pdf(self, input: StageInput, facts: JobFacts) -> Commit:
        resume, letter = facts.stored["resume"], facts.stored["cover_letter"]
        if resume is None or letter is None:
            raise ApplicationError("materials missing", type="missing_input", non_retryable=True)
        generation = facts.rows["pdf"].result_version + 1  # the claim leaves it as it was
        # Each generation in its own folder: the files keep names a person can use.
        folder = self._paths.app_dir / "artifacts" / input.job_id / f"g{generation}"
        folder.mkdir(parents=True, exist_ok=True)
        # Typesetting, the Word files and reading the résumé back are CPU work: off the loop.
        from backend.pipeline import job_materials

        materials_settings = facts.settings.materials
        choices = job_materials.render_choices(facts.profile, facts.job["company"],
                                               template=materials_settings.template,
                                               paper=materials_settings.paper)
        rendered = await asyncio.to_thread(
            job_materials.render_both, ResumeDoc.model_validate(resume[1]),
            CoverLetterDoc.model_validate(letter[1]), folder, choices)

        async def commit(conn, version: int) -> None:
            for file in rendered:
                info = file.info
                await materials.record_artifact(
                    conn, input.job_id, _run_ids(input.run), kind=file.kind, generation=version,
                    path=str(info.path), size=info.bytes, pages=info.pages, sha256=info.sha256,
                    ats_check=file.ats_check)

        return commit

    # -- failure reconciliation and lifecycle ----------------------------------------------

    @activity.defn(name="reconcile_stage_failure")
    async def reconcile_stage_failure(self, input: StageFailureInput) -> str:
        """The mandatory step after a stage activity gave up (exhausted or non-retryable)."""
        owner = stages.Owner(input.run.workflow_id, input.run.run_id, input.attempts)
        async with self._db.transaction() as conn:
            status = await stages.reconcile_failure(
                conn, input.job_id, input.stage, owner,
                error_code=input.error_code, retryable=input.retryable)
            if status in ("failed", "exhausted"):
                await materials.record_stage_failure_detail(
                    conn, input.job_id, input.stage, input.error_code, _run_ids(input.run))
        return status

    @activity.defn(name="record_workflow_lifecycle")
    async def record_workflow_lifecycle(self, input: WorkflowLifecycleInput) -> None:
        async def cancel_owned_stages(conn, input: WorkflowLifecycleInput) -> None:
            if input.outcome == "canceled" and input.job_id:
                await stages.cancel_owned(conn, input.job_id,
                                          stages.Owner(input.run.workflow_id, input.run.run_id, 0))
        await record_run_lifecycle(self._db, input, cancel_owned_stages)


# The stored materials each stage builds on: Cover writes from the tailored résumé, PDF
# renders both.
STORED_INPUTS: dict[str, tuple[str, ...]] = {"cover": ("resume",), "pdf": ("resume", "cover_letter")}


async def _stored_inputs(conn, job_id: str, stage: str) -> dict[str, tuple[int, dict] | None]:
    return {kind: await materials.latest_material(conn, job_id, kind)
            for kind in STORED_INPUTS.get(stage, ())}


def _completer(provider):
    """The writers' ``complete(system, user) -> text`` over a (metered) provider."""
    async def complete(system: str, user: str) -> str:
        return (await provider.complete(system=system, user=user, json_mode=True)).text

    return complete
