-- Provider diagnostics: broad-board traversal progress and LLM provider failures.
--
-- discovery_provider_progress keeps the LATEST normalized traversal observation of one
-- broad-board (jobspy) family in one exact Discover execution. The worker stamps the row
-- with the exact workflow id AND run id it reads from Temporal; the operations reader
-- accepts a row only for the selected execution. A newer observation replaces the row only
-- with a higher (activity attempt, sequence): a stale attempt's late write changes nothing.
-- Only bounded facts: no cursor, checkpoint, resume token, raw provider output or message.

CREATE TABLE discovery_provider_progress (
    tenant_id             TEXT NOT NULL,
    discover_workflow_id  TEXT NOT NULL,
    discover_run_id       TEXT NOT NULL,
    family                TEXT NOT NULL,                 -- the source id
    attempt               INTEGER NOT NULL,              -- Temporal activity attempt
    sequence              INTEGER NOT NULL,              -- monotonic within one attempt
    provider              TEXT NOT NULL,                 -- the board / site
    phase                 TEXT NOT NULL
        CHECK (phase IN ('searching', 'paging', 'unit_completed', 'unit_failed')),
    unit                  TEXT NOT NULL CHECK (unit IN ('page', 'search')),
    completed_units       INTEGER NOT NULL CHECK (completed_units >= 0),
    total_units           INTEGER CHECK (total_units IS NULL OR total_units >= 0),
    raw_items_seen        INTEGER CHECK (raw_items_seen IS NULL OR raw_items_seen >= 0),
    emitted_jobs          INTEGER NOT NULL CHECK (emitted_jobs >= 0),
    continuation          TEXT NOT NULL CHECK (continuation IN ('more', 'exhausted', 'unknown')),
    observed_at           TEXT NOT NULL,
    PRIMARY KEY (tenant_id, discover_workflow_id, discover_run_id, family)
);

-- llm_provider_failures: one row per failed LLM call, with bounded fields only (provider,
-- model, operation = the activity kind, category = the typed error code, the provider's
-- safe error type, HTTP status, retryability, the activity attempt and the exact
-- workflow / run / activity ids that correlate it). Never a message, prompt or body.

CREATE TABLE llm_provider_failures (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id        TEXT NOT NULL,
    workflow_id      TEXT,
    run_id           TEXT,
    activity_id      TEXT,
    attempt          INTEGER,
    provider         TEXT NOT NULL,
    model            TEXT NOT NULL,
    operation        TEXT NOT NULL,
    category         TEXT NOT NULL,
    error_type       TEXT,
    http_status      INTEGER,
    retryable        INTEGER NOT NULL CHECK (retryable IN (0, 1)),
    occurred_at      TEXT NOT NULL
);

CREATE INDEX llm_provider_failures_run ON llm_provider_failures (tenant_id, run_id, id);

-- Operations-snapshot reads that must not scan every stage row (bench/operations_scale.py):
-- pipeline-eta-v1's 50 most recent successful samples per stage, and the newest dispatch.
CREATE INDEX job_stage_states_samples
    ON job_stage_states (tenant_id, stage, status, finished_at);
CREATE INDEX job_stage_states_started ON job_stage_states (tenant_id, started_at);

-- Incremental per-(stage, status) totals of job_stage_states and the job count, kept in
-- the same transaction as every canonical write by triggers. The operations snapshot
-- derives global_outside_execution as global totals minus the selected execution's two
-- cohorts (each bounded by the execution's size), so it never groups every stage row.
-- Sole keeper of job_stage_status_counts: the triggers of this file (no Python writes it;
-- tests/unit/test_trigger_keepers.py).
CREATE TABLE job_stage_status_counts (
    tenant_id  TEXT NOT NULL,
    stage      TEXT NOT NULL,
    status     TEXT NOT NULL,
    n          INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, stage, status)
);
INSERT INTO job_stage_status_counts (tenant_id, stage, status, n)
    SELECT tenant_id, stage, status, COUNT(*) FROM job_stage_states
    GROUP BY tenant_id, stage, status;

CREATE TRIGGER job_stage_status_counts_insert AFTER INSERT ON job_stage_states
BEGIN
    INSERT INTO job_stage_status_counts (tenant_id, stage, status, n)
        VALUES (new.tenant_id, new.stage, new.status, 1)
        ON CONFLICT (tenant_id, stage, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER job_stage_status_counts_update AFTER UPDATE OF tenant_id, stage, status
    ON job_stage_states
    WHEN old.tenant_id IS NOT new.tenant_id OR old.stage IS NOT new.stage
        OR old.status IS NOT new.status
BEGIN
    UPDATE job_stage_status_counts SET n = n - 1
        WHERE tenant_id = old.tenant_id AND stage = old.stage AND status = old.status;
    INSERT INTO job_stage_status_counts (tenant_id, stage, status, n)
        VALUES (new.tenant_id, new.stage, new.status, 1)
        ON CONFLICT (tenant_id, stage, status) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER job_stage_status_counts_delete AFTER DELETE ON job_stage_states
BEGIN
    UPDATE job_stage_status_counts SET n = n - 1
        WHERE tenant_id = old.tenant_id AND stage = old.stage AND status = old.status;
END;

-- Sole keeper of job_counts: the triggers of this file (no Python writes it).
CREATE TABLE job_counts (
    tenant_id  TEXT PRIMARY KEY,
    n          INTEGER NOT NULL
);
INSERT INTO job_counts (tenant_id, n) SELECT tenant_id, COUNT(*) FROM jobs GROUP BY tenant_id;

CREATE TRIGGER job_counts_insert AFTER INSERT ON jobs
BEGIN
    INSERT INTO job_counts (tenant_id, n) VALUES (new.tenant_id, 1)
        ON CONFLICT (tenant_id) DO UPDATE SET n = n + 1;
END;

CREATE TRIGGER job_counts_delete AFTER DELETE ON jobs
BEGIN
    UPDATE job_counts SET n = n - 1 WHERE tenant_id = old.tenant_id;
END;

-- Global stale scores: only scores computed against an older profile revision are read.
CREATE INDEX job_scores_revision ON job_scores (tenant_id, profile_revision);
