-- Operations read model at scale, part two (bench/operations_scale.py): the selected
-- execution's own cohort counts and the workflow-run list no longer grow with the
-- execution's size or the number of runs.

-- Incremental per-(exact Discover execution, cohort, stage, status) totals of
-- job_stage_states, and per-(execution, cohort) job totals, kept by triggers in the same
-- transaction as every canonical write that can change them: a stage row (insert, status
-- change, delete), a membership row (link, cohort promotion, delete) and a job row
-- (insert, delete). A stage row counts for every execution whose lineage holds its job;
-- a member counts as a job only while its job row exists (the readers join jobs).
-- backend/operations/stage_counts.py reads them instead of grouping the cohort's rows;
-- tests/unit/test_operations_cohort_counts.py proves they equal a full recount.
-- Sole keeper of execution_cohort_stage_counts: the triggers of this file, replaced (each
-- dropped first, in the same file) by 0014's. No Python writes it.
-- Sole keeper of execution_cohort_job_counts: the triggers of this file, replaced the same
-- way by 0014's. No Python writes it.
CREATE TABLE execution_cohort_stage_counts (
    tenant_id             TEXT NOT NULL,
    discover_workflow_id  TEXT NOT NULL,
    discover_run_id       TEXT NOT NULL,
    cohort                TEXT NOT NULL,
    stage                 TEXT NOT NULL,
    status                TEXT NOT NULL,
    n                     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
) WITHOUT ROWID;

CREATE TABLE execution_cohort_job_counts (
    tenant_id             TEXT NOT NULL,
    discover_workflow_id  TEXT NOT NULL,
    discover_run_id       TEXT NOT NULL,
    cohort                TEXT NOT NULL,
    n                     INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, discover_workflow_id, discover_run_id, cohort)
) WITHOUT ROWID;

