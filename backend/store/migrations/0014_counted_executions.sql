-- Stage writes must not get slower with every Discover. 0013's triggers upserted the
-- cohort counts of EVERY Discover execution a job belongs to, and re-discovering the same
-- board adds a membership per job per run: a stage status change cost O(Discovers that
-- saw the job), inside the single writer's transaction (bench/README.md, "Soak").
--
-- Now the counts are kept only for a bounded set of executions, the ones read as live:
-- counted_executions holds the newest three per tenant (by their Discover's start,
-- discovery_runs.started_at, else their first link), plus any older one whose Discover
-- is not known to have ended (discovery_runs or the run projection shows it running).
-- Correctness never depends on which executions are in the set: an execution in it has
-- exact counts (it enters the set only while it has no member, when all its counts
-- are zero, and every later write is counted), and backend/operations/stage_counts.py
-- derives any other execution's counts with one GROUP BY over its own members.
-- Sole keeper of counted_executions: the member trigger of this file (no Python writes it).
-- Sole keeper of execution_cohort_stage_counts: the triggers of this file, which replace
-- 0013's; each 0013 trigger is dropped below before its successor is created.
-- Sole keeper of execution_cohort_job_counts: the triggers of this file, likewise.
CREATE TABLE counted_executions (
    tenant_id             TEXT NOT NULL,
    discover_workflow_id  TEXT NOT NULL,
    discover_run_id       TEXT NOT NULL,
    started_at            TEXT NOT NULL,      -- the Discover's start, else its first link
    admitted              INTEGER NOT NULL,   -- per-tenant admission order (tie-break)
    retiring              INTEGER NOT NULL DEFAULT 0,  -- only inside the member trigger
    PRIMARY KEY (tenant_id, discover_workflow_id, discover_run_id)
);

-- Backfill: the newest three executions per tenant by start, and any not known to have
-- ended, stay counted (their 0013 rows are exact); every other execution's rows go.
INSERT INTO counted_executions
        (tenant_id, discover_workflow_id, discover_run_id, started_at, admitted)
    SELECT tenant_id, discover_workflow_id, discover_run_id, started_at, admitted FROM (
        SELECT tenant_id, discover_workflow_id, discover_run_id, started_at,
               ROW_NUMBER() OVER (PARTITION BY tenant_id
                                  ORDER BY started_at, discover_run_id) AS admitted,
               ROW_NUMBER() OVER (PARTITION BY tenant_id
                                  ORDER BY started_at DESC, discover_run_id DESC) AS age
        FROM (SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id,
                     COALESCE((SELECT r.started_at FROM discovery_runs r
                               WHERE r.discover_run_id = m.discover_run_id
                                   AND r.tenant_id = m.tenant_id),
                              MIN(m.linked_at)) AS started_at
              FROM discovery_execution_jobs m GROUP BY 1, 2, 3)) e
    WHERE age <= 3
        OR EXISTS (SELECT 1 FROM discovery_runs r WHERE r.discover_run_id = e.discover_run_id
                       AND r.tenant_id = e.tenant_id AND r.status = 'running')
        OR EXISTS (SELECT 1 FROM workflow_run_projections w
                   WHERE w.tenant_id = e.tenant_id AND w.run_id = e.discover_run_id
                       AND w.status = 'running');

DELETE FROM execution_cohort_stage_counts WHERE NOT EXISTS (
    SELECT 1 FROM counted_executions c WHERE c.tenant_id = execution_cohort_stage_counts.tenant_id
        AND c.discover_workflow_id = execution_cohort_stage_counts.discover_workflow_id
        AND c.discover_run_id = execution_cohort_stage_counts.discover_run_id);
DELETE FROM execution_cohort_job_counts WHERE NOT EXISTS (
    SELECT 1 FROM counted_executions c WHERE c.tenant_id = execution_cohort_job_counts.tenant_id
        AND c.discover_workflow_id = execution_cohort_job_counts.discover_workflow_id
        AND c.discover_run_id = execution_cohort_job_counts.discover_run_id);

DROP TRIGGER execution_cohort_counts_stage_insert;
DROP TRIGGER execution_cohort_counts_stage_update;
DROP TRIGGER execution_cohort_counts_stage_delete;
DROP TRIGGER execution_cohort_counts_member_insert;
DROP TRIGGER execution_cohort_counts_member_update;
DROP TRIGGER execution_cohort_counts_member_delete;
DROP TRIGGER execution_cohort_counts_job_insert;
DROP TRIGGER execution_cohort_counts_job_update;
DROP TRIGGER execution_cohort_counts_job_delete;

-- Stage and job rows: the job's memberships in counted executions only, found from the
-- (at most a few) counted executions by membership primary key — O(bound), not O(every
-- Discover that saw the job). CROSS JOIN keeps that loop order.
CREATE TRIGGER execution_cohort_counts_stage_insert AFTER INSERT ON job_stage_states
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort,
               new.stage, new.status, 1
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = new.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = new.job_id
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
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = old.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort,
               new.stage, new.status, 1
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = new.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = new.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_stage_delete AFTER DELETE ON job_stage_states
BEGIN
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort,
               old.stage, old.status, -1
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = old.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
END;

