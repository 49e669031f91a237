-- Contact & Outreach: supervised contact research (ContactResearchWorkflow).
-- Canonical rows (written by the API's request and the workflow's activities, each with
-- its events in the same transaction) and two read models folded from the events by
-- backend/projections/contacts.py (rebuildable from job_events at any time).

-- One research run the user asked for, for one job. seq numbers a job's tasks (1, 2, ...)
-- and names the workflow: contacts-{jobId}-{seq}.
CREATE TABLE contact_research_tasks (
    tenant_id            TEXT NOT NULL,
    task_id              TEXT NOT NULL,
    job_id               TEXT NOT NULL,
    seq                  INTEGER NOT NULL,
    workflow_id          TEXT NOT NULL,
    run_id               TEXT,                         -- the Temporal run that owns it
    status               TEXT NOT NULL,                -- queued | running | completed | failed | canceled
    requested_at         TEXT NOT NULL,
    started_at           TEXT,
    finished_at          TEXT,
    source_attempts_json TEXT NOT NULL DEFAULT '[]',   -- [SourceAttempt]: what was read or fetched
    extracted_at         TEXT,                         -- candidates committed (a retry reuses them)
    candidate_count      INTEGER,
    provider             TEXT,
    model                TEXT,
    failure_code         TEXT,
    PRIMARY KEY (tenant_id, task_id),
    UNIQUE (tenant_id, job_id, seq)
);
CREATE INDEX contact_research_tasks_job ON contact_research_tasks (tenant_id, job_id, status);

-- One person (or named inbox) per company, across jobs and research runs.
CREATE TABLE contacts (
    tenant_id      TEXT NOT NULL,
    contact_id     TEXT NOT NULL,
    company        TEXT NOT NULL,
    name           TEXT,
    email          TEXT,
    first_seen_at  TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    PRIMARY KEY (tenant_id, contact_id)
);

-- Every fact seen about a contact, with the task that saw it.
CREATE TABLE contact_attributes (
    tenant_id    TEXT NOT NULL,
    contact_id   TEXT NOT NULL,
    attribute    TEXT NOT NULL,                        -- title | email | source_url
    value        TEXT NOT NULL,
    task_id      TEXT NOT NULL,
    observed_at  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, contact_id, attribute, value)
);

-- What one task found: the candidate as extracted, linked to its contact.
CREATE TABLE contact_candidates (
    tenant_id     TEXT NOT NULL,
    candidate_id  TEXT NOT NULL,
    task_id       TEXT NOT NULL,
    job_id        TEXT NOT NULL,
    contact_id    TEXT NOT NULL,
    ordinal       INTEGER NOT NULL,
    name          TEXT,
    title         TEXT,
    email         TEXT,
    source_url    TEXT,
    confidence    REAL NOT NULL,
    evidence      TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (tenant_id, candidate_id),
    UNIQUE (tenant_id, task_id, ordinal)
);
CREATE INDEX contact_candidates_job ON contact_candidates (tenant_id, job_id);

-- Read model: one row per (job, contact), the newest candidate facts for it.
CREATE TABLE contact_projections (
    tenant_id      TEXT NOT NULL,
    job_id         TEXT NOT NULL,
    contact_id     TEXT NOT NULL,
    candidate_id   TEXT NOT NULL,
    task_id        TEXT NOT NULL,
    name           TEXT,
    title          TEXT,
    email          TEXT,
    source_url     TEXT,
    confidence     REAL NOT NULL,
    evidence       TEXT NOT NULL,
    found_at       TEXT NOT NULL,
    last_event_id  INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, job_id, contact_id)
);

-- Read model: one row per research task.
CREATE TABLE contact_research_task_projections (
    tenant_id            TEXT NOT NULL,
    task_id              TEXT NOT NULL,
    job_id               TEXT NOT NULL,
    workflow_id          TEXT NOT NULL,
    run_id               TEXT,
    status               TEXT NOT NULL,
    requested_at         TEXT,
    started_at           TEXT,
    finished_at          TEXT,
    source_attempts_json TEXT NOT NULL DEFAULT '[]',
    candidate_count      INTEGER,
    provider             TEXT,
    model                TEXT,
    failure_code         TEXT,
    last_event_id        INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, task_id)
);
CREATE INDEX contact_research_task_projections_job
    ON contact_research_task_projections (tenant_id, job_id, requested_at);