INSERT INTO execution_cohort_stage_counts
        (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
    SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, s.stage,
           s.status, COUNT(*)
    FROM discovery_execution_jobs m JOIN job_stage_states s
        ON s.tenant_id = m.tenant_id AND s.job_id = m.job_id
    GROUP BY 1, 2, 3, 4, 5, 6;

INSERT INTO execution_cohort_job_counts
        (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
    SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, COUNT(*)
    FROM discovery_execution_jobs m JOIN jobs j
        ON j.job_id = m.job_id AND j.tenant_id = m.tenant_id
    GROUP BY 1, 2, 3, 4;

-- Stage rows: +1 / -1 at (every membership of the job, stage, status). A delta row that
-- does not exist yet is inserted with the delta (only ever +1 in a consistent database).
CREATE TRIGGER execution_cohort_counts_stage_insert AFTER INSERT ON job_stage_states
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort,
               new.stage, new.status, 1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = new.tenant_id AND m.job_id = new.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_stage_update
    AFTER UPDATE OF tenant_id, job_id, stage, status ON job_stage_states
    WHEN old.tenant_id IS NOT new.tenant_id OR old.job_id IS NOT new.job_id
        OR old.stage IS NOT new.stage OR old.status IS NOT new.status
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort,
               old.stage, old.status, -1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = old.tenant_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort,
               new.stage, new.status, 1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = new.tenant_id AND m.job_id = new.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_stage_delete AFTER DELETE ON job_stage_states
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort,
               old.stage, old.status, -1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = old.tenant_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
END;

-- Membership rows: the job's stage rows and (when its job row exists) the job itself move
-- in or out of the execution's cohort. Lineage only ever inserts, promotes the cohort and
-- updates the plan; a plan update does not fire these.
CREATE TRIGGER execution_cohort_counts_member_insert AFTER INSERT ON discovery_execution_jobs
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort,
               s.stage, s.status, COUNT(*)
        FROM job_stage_states s
        WHERE s.tenant_id = new.tenant_id AND s.job_id = new.job_id
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort, 1
        FROM jobs j WHERE j.job_id = new.job_id AND j.tenant_id = new.tenant_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_member_update
    AFTER UPDATE OF tenant_id, discover_workflow_id, discover_run_id, job_id, cohort
    ON discovery_execution_jobs
    WHEN old.tenant_id IS NOT new.tenant_id
        OR old.discover_workflow_id IS NOT new.discover_workflow_id
        OR old.discover_run_id IS NOT new.discover_run_id
        OR old.job_id IS NOT new.job_id OR old.cohort IS NOT new.cohort
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT old.tenant_id, old.discover_workflow_id, old.discover_run_id, old.cohort,
               s.stage, s.status, -COUNT(*)
        FROM job_stage_states s
        WHERE s.tenant_id = old.tenant_id AND s.job_id = old.job_id
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT old.tenant_id, old.discover_workflow_id, old.discover_run_id, old.cohort, -1
        FROM jobs j WHERE j.job_id = old.job_id AND j.tenant_id = old.tenant_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort,
               s.stage, s.status, COUNT(*)
        FROM job_stage_states s
        WHERE s.tenant_id = new.tenant_id AND s.job_id = new.job_id
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort, 1
        FROM jobs j WHERE j.job_id = new.job_id AND j.tenant_id = new.tenant_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_member_delete AFTER DELETE ON discovery_execution_jobs
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT old.tenant_id, old.discover_workflow_id, old.discover_run_id, old.cohort,
               s.stage, s.status, -COUNT(*)
        FROM job_stage_states s
        WHERE s.tenant_id = old.tenant_id AND s.job_id = old.job_id
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT old.tenant_id, old.discover_workflow_id, old.discover_run_id, old.cohort, -1
        FROM jobs j WHERE j.job_id = old.job_id AND j.tenant_id = old.tenant_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

-- Job rows: a member counts as a job of its cohort only while the job row exists.
CREATE TRIGGER execution_cohort_counts_job_insert AFTER INSERT ON jobs
BEGIN
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, 1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = new.tenant_id AND m.job_id = new.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_job_update AFTER UPDATE OF job_id, tenant_id ON jobs
    WHEN old.job_id IS NOT new.job_id OR old.tenant_id IS NOT new.tenant_id
BEGIN
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, -1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = old.tenant_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, 1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = new.tenant_id AND m.job_id = new.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_job_delete AFTER DELETE ON jobs
BEGIN
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, -1
        FROM discovery_execution_jobs m
        WHERE m.tenant_id = old.tenant_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

-- The workflow-run list (backend/api/routers/workflow_runs.py): a descending sort is
-- written "key DESC, run_id DESC" (NULL keys already sort last that way), so an index
-- ending in (key, run_id) serves the page in order instead of sorting every run; these
-- cover the default startedAt sort unfiltered, by status and by workflow type (and the
-- other two filters through their prefix), and the closedAt / durationMs sorts
-- unfiltered. They replace 0006's (..., started_at) indexes.
DROP INDEX IF EXISTS workflow_run_projections_started;
DROP INDEX IF EXISTS workflow_run_projections_type;
DROP INDEX IF EXISTS workflow_run_projections_status;
CREATE INDEX workflow_run_projections_started
    ON workflow_run_projections (tenant_id, started_at, run_id);
CREATE INDEX workflow_run_projections_type
    ON workflow_run_projections (tenant_id, workflow_type, started_at, run_id);
CREATE INDEX workflow_run_projections_status
    ON workflow_run_projections (tenant_id, status, started_at, run_id);
CREATE INDEX workflow_run_projections_closed
    ON workflow_run_projections (tenant_id, closed_at, run_id);
CREATE INDEX workflow_run_projections_duration
    ON workflow_run_projections (tenant_id, duration_ms, run_id);
-- Both filters at once: the exact total and any sort key read from this index alone.
CREATE INDEX workflow_run_projections_type_status
    ON workflow_run_projections (tenant_id, workflow_type, status, started_at, closed_at,
                                 duration_ms, run_id);
