-- The preparation pipeline: the candidate profile, per-job stage states (the source of
-- truth for stages), and each stage's canonical results.

CREATE TABLE candidate_profiles (
    tenant_id     TEXT PRIMARY KEY,
    revision      INTEGER NOT NULL,
    profile_json  TEXT NOT NULL,
    updated_at    TEXT NOT NULL
);

ALTER TABLE jobs ADD COLUMN user_status TEXT;           -- NULL | applied | skipped

CREATE TABLE job_stage_states (
    tenant_id          TEXT NOT NULL,
    job_id             TEXT NOT NULL REFERENCES jobs (job_id),
    stage              TEXT NOT NULL,                  -- enrich | score | tailor | cover | pdf
    status             TEXT NOT NULL,                  -- pending | queued | running | succeeded |
                                                       -- failed | exhausted | blocked | skipped | canceled
    attempt            INTEGER NOT NULL DEFAULT 0,
    owner_workflow_id  TEXT,
    owner_run_id       TEXT,                           -- exact Temporal run that owns a running write
    baseline_version   INTEGER,                        -- result version before the owned write
    result_version     INTEGER NOT NULL DEFAULT 0,
    error_code         TEXT,
    retryable          INTEGER,
    blocked_reason     TEXT,
    queued_at          TEXT,
    started_at         TEXT,
    finished_at        TEXT,
    duration_ms        INTEGER,
    updated_at         TEXT NOT NULL,
    PRIMARY KEY (tenant_id, job_id, stage)
);
CREATE INDEX job_stage_states_status ON job_stage_states (tenant_id, stage, status);

CREATE TABLE job_enrichments (
    job_id                 TEXT PRIMARY KEY REFERENCES jobs (job_id),
    tenant_id              TEXT NOT NULL,
    current_status         TEXT NOT NULL,              -- enriched | blocked | failed
    description_text       TEXT,
    description_html       TEXT,
    word_count             INTEGER,
    confidence             TEXT,                       -- high | low
    low_confidence_reason  TEXT,
    origin                 TEXT,                       -- source | page
    blocked_reason         TEXT,
    updated_at             TEXT NOT NULL
);

CREATE TABLE job_scores (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id         TEXT NOT NULL,
    job_id            TEXT NOT NULL REFERENCES jobs (job_id),
    version           INTEGER NOT NULL,
    score             INTEGER NOT NULL CHECK (score BETWEEN 0 AND 100),
    rationale         TEXT NOT NULL,
    matched_json      TEXT NOT NULL DEFAULT '[]',
    missing_json      TEXT NOT NULL DEFAULT '[]',
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    profile_revision  INTEGER NOT NULL,
    workflow_id       TEXT,
    run_id            TEXT,
    created_at        TEXT NOT NULL,
    UNIQUE (job_id, version)
);

CREATE TABLE job_materials (
    id                INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id         TEXT NOT NULL,
    job_id            TEXT NOT NULL REFERENCES jobs (job_id),
    kind              TEXT NOT NULL,                   -- resume | cover_letter
    generation        INTEGER NOT NULL,
    content_json      TEXT NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    profile_revision  INTEGER NOT NULL,
    workflow_id       TEXT,
    run_id            TEXT,
    created_at        TEXT NOT NULL,
    UNIQUE (job_id, kind, generation)
);

CREATE TABLE job_artifacts (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id    TEXT NOT NULL,
    job_id       TEXT NOT NULL REFERENCES jobs (job_id),
    kind         TEXT NOT NULL,                        -- resume_pdf | cover_letter_pdf
    generation   INTEGER NOT NULL,
    path         TEXT NOT NULL,
    bytes        INTEGER NOT NULL,
    pages        INTEGER NOT NULL,
    sha256       TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    UNIQUE (job_id, kind, generation)
);
