-- After applying: the posting as it was when applied (postings disappear), the board's read
-- model folded from the Application* / FollowUp* / Interview* events, and the submit
-- intents of follow-up emails. The data step (backend/store/data_migrations.py) puts every
-- job already applied to on the board.

-- Canonical, written once, at the moment of applying.
CREATE TABLE application_snapshots (
    tenant_id        TEXT NOT NULL,
    job_id           TEXT NOT NULL REFERENCES jobs (job_id),
    applied_at       TEXT NOT NULL,
    via              TEXT NOT NULL,             -- email | apply_review | job_action
    title            TEXT NOT NULL,
    company          TEXT NOT NULL,
    location         TEXT,
    url              TEXT NOT NULL,
    apply_url        TEXT,
    description_html TEXT,
    description_text TEXT,
    source           TEXT NOT NULL,             -- the job's first source family
    fit_score        INTEGER,                   -- the latest score when applied
    resume_template  TEXT,                      -- the résumé template setting when applied
    PRIMARY KEY (tenant_id, job_id)
);

CREATE TABLE application_projections (
    tenant_id        TEXT NOT NULL,
    job_id           TEXT NOT NULL,
    tracked          INTEGER NOT NULL,
    stage            TEXT NOT NULL,
    follow_up_due_on TEXT,                      -- local day of an open next step
    state_json       TEXT NOT NULL,
    updated_at       TEXT NOT NULL,
    last_event_id    INTEGER NOT NULL,
    PRIMARY KEY (tenant_id, job_id)
);
CREATE INDEX application_projections_stage ON application_projections (tenant_id, tracked, stage);

-- At most one send per job and round, ever: committed as 'requested' with the gated text
-- before Temporal is asked, set to 'sending' before the SMTP conversation starts and never
-- deleted after that. A retry that finds 'sending' does not send.
CREATE TABLE follow_up_emails (
    tenant_id        TEXT NOT NULL,
    job_id           TEXT NOT NULL REFERENCES jobs (job_id),
    round            INTEGER NOT NULL,
    intent_key       TEXT NOT NULL UNIQUE,
    workflow_id      TEXT NOT NULL,
    recipient        TEXT NOT NULL,
    subject          TEXT NOT NULL,
    body             TEXT NOT NULL,
    status           TEXT NOT NULL,             -- requested | sending | sent | failed
    run_id           TEXT,
    message_id       TEXT,
    error_code       TEXT,
    created_at       TEXT NOT NULL,
    sent_at          TEXT,
    PRIMARY KEY (tenant_id, job_id, round)
);
