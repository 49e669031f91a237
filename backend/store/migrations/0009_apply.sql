-- Apply: approvals, submit intents and the apply read model. The apply lifecycle itself
-- lives in job_events (Apply* events); apply_run_projections is folded from them.

CREATE TABLE apply_approvals (
    tenant_id        TEXT NOT NULL,
    job_id           TEXT NOT NULL REFERENCES jobs (job_id),
    approved_at      TEXT NOT NULL,
    recipient        TEXT,                      -- exact recipient for email targets
    attachments_json TEXT NOT NULL DEFAULT '[]',-- exact attachment paths approved
    PRIMARY KEY (tenant_id, job_id)
);

-- At most one send per job, ever: the intent row is committed before the SMTP
-- conversation starts and is never deleted. A retry that finds 'sending' does not send.
CREATE TABLE apply_submit_intents (
    tenant_id        TEXT NOT NULL,
    job_id           TEXT NOT NULL REFERENCES jobs (job_id),
    intent_key       TEXT NOT NULL UNIQUE,
    workflow_id      TEXT NOT NULL,
    run_id           TEXT NOT NULL,
    channel          TEXT NOT NULL,             -- email
    recipient        TEXT NOT NULL,
    attachments_json TEXT NOT NULL,
    status           TEXT NOT NULL,             -- sending | sent
    message_id       TEXT,
    created_at       TEXT NOT NULL,
    sent_at          TEXT,
    PRIMARY KEY (tenant_id, job_id)
);

CREATE TABLE apply_run_projections (
    tenant_id        TEXT NOT NULL,
    job_id           TEXT NOT NULL,
    status           TEXT NOT NULL,             -- awaiting_approval | approved | in_progress |
                                                -- awaiting_manual_completion | applied |
                                                -- rejected | failed
    target_kind      TEXT,
    packet_json      TEXT,
    approval_json    TEXT,
    failure_code     TEXT,
    park_reason      TEXT,
    dry_run          INTEGER NOT NULL DEFAULT 0,
    workflow_id      TEXT,                      -- the run that owns a live attempt
    run_id           TEXT,
    updated_at       TEXT NOT NULL,
    last_event_id    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant_id, job_id)
);
CREATE INDEX apply_run_projections_status ON apply_run_projections (tenant_id, status);