-- Membership insert, in order: (1) an execution with no other member enters the set (its
-- counts are all zero at that moment, so from here on they are exact); (2) executions with
-- three newer ones in the set (by start, then admission) leave it with their count rows,
-- unless their Discover is not known to have ended; (3) the member is counted if its
-- execution is in the set. Statements of a trigger body run in order, in the inserting
-- statement. The set is a handful of rows, so (2) costs a few lookups (the count rows go
-- by primary-key range, only for the retiring executions).
CREATE TRIGGER execution_cohort_counts_member_insert AFTER INSERT ON discovery_execution_jobs
BEGIN
    INSERT OR IGNORE INTO counted_executions
            (tenant_id, discover_workflow_id, discover_run_id, started_at, admitted)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id,
               COALESCE((SELECT r.started_at FROM discovery_runs r
                         WHERE r.discover_run_id = new.discover_run_id
                             AND r.tenant_id = new.tenant_id), new.linked_at),
               COALESCE((SELECT MAX(admitted) FROM counted_executions
                         WHERE tenant_id = new.tenant_id), 0) + 1
        WHERE NOT EXISTS (SELECT 1 FROM discovery_execution_jobs m
                          WHERE m.tenant_id = new.tenant_id
                              AND m.discover_workflow_id = new.discover_workflow_id
                              AND m.discover_run_id = new.discover_run_id
                              AND m.job_id <> new.job_id);
    UPDATE counted_executions SET retiring = 1
        WHERE tenant_id = new.tenant_id
            AND (SELECT COUNT(*) FROM counted_executions x
                 WHERE x.tenant_id = counted_executions.tenant_id
                     AND (x.started_at, x.admitted)
                         > (counted_executions.started_at, counted_executions.admitted)) >= 3
            AND NOT EXISTS (SELECT 1 FROM discovery_runs r
                            WHERE r.discover_run_id = counted_executions.discover_run_id
                                AND r.tenant_id = counted_executions.tenant_id
                                AND r.status = 'running')
            AND NOT EXISTS (SELECT 1 FROM workflow_run_projections w
                            WHERE w.tenant_id = counted_executions.tenant_id
                                AND w.run_id = counted_executions.discover_run_id
                                AND w.status = 'running');
    DELETE FROM execution_cohort_stage_counts
        WHERE (tenant_id, discover_workflow_id, discover_run_id) IN (
            SELECT tenant_id, discover_workflow_id, discover_run_id FROM counted_executions
            WHERE retiring = 1);
    DELETE FROM execution_cohort_job_counts
        WHERE (tenant_id, discover_workflow_id, discover_run_id) IN (
            SELECT tenant_id, discover_workflow_id, discover_run_id FROM counted_executions
            WHERE retiring = 1);
    DELETE FROM counted_executions WHERE retiring = 1;
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort,
               s.stage, s.status, COUNT(*)
        FROM job_stage_states s
        WHERE s.tenant_id = new.tenant_id AND s.job_id = new.job_id
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = new.tenant_id
                            AND c.discover_workflow_id = new.discover_workflow_id
                            AND c.discover_run_id = new.discover_run_id)
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort, 1
        FROM jobs j WHERE j.job_id = new.job_id AND j.tenant_id = new.tenant_id
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = new.tenant_id
                            AND c.discover_workflow_id = new.discover_workflow_id
                            AND c.discover_run_id = new.discover_run_id)
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
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = old.tenant_id
                            AND c.discover_workflow_id = old.discover_workflow_id
                            AND c.discover_run_id = old.discover_run_id)
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT old.tenant_id, old.discover_workflow_id, old.discover_run_id, old.cohort, -1
        FROM jobs j WHERE j.job_id = old.job_id AND j.tenant_id = old.tenant_id
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = old.tenant_id
                            AND c.discover_workflow_id = old.discover_workflow_id
                            AND c.discover_run_id = old.discover_run_id)
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_stage_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort,
               s.stage, s.status, COUNT(*)
        FROM job_stage_states s
        WHERE s.tenant_id = new.tenant_id AND s.job_id = new.job_id
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = new.tenant_id
                            AND c.discover_workflow_id = new.discover_workflow_id
                            AND c.discover_run_id = new.discover_run_id)
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT new.tenant_id, new.discover_workflow_id, new.discover_run_id, new.cohort, 1
        FROM jobs j WHERE j.job_id = new.job_id AND j.tenant_id = new.tenant_id
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = new.tenant_id
                            AND c.discover_workflow_id = new.discover_workflow_id
                            AND c.discover_run_id = new.discover_run_id)
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
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = old.tenant_id
                            AND c.discover_workflow_id = old.discover_workflow_id
                            AND c.discover_run_id = old.discover_run_id)
        GROUP BY s.stage, s.status
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort, stage, status)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT old.tenant_id, old.discover_workflow_id, old.discover_run_id, old.cohort, -1
        FROM jobs j WHERE j.job_id = old.job_id AND j.tenant_id = old.tenant_id
            AND EXISTS (SELECT 1 FROM counted_executions c WHERE c.tenant_id = old.tenant_id
                            AND c.discover_workflow_id = old.discover_workflow_id
                            AND c.discover_run_id = old.discover_run_id)
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_job_insert AFTER INSERT ON jobs
BEGIN
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, 1
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = new.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = new.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_job_update AFTER UPDATE OF job_id, tenant_id ON jobs
    WHEN old.job_id IS NOT new.job_id OR old.tenant_id IS NOT new.tenant_id
BEGIN
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, -1
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = old.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, 1
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = new.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = new.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;

CREATE TRIGGER execution_cohort_counts_job_delete AFTER DELETE ON jobs
BEGIN
    INSERT INTO execution_cohort_job_counts
            (tenant_id, discover_workflow_id, discover_run_id, cohort, n)
        SELECT m.tenant_id, m.discover_workflow_id, m.discover_run_id, m.cohort, -1
        FROM counted_executions c CROSS JOIN discovery_execution_jobs m
        WHERE c.tenant_id = old.tenant_id AND m.tenant_id = c.tenant_id
            AND m.discover_workflow_id = c.discover_workflow_id
            AND m.discover_run_id = c.discover_run_id AND m.job_id = old.job_id
        ON CONFLICT (tenant_id, discover_workflow_id, discover_run_id, cohort)
        DO UPDATE SET n = n + excluded.n;
END;
