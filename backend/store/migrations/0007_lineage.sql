-- Immutable execution lineage for the operations read model ("Pipeline Operations
-- Snapshot"): which jobs one exact Discover execution owns and what it planned for them,
-- the attempt-aware pipeline-step projection folded from the PipelineStep* events, and
-- the per-execution coverage checkpoint that proves both key sets.

-- One row per (exact Discover execution, JobId). The execution identity is the
-- DiscoveryExecutionRef; the run id is required because discover-local is reused.
CREATE TABLE discovery_execution_jobs (
    tenant_id                TEXT NOT NULL,
    discover_workflow_id     TEXT NOT NULL,
    discover_run_id          TEXT NOT NULL,              -- exact Temporal run id
    job_id                   TEXT NOT NULL,
    cohort                   TEXT NOT NULL
        CHECK (cohort IN ('observed_this_run', 'existing_backlog')),
    plan_state               TEXT NOT NULL DEFAULT 'pending'
        CHECK (plan_state IN ('pending', 'failed', 'planned', 'not_eligible')),
    required_steps_json      TEXT,                       -- JSON list of stages; immutable once planned
    preparation_workflow_id  TEXT,                       -- prep-{jobId} when planned
    not_eligible_reason      TEXT                        -- bounded code (not_eligible / failed)
        CHECK (not_eligible_reason IS NULL OR length(not_eligible_reason) <= 64),
    linked_at                TEXT NOT NULL,
    planned_at               TEXT,
    PRIMARY KEY (tenant_id, discover_workflow_id, discover_run_id, job_id)
);
CREATE INDEX discovery_execution_jobs_run
    ON discovery_execution_jobs (tenant_id, discover_run_id, cohort, plan_state);
CREATE INDEX discovery_execution_jobs_job ON discovery_execution_jobs (tenant_id, job_id);

-- Defence in depth for the lineage rules backend/store/lineage.py enforces: a current
-- observation is never demoted, and a planned row's plan never changes.
CREATE TRIGGER discovery_execution_jobs_no_demotion
BEFORE UPDATE OF cohort ON discovery_execution_jobs
WHEN OLD.cohort = 'observed_this_run' AND NEW.cohort <> 'observed_this_run'
BEGIN
    SELECT RAISE(ABORT, 'lineage_cohort_demotion');
END;

CREATE TRIGGER discovery_execution_jobs_plan_immutable
BEFORE UPDATE ON discovery_execution_jobs
WHEN OLD.plan_state = 'planned' AND (
    NEW.plan_state IS NOT 'planned'
    OR NEW.required_steps_json IS NOT OLD.required_steps_json
    OR NEW.preparation_workflow_id IS NOT OLD.preparation_workflow_id
    OR NEW.planned_at IS NOT OLD.planned_at)
BEGIN
    SELECT RAISE(ABORT, 'lineage_plan_immutable');
END;

-- Execution-owned orchestration steps, folded from PipelineStepQueued / Started /
-- Completed / Failed by backend/projections/pipeline_steps.py (shared "operations"
-- watermark in projection_watermarks). Rebuildable from job_events at any time.
CREATE TABLE pipeline_step_projections (
    tenant_id             TEXT NOT NULL,
    discover_workflow_id  TEXT NOT NULL,
    discover_run_id       TEXT NOT NULL,
    step_kind             TEXT NOT NULL,   -- source_planning | source_family | enrichment_pass |
                                           -- preparation_fanout | existing_backlog_sweep | pdf_render
    item_key              TEXT NOT NULL,   -- planning | family:{id} | fanout:family:{id} | sweep | fanout:sweep
    attempt               INTEGER NOT NULL, -- the Temporal activity attempt this row describes
    status                TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
    queued_at             TEXT,
    started_at            TEXT,
    finished_at           TEXT,
    duration_ms           INTEGER,
    error_code            TEXT,
    retryable             INTEGER,
    counts_json           TEXT NOT NULL DEFAULT '{}',
    last_event_id         INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, discover_run_id, step_kind, item_key)
);
-- Duration samples for pipeline-eta-v1 (successful steps of a kind, newest first).
CREATE INDEX pipeline_step_projections_samples
    ON pipeline_step_projections (tenant_id, step_kind, status, finished_at);

-- The coverage checkpoint (projectionCoverage) of one exact Discover execution.
CREATE TABLE discovery_execution_recoveries (
    tenant_id                TEXT NOT NULL,
    discover_workflow_id     TEXT NOT NULL,
    discover_run_id          TEXT NOT NULL,
    decoder_version          INTEGER NOT NULL,
    mode                     TEXT NOT NULL CHECK (mode IN ('native', 'reconstructed')),
    status                   TEXT NOT NULL
        CHECK (status IN ('ready', 'recovering', 'retrying', 'incomplete')),
    history_event_watermark  INTEGER NOT NULL DEFAULT 0,  -- last audited Temporal history event
    expected_members         INTEGER NOT NULL DEFAULT 0,
    persisted_members        INTEGER NOT NULL DEFAULT 0,
    expected_steps           INTEGER NOT NULL DEFAULT 0,
    persisted_steps          INTEGER NOT NULL DEFAULT 0,
    digest                   TEXT NOT NULL,               -- coverage-digest-v1 (backend/store/coverage.py)
    error_code               TEXT CHECK (error_code IS NULL OR length(error_code) <= 64),
    checked_at               TEXT NOT NULL,
    PRIMARY KEY (tenant_id, discover_workflow_id, discover_run_id)
);
CREATE INDEX discovery_execution_recoveries_status
    ON discovery_execution_recoveries (tenant_id, status);
