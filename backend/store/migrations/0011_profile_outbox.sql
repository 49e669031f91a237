-- Condition-driven preparation.
--
-- profile_outbox: one row per genuine candidate-profile change, written in the same
-- transaction as the profile revision. A row moves pending -> intended (the durable
-- dispatch-intent fact, committed before the Temporal start) -> started (Temporal accepted
-- or we reattached) -> finished (the continuation closed). A pending row never had an
-- intent, so it provably never started: only such rows are coalesced into a newer one.
CREATE TABLE profile_outbox (
    outbox_id       INTEGER PRIMARY KEY AUTOINCREMENT,
    tenant_id       TEXT NOT NULL,
    revision        INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    status          TEXT NOT NULL DEFAULT 'pending'
                    CHECK (status IN ('pending', 'intended', 'started', 'finished', 'coalesced')),
    workflow_id     TEXT,
    intended_at     TEXT,
    run_id          TEXT,
    started_at      TEXT,
    finished_at     TEXT,
    coalesced_into  INTEGER REFERENCES profile_outbox (outbox_id),
    UNIQUE (tenant_id, revision)
);
CREATE INDEX profile_outbox_open ON profile_outbox (tenant_id, status, outbox_id);

-- A host the user allowed JobCtrl to fetch posting pages from on their behalf, despite a
-- robots.txt refusal for our crawler user agent (the user's own action resolving the
-- ENRICH_ROBOTS_DISALLOWED condition). Host is the URL's lowercase host[:port].
CREATE TABLE enrich_access_grants (
    tenant_id   TEXT NOT NULL,
    host        TEXT NOT NULL,
    code        TEXT NOT NULL,
    granted_at  TEXT NOT NULL,
    PRIMARY KEY (tenant_id, host)
);
