-- Budget reservations: a spendful workflow is admitted only if its estimated cost fits
-- under the ceiling next to today's ledger and every other admitted, unfinished run.
-- Without this, a burst of concurrent workflows would all pass the preflight at once.

CREATE TABLE llm_spend_reservations (
    tenant_id           TEXT NOT NULL,
    run_id              TEXT NOT NULL,             -- exact Temporal run id
    workflow_id         TEXT NOT NULL,
    day                 TEXT NOT NULL,             -- UTC spend day
    reserved_micro_usd  INTEGER NOT NULL,
    created_at          TEXT NOT NULL,
    released_at         TEXT,
    PRIMARY KEY (tenant_id, run_id)
);
CREATE INDEX llm_spend_reservations_open ON llm_spend_reservations (tenant_id, day, released_at);
