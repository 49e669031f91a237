-- Broad-board discovery checkpoints: one row per search unit (query x location x board)
-- of one source family in one Discover run, plus durable receipts for every result the
-- unit accepted or filtered. A retried family activity skips done units, reclaims units
-- an older attempt left running (fenced by owner_attempt) and counts from the receipts.

CREATE TABLE search_units (
    tenant_id          TEXT NOT NULL,
    discover_run_id    TEXT NOT NULL REFERENCES discovery_runs (discover_run_id),
    family             TEXT NOT NULL,                  -- the source id
    unit_key           TEXT NOT NULL,                  -- stable hash of query/location/board
    label              TEXT NOT NULL,                  -- "query · location · board"
    status             TEXT NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'running', 'done', 'failed', 'canceled')),
    owner_attempt      INTEGER,                        -- Temporal activity attempt that owns it
    attempts           INTEGER NOT NULL DEFAULT 0,     -- claims so far
    recoveries         INTEGER NOT NULL DEFAULT 0,     -- claims that took over an older attempt's unit
    accepted_new       INTEGER NOT NULL DEFAULT 0,
    accepted_existing  INTEGER NOT NULL DEFAULT 0,
    filtered           INTEGER NOT NULL DEFAULT 0,
    error_code         TEXT,                           -- bounded code, never a message
    started_at         TEXT,
    finished_at        TEXT,
    PRIMARY KEY (discover_run_id, family, unit_key)
);

CREATE TABLE search_unit_receipts (
    discover_run_id  TEXT NOT NULL,
    family           TEXT NOT NULL,
    unit_key         TEXT NOT NULL,
    receipt_hash     TEXT NOT NULL,                    -- hash only: never a raw provider payload
    kind             TEXT NOT NULL CHECK (kind IN ('accepted', 'filtered')),
    job_id           TEXT REFERENCES jobs (job_id),    -- NULL for filtered results
    is_new           INTEGER,                          -- accepted: 1 when this receipt created the job
    created_at       TEXT NOT NULL,
    PRIMARY KEY (discover_run_id, family, unit_key, receipt_hash),
    FOREIGN KEY (discover_run_id, family, unit_key)
        REFERENCES search_units (discover_run_id, family, unit_key),
    CHECK ((kind = 'accepted') = (job_id IS NOT NULL))
);
CREATE INDEX search_unit_receipts_family ON search_unit_receipts (discover_run_id, family, kind);
