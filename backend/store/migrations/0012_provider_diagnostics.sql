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
