-- The workflow-run read model: one row per exact Temporal run, folded from the Workflow*
-- lifecycle events by backend/projections/workflow_runs.py, plus the watermarks every
-- projection builder keeps. Both are rebuildable from job_events at any time.

CREATE TABLE workflow_run_projections (
    tenant_id            TEXT NOT NULL,
    run_id               TEXT NOT NULL,                -- exact Temporal run id
    workflow_id          TEXT NOT NULL,
    workflow_type        TEXT NOT NULL,
    status               TEXT NOT NULL,                -- running | completed | failed | canceled
    job_id               TEXT,                         -- the one jobId the input names, if any
    started_at           TEXT,                         -- WorkflowStarted.occurredAt
    closed_at            TEXT,                         -- the winning terminal event's occurredAt
    duration_ms          INTEGER,
    error_code           TEXT,
    input_summary_json   TEXT NOT NULL DEFAULT '{}',
    cancel_requested_at  TEXT,
    last_event_id        INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, run_id)
);
CREATE INDEX workflow_run_projections_started
    ON workflow_run_projections (tenant_id, started_at);
CREATE INDEX workflow_run_projections_type
    ON workflow_run_projections (tenant_id, workflow_type, started_at);
CREATE INDEX workflow_run_projections_status
    ON workflow_run_projections (tenant_id, status, started_at);

CREATE TABLE projection_watermarks (
    name           TEXT PRIMARY KEY,
    last_event_id  INTEGER NOT NULL
);

-- Event-log lookups the builder and the run/activity routes need: events by type (the
-- builder's page scan and its lost-rows check, the activity type filter) and by exact run
-- (a run's timeline).
CREATE INDEX job_events_type ON job_events (tenant_id, type, id, run_id);
CREATE INDEX job_events_run ON job_events (tenant_id, run_id, id);
