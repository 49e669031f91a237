-- The runtime spine: the append-only event log, jobs and their source observations,
-- discovery runs and worker heartbeats.

CREATE TABLE job_events (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,  -- the SSE event id
    tenant_id     TEXT NOT NULL,
    type          TEXT NOT NULL,
    job_id        TEXT,
    workflow_id   TEXT,
    run_id        TEXT,
    payload_json  TEXT NOT NULL,                      -- camelCase JSON
    dedupe_key    TEXT,                               -- makes activity retries idempotent
    created_at    TEXT NOT NULL
);
CREATE UNIQUE INDEX job_events_dedupe ON job_events (tenant_id, dedupe_key)
    WHERE dedupe_key IS NOT NULL;
CREATE INDEX job_events_tenant_id ON job_events (tenant_id, id);
CREATE INDEX job_events_job ON job_events (tenant_id, job_id, id);
CREATE INDEX job_events_workflow ON job_events (tenant_id, workflow_id, id);

CREATE TABLE jobs (
    job_id           TEXT PRIMARY KEY,
    tenant_id        TEXT NOT NULL,
    canonical_url    TEXT NOT NULL,
    url              TEXT NOT NULL,
    apply_url        TEXT,
    title            TEXT NOT NULL,
    company          TEXT NOT NULL,
    location         TEXT,
    remote           TEXT,
    salary_min       INTEGER,
    salary_max       INTEGER,
    salary_currency  TEXT,
    salary_period    TEXT,
    employment_type  TEXT,
    posted_at        TEXT,
    description_html TEXT,
    tags_json        TEXT NOT NULL DEFAULT '[]',
    first_source     TEXT NOT NULL,
    first_seen_at    TEXT NOT NULL,
    last_seen_at     TEXT NOT NULL,
    UNIQUE (tenant_id, canonical_url)
);
CREATE INDEX jobs_tenant_seen ON jobs (tenant_id, first_seen_at);

CREATE TABLE discovery_runs (
    discover_run_id    TEXT PRIMARY KEY,               -- exact Temporal run id
    tenant_id          TEXT NOT NULL,
    discover_workflow_id TEXT NOT NULL,
    status             TEXT NOT NULL,                   -- running | completed | completed_with_issues | failed | canceled
    families_json      TEXT NOT NULL,
    progress_current   INTEGER NOT NULL DEFAULT 0,
    progress_total     INTEGER NOT NULL,
    progress_json      TEXT NOT NULL DEFAULT '{}',
    jobs_new           INTEGER NOT NULL DEFAULT 0,
    jobs_observed      INTEGER NOT NULL DEFAULT 0,
    error_code         TEXT,
    started_at         TEXT NOT NULL,
    finished_at        TEXT
);
CREATE INDEX discovery_runs_started ON discovery_runs (tenant_id, started_at);

CREATE TABLE source_observations (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id        TEXT NOT NULL,
    job_id           TEXT NOT NULL REFERENCES jobs (job_id),
    source_family    TEXT NOT NULL,
    source_key       TEXT NOT NULL,                     -- the posting's id at its source
    discover_run_id  TEXT NOT NULL REFERENCES discovery_runs (discover_run_id),
    first_observation INTEGER NOT NULL DEFAULT 0,       -- 1 when this observation created the job
    observed_at      TEXT NOT NULL,
    UNIQUE (tenant_id, discover_run_id, source_family, source_key)
);
CREATE INDEX source_observations_job ON source_observations (tenant_id, job_id);

CREATE TABLE worker_runtime_heartbeats (
    worker_id         TEXT PRIMARY KEY,
    tenant_id         TEXT NOT NULL,
    pid               INTEGER NOT NULL,
    hostname          TEXT NOT NULL,
    app_dir           TEXT NOT NULL,
    database_path     TEXT NOT NULL,
    task_queue        TEXT NOT NULL,
    namespace         TEXT NOT NULL,
    configured_slots  INTEGER NOT NULL,
    active_slots      INTEGER NOT NULL,
    state             TEXT NOT NULL,                    -- running | stopped
    started_at        TEXT NOT NULL,
    heartbeat_at      TEXT NOT NULL
);
CREATE INDEX worker_heartbeats_fresh ON worker_runtime_heartbeats (database_path, heartbeat_at);
